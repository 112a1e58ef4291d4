/**
 * The bare reference of the flash sale: the simplest correct lock-last pair of transactions over
 * the service's own tables, each statement named and prepared, on a pool of the service's size,
 * with no auth, no events and no validation. A reservation inserts itself and its line, then
 * holds the units with one conditional update (which takes the variant's lock), holds them at
 * the default location's level and records that allocation, and commits; a commit closes the
 * reservation and its line, takes the units off the variant and off the level, and writes one
 * movement. The levels and allocations are the work the service must do since stock is kept per
 * location (API.md section 21), one location here. Nothing is locked before it must be, so this
 * is the ceiling of the work.
 * It answers a success with the reply the service sends (the reservation's representation, the
 * API's security headers, a request id, `no-store`, the Location of a new one), to the request
 * the service gets (a `lines` list, a bearer token it does not read), as the by-id reference
 * does: the load generator shares the two cores, so it sends and reads the same bytes from both.
 * A refusal, which the sale never meets, is a bare `{ code }`.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyReply } from 'fastify';
import pg from 'pg';
import type { ReservationLineRow, ReservationRow } from '../src/db/tables.js';
import { API_HEADERS } from '../src/http/security.js';
import { toReservationResponse } from '../src/inventory/reservation-response.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
const app = Fastify({ logger: false });
// The sale's one location: the default, made by the upgrade.
const defaultLocationId = (await pool.query<{ id: string }>('select id from locations where is_default')).rows[0]!.id;

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

/** The headers of every reply of the service's (src/http/security.ts, http-frame.ts). */
const withApiHeaders = (reply: FastifyReply) => reply.headers(API_HEADERS).header('x-request-id', randomUUID()).header('cache-control', 'no-store');

app.post<{ Body: { lines: { variant_id: string; quantity: number }[] } }>('/reservations', async (request, reply) => {
  // The sale's reservations are of one line.
  const line = request.body.lines[0]!;
  const made = await inTransaction(async (client) => {
    const inserted = await client.query<ReservationRow>({
      name: 'insert-reservation',
      text: "insert into reservations (id, status, expires_at, created_at, updated_at) values ($1, 'active', now() + interval '15 minutes', now(), now()) returning *",
      values: [randomUUID()],
    });
    const reservation = inserted.rows[0]!;
    await client.query({ name: 'insert-line', text: 'insert into reservation_lines (reservation_id, position, variant_id, quantity) values ($1, 0, $2, $3)', values: [reservation.id, line.variant_id, line.quantity] });
    const hold = await client.query({ name: 'hold', text: 'update variants set reserved = reserved + $2 where id = $1 and stock - reserved >= $2', values: [line.variant_id, line.quantity] });
    if (hold.rowCount !== 1) return undefined;
    await client.query({ name: 'hold-level', text: 'update stock_levels set reserved = reserved + $3 where variant_id = $1 and location_id = $2', values: [line.variant_id, defaultLocationId, line.quantity] });
    await client.query({
      name: 'allocate',
      text: 'insert into reservation_allocations (reservation_id, position, location_id, quantity) values ($1, 0, $2, $3)',
      values: [reservation.id, defaultLocationId, line.quantity],
    });
    return reservation;
  });
  withApiHeaders(reply);
  if (!made) return reply.code(409).send({ code: 'insufficient_stock' });
  return reply
    .code(201)
    .header('location', `/api/reservations/${made.id}`)
    .send(
      toReservationResponse({
        ...made,
        lines: [{ reservation_id: made.id, position: 0, variant_id: line.variant_id, quantity: line.quantity, active: true }],
        allocations: [{ reservation_id: made.id, position: 0, location_id: defaultLocationId, quantity: line.quantity }],
      }),
    );
});

app.post<{ Params: { id: string } }>('/reservations/:id/commit', async (request, reply) => {
  const committed = await inTransaction(async (client) => {
    const closed = await client.query<ReservationRow>({
      name: 'close',
      text: "update reservations set status = 'committed', updated_at = now() where id = $1 and status = 'active' returning *",
      values: [request.params.id],
    });
    if (closed.rowCount !== 1) return undefined;
    const lines = await client.query<ReservationLineRow>({
      name: 'close-lines',
      text: 'update reservation_lines set active = false where reservation_id = $1 returning *',
      values: [request.params.id],
    });
    const { variant_id: variantId, quantity } = lines.rows[0]!;
    await client.query({ name: 'take', text: 'update variants set stock = stock - $2, reserved = reserved - $2 where id = $1', values: [variantId, quantity] });
    const taken = await client.query<{ stock: number }>({
      name: 'take-level',
      text: 'update stock_levels set stock = stock - $3, reserved = reserved - $3 where variant_id = $1 and location_id = $2 returning stock',
      values: [variantId, defaultLocationId, quantity],
    });
    await client.query({
      name: 'movement',
      // A movement's stock_after is the stock at its location (API.md section 21).
      text: "insert into stock_movements (id, variant_id, location_id, delta, stock_after, reason, created_at) values ($1, $2, $3, $4, $5, 'reservation committed', now())",
      values: [randomUUID(), variantId, defaultLocationId, -quantity, taken.rows[0]!.stock],
    });
    const allocations = await client.query({ name: 'allocations', text: 'select * from reservation_allocations where reservation_id = $1', values: [request.params.id] });
    return { ...closed.rows[0]!, lines: lines.rows, allocations: allocations.rows };
  });
  withApiHeaders(reply);
  if (!committed) return reply.code(409).send({ code: 'reservation_closed' });
  return toReservationResponse(committed);
});

app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
