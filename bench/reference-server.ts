/**
 * The bare reference: one Fastify route running the same single query as
 * GET /api/variants/{id}, with no auth, no validation and no serialisation schema.
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/variants/:id', async (request, reply) => {
  const result = await pool.query('select * from variants where id = $1', [request.params.id]);
  if (result.rows.length === 0) return reply.code(404).send({ code: 'not_found' });
  return result.rows[0];
});
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
