import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { AppError } from './errors.js';
import { claimKey, completeKey, releaseKey, type KeyScope, type StoredReply } from './idempotency-key-repository.js';
import { PROBLEM_CONTENT_TYPE, problemBody } from './problem-reply.js';

export type { StoredReply } from './idempotency-key-repository.js';

/** An erasure forgets the stored replies that name the user (privacy). */
export { forgetRepliesAbout } from './idempotency-key-repository.js';

/** Any route's reply, whatever its schema: a replay may be a success or a stored problem. */
type AnyReply = FastifyReply<any, any, any, any, any, any, any, any>;

export const IdempotencyKeyHeader = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 255,
    description:
      'Scoped to the caller, kept 24 h. A repeat with the same body replays the first reply (status, ETag, Location, ' +
      'body) with `Idempotent-Replayed: true`; with another body, 422; while the first is still running, 409.',
  }),
);

/** Identifies a request: method, path (ids are read in any case) and the body with its keys in a fixed order. */
function requestFingerprint(request: FastifyRequest, stands?: Record<string, unknown>): string {
  const path = (request.url.split('?')[0] ?? '').toLowerCase();
  const body = (stands ?? request.body ?? {}) as Record<string, unknown>;
  const canonicalBody = JSON.stringify(Object.fromEntries(Object.entries(body).sort(([a], [b]) => a.localeCompare(b))));
  return createHash('sha256').update(`${request.method} ${path}\n${canonicalBody}`).digest('hex');
}

/**
 * What runs a route's write, seen from here: the request's admission (sessions/admission.ts),
 * which checks the caller before the work can touch the database.
 */
export interface WriteRunner {
  /** The admitted caller (a user or an API client, whose key it is) and the database. */
  admit(): Promise<{ caller: { id: string }; db: Kysely<Database> }>;
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
}

/**
 * Runs a write once per (caller, Idempotency-Key), following the IETF Idempotency-Key draft,
 * and sends its reply. Without the header it is one transaction. With it, the caller is admitted
 * first (a refused caller claims no key), and the first reply is stored in the same transaction
 * as the change it reports, so a repeat either replays it or finds the key in progress (409),
 * never a second change. A 4xx is stored too (a retry gets the same answer), but for a 429: it
 * says "not now" rather than answering the request, so like an unexpected failure it frees the
 * key for a retry.
 */
export async function replyOnce(
  runner: WriteRunner,
  request: FastifyRequest,
  reply: AnyReply,
  work: (trx: Transaction<Database>) => Promise<StoredReply>,
  /** What identifies the request's body when it is no JSON object (an upload: its digest and options). */
  bodyStandIn?: Record<string, unknown>,
): Promise<AnyReply> {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string') return send(reply, await runner.transaction(work));
  const { caller, db } = await runner.admit();
  const scope: KeyScope = { ownerId: caller.id, key, fingerprint: requestFingerprint(request, bodyStandIn) };
  const stored = await claimKey(db, scope);
  if (stored) return send(reply.header('idempotent-replayed', 'true'), stored);
  try {
    return send(
      reply,
      await runner.transaction(async (trx) => {
        const result = await work(trx);
        await completeKey(trx, scope, result);
        return result;
      }),
    );
  } catch (error) {
    if (error instanceof AppError && error.statusCode < 500 && error.statusCode !== 429) {
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

/** The header a replayed reply carries, for the OpenAPI description of an idempotent route's replies. */
export const REPLAYED_HEADER = {
  'idempotent-replayed': { type: 'string', enum: ['true'], description: 'Present on a reply replayed for a repeated Idempotency-Key.' },
};

/** A success reply of an idempotent route, documented with the replay header. */
export function idempotentReply<Reply extends { description: string; headers?: Record<string, unknown> }>(reply: Reply): Reply {
  return { ...reply, headers: { ...reply.headers, ...REPLAYED_HEADER } };
}
