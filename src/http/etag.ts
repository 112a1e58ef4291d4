import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { AppError } from './errors.js';

export function setEtag(reply: FastifyReply, version: number): void {
  reply.header('etag', `"${version}"`);
}

/**
 * If-Match uses strong comparison (RFC 9110 §13.1.1): `*` or one of the listed strong tags
 * must equal the current version; a weak tag never matches.
 */
export function assertIfMatch(ifMatch: string | undefined, currentVersion: number): void {
  if (ifMatch === undefined) return;
  const tags = ifMatch.split(',').map((tag) => tag.trim());
  if (tags.includes('*') || tags.includes(`"${currentVersion}"`)) return;
  throw new AppError(412, 'precondition_failed', 'The resource has changed since you read it (If-Match does not match).');
}

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ maxLength: 1024, description: 'Strong ETag of the version you read; a stale one gets 412 and changes nothing.' }),
  ),
});
