import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { AppError, notFound } from './errors.js';

/** The strong ETag of a resource: its integer version in double quotes. */
export const etagOf = (version: number) => `"${version}"`;

export function setEtag(reply: FastifyReply, version: number): void {
  reply.header('etag', etagOf(version));
}

/**
 * If-Match uses strong comparison (RFC 9110 §13.1.1): `*` or one of the listed strong tags
 * must equal the current version; a weak tag never matches.
 */
function assertIfMatch(ifMatch: string | undefined, currentVersion: number): void {
  if (ifMatch === undefined || ifMatch === '') return;
  const tags = ifMatch.split(',').map((tag) => tag.trim());
  if (tags.includes('*') || tags.includes(etagOf(currentVersion))) return;
  throw new AppError('precondition_failed', 'The resource has changed since you read it (If-Match does not match).');
}

/**
 * The precondition of every write on one resource: lock its row (`lock` reads it FOR UPDATE in
 * the caller's transaction), 404 when it is gone, then 412 when If-Match names another version.
 */
export async function lockForWrite<Row extends { version: number }>(
  lock: () => Promise<Row | undefined>,
  ifMatch: string | undefined,
  what: string,
): Promise<Row> {
  const row = await lock();
  if (!row) throw notFound(what);
  assertIfMatch(ifMatch, row.version);
  return row;
}

export const IfMatchHeader = Type.Optional(
  Type.String({
    // Weak tags are well-formed (they never match: If-Match compares strongly, so 412).
    pattern: '^(\\*|(W/)?"[0-9]+"( *, *(W/)?"[0-9]+")*)?$',
    'x-pattern-message': 'must be the ETag you read: a version in double quotes, such as "3" (or *)',
    description:
      'The ETag of the version you read, e.g. `"3"` (quotes included), or `*`; a stale one gets 412 and changes nothing. ' +
      'An empty value is the same as no If-Match.',
    examples: ['"1"'],
  }),
);

export const IfMatchHeaders = Type.Object({ 'if-match': IfMatchHeader });
