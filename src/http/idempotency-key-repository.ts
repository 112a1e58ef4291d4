import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { AppError } from './errors.js';

/** A reply as stored for replay: the status, the headers that matter, the body. */
export interface StoredReply {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface KeyScope {
  ownerId: string;
  key: string;
  fingerprint: string;
}

const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
// A request that holds a key longer than this is taken to have died with its instance.
const PROCESSING_LEASE_MS = 60 * 1000;

/** Takes the key for this request, or returns the stored reply to replay, or refuses. */
export async function claimKey(db: Kysely<Database>, scope: KeyScope): Promise<StoredReply | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = new Date();
    const fresh = {
      request_fingerprint: scope.fingerprint,
      state: 'in_progress' as const,
      response_status: null,
      response_body: null,
      response_headers: null,
      locked_until: new Date(now.getTime() + PROCESSING_LEASE_MS),
      expires_at: new Date(now.getTime() + KEY_LIFETIME_MS),
      created_at: now,
    };
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({ owner_id: scope.ownerId, key: scope.key, ...fresh })
      .onConflict((conflict) => conflict.columns(['owner_id', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (inserted) return undefined;

    const existing = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('owner_id', '=', scope.ownerId)
      .where('key', '=', scope.key)
      .executeTakeFirst();
    if (!existing) continue;
    const expired = existing.expires_at.getTime() <= now.getTime();
    const abandoned = existing.state === 'in_progress' && existing.locked_until.getTime() <= now.getTime();
    if (!expired) {
      if (existing.request_fingerprint !== scope.fingerprint) {
        throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with another request.');
      }
      if (existing.state === 'done') {
        return { status: existing.response_status ?? 200, headers: existing.response_headers ?? {}, body: existing.response_body };
      }
      if (!abandoned) {
        throw new AppError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed.');
      }
    }
    // Expired, or abandoned by a request that died: take it over unless another request just did.
    const taken = await db
      .updateTable('idempotency_keys')
      .set(fresh)
      .where('owner_id', '=', scope.ownerId)
      .where('key', '=', scope.key)
      .where('locked_until', '=', existing.locked_until)
      .where('expires_at', '=', existing.expires_at)
      .returning('key')
      .executeTakeFirst();
    if (taken) return undefined;
  }
  throw new AppError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed.');
}

export async function completeKey(db: Kysely<Database>, scope: KeyScope, reply: StoredReply): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({
      state: 'done',
      response_status: reply.status,
      response_body: JSON.stringify(reply.body ?? null),
      response_headers: JSON.stringify(reply.headers ?? {}),
    })
    .where('owner_id', '=', scope.ownerId)
    .where('key', '=', scope.key)
    .execute();
}

export async function releaseKey(db: Kysely<Database>, scope: KeyScope): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('owner_id', '=', scope.ownerId).where('key', '=', scope.key).execute();
}

export async function deleteExpiredIdempotencyKeys(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', new Date()).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * An erasure: stored replies that name the person (a balance change replies with the user) go,
 * and the keys they answered with them; a repeat then runs again instead of replaying them.
 */
export async function forgetRepliesAbout(db: Kysely<Database>, userId: string): Promise<void> {
  await sql`delete from idempotency_keys where owner_id = ${userId} or response_body::text like ${`%${userId}%`}`.execute(db);
}
