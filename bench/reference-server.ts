/**
 * The bare reference of the by-id read: one Fastify route running the statement the service sends
 * for GET /api/variants/{id} by a caller it knows (queries/variants.sql, `variantById`'s second
 * statement), as a named prepared statement (parsed and planned once per connection, as the
 * service's own are), on a pool of the service's default size, answering with the reply the service
 * sends: the same representation and the same headers (the API's security headers, a request id,
 * `no-store`, the ETag), so the load generator reads the same bytes from both. No auth, no
 * validation, no serialisation schema and no log. The same work done by the simplest correct code:
 * the ceiling (bench/README.md).
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
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
