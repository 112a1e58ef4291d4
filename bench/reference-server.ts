/**
 * The bare reference of the by-id read: one Fastify route running the statement the service sends
 * for GET /api/variants/{id} by a caller it knows (queries/variants.sql, `variantById`'s second
 * statement), as a named prepared statement (parsed and planned once per connection, as the
 * service's own are), on a pool of the service's default size, answering with the reply the service
 * sends: the same representation and the same headers (the API's security headers, a request id,
 * `no-store`, the ETag), so the load generator reads the same bytes from both. No auth, no
 * validation, no serialisation schema and no log. The same work done by the simplest correct code:
 * the ceiling (bench/README.md).
 *
 * `/stateless/variants/:id` is the same read with the work API.md section 17 and issue 52 ask of
 * every request, done by the simplest correct code: the caller's session and user read in the
 * request's own statement beside the variant (a plain join, and whether the user has a confirmed
 * second factor), then decided here: a live session, an active user (every role may read), and a
 * second factor for the roles MFA_REQUIRED_ROLES names, as the service reads it. The token's
 * claims are read from its payload once per token and kept, and its signature is not checked: the
 * service verifies a token once and keeps the verdict (sessions/verified-tokens.ts; a signature
 * cannot be revoked), so in steady state neither side pays for it. A bench route only: it would
 * take a forged token naming a live session. The ceiling of a service that keeps nothing about
 * its callers (bench:builds).
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import type { VariantRow } from '../src/db/tables.js';
import { etagOf } from '../src/http/preconditions.js';
import { API_HEADERS } from '../src/http/security.js';
import { toVariantResponse } from '../src/variants/variant-response.js';

// Amounts (int8) read as numbers, as the service's pool reads them (src/db/database.ts).
pg.types.setTypeParser(pg.types.builtins.INT8, Number);

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
// Behind a pooler in transaction mode a named statement may meet a server connection that never
// prepared it: there the reference sends unnamed statements, as the service does in that mode.
const statementName = process.env.DATABASE_POOL_MODE === 'transaction' ? undefined : 'variant';
const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/variants/:id', async (request, reply) => {
  const result = await pool.query<VariantRow>({ name: statementName, text: 'select * from variants where id = $1', values: [request.params.id] });
  const row = result.rows[0];
  reply.headers(API_HEADERS).header('x-request-id', randomUUID()).header('cache-control', 'no-store');
  if (!row) return reply.code(404).send({ code: 'not_found' });
  reply.header('etag', etagOf(row.version));
  return toVariantResponse(row, process.env.CURRENCY ?? 'USD');
});

const STATELESS_READ = `select variants.*, users.role as caller_role, users.status as caller_status,
    exists (select 1 from mfa_factors where mfa_factors.user_id = users.id and mfa_factors.confirmed_at is not null) as caller_has_factor
  from sessions
  join users on users.id = sessions.user_id and users.deleted_at is null
  left join variants on variants.id = $3
  where sessions.id = $1 and sessions.user_id = $2 and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null`;
const claimsOfToken = new Map<string, { sub: string; sid: string }>();
const claimsOf = (authorization: string | undefined): { sub: string; sid: string } | undefined => {
  const token = authorization?.slice('Bearer '.length) ?? '';
  let claims = claimsOfToken.get(token);
  if (!claims) {
    try {
      claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub: string; sid: string };
    } catch {
      return undefined;
    }
    claimsOfToken.set(token, claims);
  }
  return claims;
};
const rolesNeedingFactor = new Set((process.env.MFA_REQUIRED_ROLES ?? '').split(',').map((role) => role.trim()));
type StatelessRow = Partial<VariantRow> & { caller_role: string; caller_status: string; caller_has_factor: boolean };
app.get<{ Params: { id: string } }>('/stateless/variants/:id', async (request, reply) => {
  const claims = claimsOf(request.headers.authorization);
  if (!claims) return reply.code(401).send({ code: 'invalid_token' });
  const result = await pool.query<StatelessRow>({ name: statementName && 'stateless-variant', text: STATELESS_READ, values: [claims.sid, claims.sub, request.params.id] });
  const row = result.rows[0];
  reply.headers(API_HEADERS).header('x-request-id', randomUUID()).header('cache-control', 'no-store');
  if (!row || row.caller_status !== 'active') return reply.code(401).send({ code: 'invalid_token' });
  if (rolesNeedingFactor.has(row.caller_role) && !row.caller_has_factor) return reply.code(403).send({ code: 'mfa_enrollment_required' });
  if (row.id === null || row.id === undefined) return reply.code(404).send({ code: 'not_found' });
  reply.header('etag', etagOf(row.version!));
  return toVariantResponse(row as VariantRow, process.env.CURRENCY ?? 'USD');
});
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
