/**
 * The bare reference of the by-id read: one Fastify route running the statement the service
 * sends for GET /api/variants/{id} by a caller it knows (queries/variants.sql, `byId, alone`), as
 * a named prepared statement (parsed and planned once per connection, as the service's own are),
 * on a pool of the service's default size, with no auth, no validation, no serialisation schema
 * and no log. The same work done by the simplest correct code: the ceiling (bench/README.md).
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/variants/:id', async (request, reply) => {
  const result = await pool.query({ name: 'variant', text: 'select * from variants where id = $1', values: [request.params.id] });
  if (result.rows.length === 0) return reply.code(404).send({ code: 'not_found' });
  return result.rows[0];
});
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
