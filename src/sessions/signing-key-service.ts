import type { Kysely } from 'kysely';
import type { Database, SigningKeyRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { findActiveSigningKey, insertSigningKey, lockSigningKeys, retireSigningKey } from './signing-key-repository.js';

// A retiring key verifies tokens until the last one it signed has expired, and a margin.
const RETIREMENT_MARGIN_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** On first start: the first key, created once however many instances start together. */
export function ensureActiveSigningKey(db: Kysely<Database>): Promise<void> {
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    if (!(await findActiveSigningKey(trx))) await insertSigningKey(trx);
  });
}

/** A new active key; the old one keeps verifying its tokens until they have all expired. */
export function rotateSigningKey(db: Kysely<Database>, accessTokenTtlSeconds: number, context: EventContext): Promise<SigningKeyRow> {
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    return rotateLocked(trx, accessTokenTtlSeconds, context);
  });
}

async function rotateLocked(trx: Kysely<Database>, accessTokenTtlSeconds: number, context: EventContext): Promise<SigningKeyRow> {
  const previous = await findActiveSigningKey(trx);
  if (previous) await retireSigningKey(trx, previous.kid, new Date(Date.now() + accessTokenTtlSeconds * 1000 + RETIREMENT_MARGIN_MS));
  const next = await insertSigningKey(trx);
  // Signing keys are named by kid, not by UUID; the event's subject is the new key's row id.
  await record(trx, { type: 'signing_key.rotated', subjectType: 'signing_key', subjectId: next.kid, data: { after: { kid: next.kid }, before: { kid: previous?.kid ?? null } } }, context);
  return next;
}

/** The automatic rotation: only when the active key is older than the period, on one instance. */
export function rotateWhenDue(db: Kysely<Database>, rotationDays: number, accessTokenTtlSeconds: number, context: EventContext): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    const active = await findActiveSigningKey(trx);
    if (active && Date.now() - active.created_at.getTime() < rotationDays * DAY_MS) return false;
    await rotateLocked(trx, accessTokenTtlSeconds, context);
    return true;
  });
}
