/**
 * The bare reference: one Fastify route running the same single query as
 * GET /api/variants/{id}, as a named prepared statement (parsed and planned once per connection,
 * as the service's own are), with no auth, no validation, no serialisation schema and no log. With
 * REFERENCE_CALLER_ID it first runs the caller lookup the service makes on every request
 * (docs/api.md, Authentication), which shows how much of the gap is that second round trip.
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const callerId = process.env.REFERENCE_CALLER_ID;
const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/variants/:id', async (request, reply) => {
  if (callerId) await pool.query({ name: 'caller', text: 'select id, role, status, session_version from users where id = $1 and deleted_at is null', values: [callerId] });
  const result = await pool.query({ name: 'variant', text: 'select * from variants where id = $1', values: [request.params.id] });
  if (result.rows.length === 0) return reply.code(404).send({ code: 'not_found' });
  return result.rows[0];
});
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
