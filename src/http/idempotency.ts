import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { AppError } from './errors.js';
import { claimKey, completeKey, releaseKey, type KeyScope, type StoredReply } from './idempotency-key-repository.js';
import { PROBLEM_CONTENT_TYPE, problemBody } from './problem-reply.js';

export type { StoredReply } from './idempotency-key-repository.js';

/** Any route's reply, whatever its schema: a replay may be a success or a stored problem. */
type AnyReply = FastifyReply<any, any, any, any, any, any, any, any>;

export const IdempotencyKeyHeader = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 255,
    description:
      'Scoped to the caller, kept 24 h. A repeat with the same body replays the first reply (status, ETag, Location, ' +
      'body); with another body, 422; while the first is still running, 409.',
  }),
);

/** Identifies a request: method, path (ids are read in any case) and the body with its keys in a fixed order. */
function requestFingerprint(request: FastifyRequest): string {
  const path = (request.url.split('?')[0] ?? '').toLowerCase();
  const body = (request.body ?? {}) as Record<string, unknown>;
  const canonicalBody = JSON.stringify(Object.fromEntries(Object.entries(body).sort(([a], [b]) => a.localeCompare(b))));
  return createHash('sha256').update(`${request.method} ${path}\n${canonicalBody}`).digest('hex');
}

/**
 * Runs a write once per (caller, Idempotency-Key), following the IETF Idempotency-Key draft,
 * and sends its reply. Without the header it is one transaction. With it, the first reply is
 * stored in the same transaction as the change it reports, so a repeat either replays it or
 * finds the key in progress (409), never a second change. A 4xx is stored too (a retry gets the
 * same answer); an unexpected failure frees the key for a retry.
 */
export async function replyOnce(
  db: Kysely<Database>,
  request: FastifyRequest,
  reply: AnyReply,
  ownerId: string,
  work: (trx: Transaction<Database>) => Promise<StoredReply>,
): Promise<AnyReply> {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string') return send(reply, await inTransaction(db, work));
  // A key is claimed (outside the change's transaction) only once any pending check has passed.
  await request.checkBeforeError?.();
  const scope: KeyScope = { ownerId, key, fingerprint: requestFingerprint(request) };
  const stored = await claimKey(db, scope);
  if (stored) return send(reply, stored);
  try {
    return send(
      reply,
      await inTransaction(db, async (trx) => {
        const result = await work(trx);
        await completeKey(trx, scope, result);
        return result;
      }),
    );
  } catch (error) {
    if (error instanceof AppError && error.statusCode < 500) {
      await completeKey(db, scope, { status: error.statusCode, headers: error.headers, body: problemBody(error) });
    } else {
      await releaseKey(db, scope);
    }
    throw error;
  }
}

function send(reply: AnyReply, stored: StoredReply): AnyReply {
  if (stored.headers) reply.headers(stored.headers);
  reply.code(stored.status);
  if (stored.status >= 400) reply.type(PROBLEM_CONTENT_TYPE);
  return reply.send(stored.status === 204 ? null : stored.body);
}
