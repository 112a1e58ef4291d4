import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { freePort, postJson, startService } from '../test/helpers/service-process.js';
import { percentile, type Figures } from './measure.js';
import { newApiClient } from './setup.js';

/** More than a sale of a few seconds can sell, so every shopper is served and none refused. */
const SALE_STOCK = 1_000_000;
const OPEN_HOLDS = 100_000;
const TIMED_RESERVATIONS = 300;

/** Units of an acknowledged commit at one location, as its reply names them. */
export interface Allocation {
  location_id: string;
  quantity: number;
}

export interface Shop {
  /** Reserves one unit; the reservation's id, or undefined if refused. */
  reserve: () => Promise<string | undefined>;
  /** Commits; the allocations of the line its reply shows, or undefined if refused. */
  commit: (id: string) => Promise<Allocation[] | undefined>;
}

/** The allocations of a committed reservation's one line, from the reply of the service or the reference (the same representation). */
const allocationsOfReply = (reply: { status: number; body?: Record<string, unknown> | undefined }): Allocation[] | undefined =>
  reply.status === 200 ? ((reply.body?.lines as { allocations: Allocation[] }[] | undefined)?.[0]?.allocations ?? []) : undefined;

/**
 * `connections` shoppers, each reserving one unit of the one variant and committing it, again
 * and again for `duration` seconds; a checkout is the two requests, its latency theirs together.
 * `committedAt`: the units of the acknowledged commits, by the location their replies name.
 */
export async function shop(name: string, store: Shop, options: { connections: number; duration: number }): Promise<{ figures: Figures; committed: number; committedAt: Map<string, number> }> {
  const latencies: number[] = [];
  const committedAt = new Map<string, number>();
  let failures = 0;
  let refused = 0;
  const deadline = Date.now() + options.duration * 1000;
  const shopper = async () => {
    while (Date.now() < deadline) {
      const started = performance.now();
      const id = await store.reserve();
      if (!id) {
        refused++;
        continue;
      }
      const allocations = await store.commit(id);
      if (!allocations) {
        failures++;
        continue;
      }
      latencies.push(performance.now() - started);
      for (const { location_id: locationId, quantity } of allocations) committedAt.set(locationId, (committedAt.get(locationId) ?? 0) + quantity);
    }
  };
  await Promise.all(Array.from({ length: options.connections }, shopper));
  latencies.sort((a, b) => a - b);
  const figures = { name, requestsPerSecond: latencies.length / options.duration, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), errors: failures, non2xx: refused, total: latencies.length };
  return { figures, committed: latencies.length, committedAt };
}

export function serviceShop(baseUrl: string, auth: Record<string, string>, variantId: string): Shop {
  return {
    reserve: async () => {
      const reply = await postJson(`${baseUrl}/api/reservations`, { lines: [{ variant_id: variantId, quantity: 1 }] }, auth);
      return reply.status === 201 ? String(reply.body?.id) : undefined;
    },
    commit: async (id) => allocationsOfReply(await postJson(`${baseUrl}/api/reservations/${id}/commit`, {}, auth)),
  };
}

/** The service's requests, token included (the reference does not read it), to the reference's routes. */
export function referenceShop(baseUrl: string, auth: Record<string, string>, variantId: string): Shop {
  return {
    reserve: async () => {
      const reply = await postJson(`${baseUrl}/reservations`, { lines: [{ variant_id: variantId, quantity: 1 }] }, auth);
      return reply.status === 201 ? String(reply.body?.id) : undefined;
    },
    commit: async (id) => allocationsOfReply(await postJson(`${baseUrl}/reservations/${id}/commit`, {}, auth)),
  };
}

export async function newSaleVariant(baseUrl: string, auth: Record<string, string>, stock: number): Promise<string> {
  const id = randomUUID();
  const reply = await postJson(`${baseUrl}/api/variants/${id}`, { product_id: 'bench-sale', sku: `SALE-${id}`, name: 'Sale', price: 100, stock, attributes: { sale: id } }, auth);
  if (reply.status !== 201) throw new Error(`seeding the sale variant failed: ${reply.status}`);
  return id;
}

/** A checkout service's credentials: an API client with `reservations:write`, by its client credentials token. */
export async function checkoutClient(baseUrl: string, auth: Record<string, string>): Promise<Record<string, string>> {
  const client = await newApiClient(baseUrl, auth, 'Bench checkout', ['reservations:write']);
  return { authorization: `Bearer ${client.token}` };
}

/** The oversell check: nothing left reserved, and the stock is the start less every acknowledged commit. */
async function oversellProblems(databaseUrl: string, variantId: string, committed: number): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ stock: number; reserved: number }>('select stock, reserved from variants where id = $1', [variantId]);
    const problems: string[] = [];
    if (rows[0]!.reserved !== 0) problems.push(`${rows[0]!.reserved} units still reserved`);
    if (rows[0]!.stock !== SALE_STOCK - committed) problems.push(`${rows[0]!.stock} on hand, expected ${SALE_STOCK - committed}`);
    return problems;
  } finally {
    await client.end();
  }
}

/**
 * The flash sale: the service against the bare lock-last reference (bench/flash-sale-reference.ts),
 * one process each for the whole comparison. Each first runs the sale unmeasured for `warmUp`
 * seconds (its code compiled by the JIT, its pool and prepared statements made, as a shop's
 * long-running processes are), then they alternate in `rounds` rounds, each on a fresh variant;
 * every sale, the warm-up's too, gets the oversell check.
 */
export async function runFlashSale(
  service: { baseUrl: string },
  databaseUrl: string,
  auth: Record<string, string>,
  options: { connections: number; duration: number; rounds: number; warmUp: number },
) {
  const clientAuth = await checkoutClient(service.baseUrl, auth);
  const rows: Figures[] = [];
  const problems: string[] = [];
  const checkouts = { reference: 0, service: 0 };
  const reference = await startService({ PORT: await freePort(), DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: '10' }, 'bench/flash-sale-reference.ts');
  try {
    const sides = [
      { side: 'reference' as const, name: 'bare lock-last reference: reserve + commit', shopOf: (variantId: string) => referenceShop(reference.baseUrl, clientAuth, variantId) },
      { side: 'service' as const, name: 'service: POST /api/reservations + commit', shopOf: (variantId: string) => serviceShop(service.baseUrl, clientAuth, variantId) },
    ];
    const sale = async ({ side, name, shopOf }: (typeof sides)[number], duration: number, label: string) => {
      const variantId = await newSaleVariant(service.baseUrl, auth, SALE_STOCK);
      const run = await shop(name, shopOf(variantId), { connections: options.connections, duration });
      problems.push(...(await oversellProblems(databaseUrl, variantId, run.committed)).map((problem) => `${side}, ${label}: ${problem}`));
      return run;
    };
    for (const side of sides) await sale(side, options.warmUp, 'warm-up');
    for (let round = 0; round < options.rounds; round++) {
      for (const side of sides) {
        const run = await sale(side, options.duration, `round ${round + 1}`);
        rows.push(run.figures);
        checkouts[side.side] += run.committed;
      }
    }
  } finally {
    reference.child.kill('SIGTERM');
    await reference.exited;
  }
  return { rows, ratio: checkouts.service / checkouts.reference, problems, clientAuth };
}

/** The median time of `count` reservations of one unit, one at a time, each released after. */
async function reservationTime(baseUrl: string, auth: Record<string, string>, variantId: string, count: number): Promise<number> {
  const times: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    const reply = await postJson(`${baseUrl}/api/reservations`, { lines: [{ variant_id: variantId, quantity: 1 }] }, auth);
    times.push(performance.now() - started);
    if (reply.status !== 201) throw new Error(`a timed reservation failed: ${reply.status}`);
    await postJson(`${baseUrl}/api/reservations/${reply.body?.id}/release`, {}, auth);
  }
  return percentile(times.sort((a, b) => a - b), 0.5);
}

/**
 * One reservation's time with no other open on the variant and with 100,000 open: the holds are
 * written straight in SQL (each a reservation of one unit, an hour from expiring, counted in
 * `reserved`), as 100,000 carts of a sale would leave them.
 */
export async function runHoldGrowth(service: { baseUrl: string }, databaseUrl: string, auth: Record<string, string>, clientAuth: Record<string, string>) {
  const variantId = await newSaleVariant(service.baseUrl, auth, SALE_STOCK);
  const empty = await reservationTime(service.baseUrl, clientAuth, variantId, TIMED_RESERVATIONS);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `with made as (
         insert into reservations (id, status, reference, expires_at, created_at, updated_at)
         select gen_random_uuid(), 'active', 'bench-cart-' || n, now() + interval '1 hour', now(), now() from generate_series(1, $1::integer) as n
         returning id)
       insert into reservation_lines (reservation_id, position, variant_id, quantity) select id, 0, $2, 1 from made`,
      [OPEN_HOLDS, variantId],
    );
    await client.query('update variants set reserved = reserved + $2 where id = $1', [variantId, OPEN_HOLDS]);
    await client.query('vacuum (analyze) reservations, reservation_lines, variants');
  } finally {
    await client.end();
  }
  const full = await reservationTime(service.baseUrl, clientAuth, variantId, TIMED_RESERVATIONS);
  return { empty, full, ratio: full / empty, holds: OPEN_HOLDS };
}
