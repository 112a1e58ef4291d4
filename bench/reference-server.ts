/**
 * The bare reference: one Fastify route running the same single query as
 * GET /api/variants/{id}, as a named prepared statement (parsed and planned once per connection,
 * as the service's own are), with no auth, no validation, no serialisation schema and no log. With
 * REFERENCE_CALLER_ID it first runs the caller lookup the service makes on every request
 * (docs/api.md, Authentication), which shows how much of the gap is that second round trip. With
 * REFERENCE_FUSED_USER_ID and REFERENCE_FUSED_SESSION_ID it runs, instead, the statement the
 * service sends for a user's by-id read (queries/variants.sql, `byId`; a test proves it is what
 * the service sends, whitespace aside): the caller's row beside the variant, with the gate the
 * route's rule gives, and replies with the variant's columns.
 * That is the ceiling of the work the contract requires (the caller checked by the database on
 * every request) done by the simplest code.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const callerId = process.env.REFERENCE_CALLER_ID;
const fusedUserId = process.env.REFERENCE_FUSED_USER_ID;
const fusedSessionId = process.env.REFERENCE_FUSED_SESSION_ID;
/** The service's statement for a user's by-id read, as committed; its parameters in the order the statement numbers them. */
const fusedText = /-- byId: [^\n]*\n([\s\S]*?);\n/.exec(readFileSync(new URL('../queries/variants.sql', import.meta.url), 'utf8'))?.[1];
if (fusedUserId && !fusedText) throw new Error('queries/variants.sql has no byId statement');
// The gate of GET /api/variants/{id} (READERS): any role; API clients with variants:read; the
// roles that must have a second factor (MFA_REQUIRED_ROLES, as the service reads it); no step-up.
const mfaRequiredRoles = [...new Set((process.env.MFA_REQUIRED_ROLES ?? '').split(',').map((role) => role.trim()).filter(Boolean))];
const fusedGate = [['user', 'manager', 'admin'], null, ['variants:read'], mfaRequiredRoles, null];
const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/variants/:id', async (request, reply) => {
  if (fusedUserId) {
    const fused = await pool.query({ name: 'fused', text: fusedText!, values: [fusedSessionId, fusedUserId, request.params.id, ...fusedGate] });
    const row = fused.rows[0];
    if (!row || row.caller__row !== true) return reply.code(404).send({ code: 'not_found' });
    // The variant's columns, as the single-statement route sends them.
    const variant: Record<string, unknown> = {};
    for (const column in row) if (!column.startsWith('caller__')) variant[column] = row[column];
    return variant;
  }
  if (callerId) await pool.query({ name: 'caller', text: 'select id, role, status, session_version from users where id = $1 and deleted_at is null', values: [callerId] });
  const result = await pool.query({ name: 'variant', text: 'select * from variants where id = $1', values: [request.params.id] });
  if (result.rows.length === 0) return reply.code(404).send({ code: 'not_found' });
  return result.rows[0];
});
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
