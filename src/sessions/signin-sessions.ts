import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { findLiveSigninSession, type LiveSigninSession } from './session-repository.js';

export type { LiveSigninSession };

/**
 * The hosted pages' sign-in session (API.md section 18) whose browser secret hashes to
 * `browserSecretHash`: the database decides on every request whether it still counts (not
 * ended, not expired, its user active and not deleted); nothing is remembered in memory.
 */
export const liveSigninSession = (db: Kysely<Database>, browserSecretHash: string): Promise<LiveSigninSession | undefined> => findLiveSigninSession(db, browserSecretHash);
