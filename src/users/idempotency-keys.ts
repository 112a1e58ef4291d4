import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { problemBody } from '../http/error-handler.js';
import { AppError } from '../http/errors.js';

export interface StoredReply {
  status: number;
  body: unknown;
}

interface KeyScope {
  ownerId: string;
  key: string;
  fingerprint: string;
}

const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
// A request that holds a key longer than this is taken to have died with its instance.
const PROCESSING_LEASE_MS = 60 * 1000;

/** Identifies a request: method, path and the body with its keys in a fixed order. */
export function requestFingerprint(method: string, path: string, body: Record<string, unknown>): string {
  const canonicalBody = JSON.stringify(Object.fromEntries(Object.entries(body).sort(([a], [b]) => a.localeCompare(b))));
  return createHash('sha256').update(`${method} ${path}\n${canonicalBody}`).digest('hex');
}

/**
 * Runs `work` at most once per (caller, key), following the IETF Idempotency-Key draft:
 * the first reply is stored in the same transaction as the change it reports, so a repeat
 * either replays it or finds the key still in progress (409), never a second change.
 * A 4xx reply is stored too (a retry gets the same answer); an unexpected failure frees the key.
 */
export async function runIdempotently(
  db: Kysely<Database>,
  scope: KeyScope,
  work: (trx: Transaction<Database>) => Promise<StoredReply>,
): Promise<StoredReply & { replayed: boolean }> {
  const stored = await claimKey(db, scope);
  if (stored) return { ...stored, replayed: true };
  try {
    const reply = await inTransaction(db, async (trx) => {
      const result = await work(trx);
      await completeKey(trx, scope, result);
      return result;
    });
    return { ...reply, replayed: false };
  } catch (error) {
    if (error instanceof AppError && error.statusCode < 500) {
      await completeKey(db, scope, { status: error.statusCode, body: problemBody(error) });
    } else {
      await db.deleteFrom('idempotency_keys').where('owner_id', '=', scope.ownerId).where('key', '=', scope.key).execute();
    }
    throw error;
  }
}

/** Takes the key for this request, or returns the stored reply to replay, or refuses. */
async function claimKey(db: Kysely<Database>, scope: KeyScope): Promise<StoredReply | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = new Date();
    const fresh = {
      request_fingerprint: scope.fingerprint,
      state: 'in_progress' as const,
      response_status: null,
      response_body: null,
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
        throw new AppError(422, 'idempotency_key_reused', 'This Idempotency-Key was used with another request.');
      }
      if (existing.state === 'done') return { status: existing.response_status ?? 200, body: existing.response_body };
      if (!abandoned) {
        throw new AppError(409, 'idempotency_in_progress', 'A request with this Idempotency-Key is still being processed.');
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
  throw new AppError(409, 'idempotency_in_progress', 'A request with this Idempotency-Key is still being processed.');
}

async function completeKey(db: Kysely<Database>, scope: KeyScope, reply: StoredReply): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', response_status: reply.status, response_body: JSON.stringify(reply.body) })
    .where('owner_id', '=', scope.ownerId)
    .where('key', '=', scope.key)
    .execute();
}

export async function deleteExpiredIdempotencyKeys(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', new Date()).executeTakeFirst();
  return Number(result.numDeletedRows);
}
