/**
 * The bare reference of the flash sale: the simplest correct lock-last pair of transactions over
 * the service's own tables, each statement named and prepared, on a pool of the service's size,
 * with no auth, no events and no validation. A reservation inserts itself and its line, then
 * holds the units with one conditional update (which takes the variant's lock) and commits; a
 * commit closes the reservation and its line, takes the units off the variant in one update and
 * writes one movement. Nothing is locked before it must be, so this is the ceiling of the work.
 */
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const app = Fastify({ logger: false });

/** Runs `work` in a transaction; `undefined` from it rolls back. */
async function inTransaction<Result>(work: (client: pg.PoolClient) => Promise<Result | undefined>): Promise<Result | undefined> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query(result === undefined ? 'rollback' : 'commit');
    return result;
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}

app.post<{ Body: { variant_id: string; quantity: number } }>('/reservations', async (request, reply) => {
  const { variant_id: variantId, quantity } = request.body;
  const id = randomUUID();
  const held = await inTransaction(async (client) => {
    await client.query({
      name: 'insert-reservation',
      text: "insert into reservations (id, status, expires_at, created_at, updated_at) values ($1, 'active', now() + interval '15 minutes', now(), now())",
      values: [id],
    });
    await client.query({ name: 'insert-line', text: 'insert into reservation_lines (reservation_id, position, variant_id, quantity) values ($1, 0, $2, $3)', values: [id, variantId, quantity] });
    const hold = await client.query({ name: 'hold', text: 'update variants set reserved = reserved + $2 where id = $1 and stock - reserved >= $2', values: [variantId, quantity] });
    return hold.rowCount === 1 ? id : undefined;
  });
  if (!held) return reply.code(409).send({ code: 'insufficient_stock' });
  return reply.code(201).send({ id });
});

app.post<{ Params: { id: string } }>('/reservations/:id/commit', async (request, reply) => {
  const committed = await inTransaction(async (client) => {
    const closed = await client.query({ name: 'close', text: "update reservations set status = 'committed', updated_at = now() where id = $1 and status = 'active'", values: [request.params.id] });
    if (closed.rowCount !== 1) return undefined;
    const lines = await client.query<{ variant_id: string; quantity: number }>({
      name: 'close-lines',
      text: 'update reservation_lines set active = false where reservation_id = $1 returning variant_id, quantity',
      values: [request.params.id],
    });
    const { variant_id: variantId, quantity } = lines.rows[0]!;
    const taken = await client.query<{ stock: number }>({
      name: 'take',
      text: 'update variants set stock = stock - $2, reserved = reserved - $2 where id = $1 returning stock',
      values: [variantId, quantity],
    });
    await client.query({
      name: 'movement',
      text: "insert into stock_movements (id, variant_id, delta, stock_after, reason, created_at) values ($1, $2, $3, $4, 'reservation committed', now())",
      values: [randomUUID(), variantId, -quantity, taken.rows[0]!.stock],
    });
    return true;
  });
  if (!committed) return reply.code(409).send({ code: 'reservation_closed' });
  return { status: 'committed' };
});

app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
