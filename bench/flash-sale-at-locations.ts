import pg from 'pg';
import { freePort, postJson, startService } from '../test/helpers/service-process.js';
import { checkoutClient, newSaleVariant, referenceShop, serviceShop, shop, type Shop } from './flash-sale.js';
import type { Figures } from './measure.js';

/** The sale's three locations, first to last by priority (API.md section 21: lower first). */
const SALE_LOCATIONS = [
  { code: 'sale-first', name: 'Sale: first by priority', priority: 10 },
  { code: 'sale-second', name: 'Sale: second by priority', priority: 20 },
  { code: 'sale-third', name: 'Sale: third by priority', priority: 30 },
];
/** The last location holds more than any sale of a few seconds sells, so no shopper is refused. */
const LAST_LOCATION_STOCK = 1_000_000;
/**
 * Checkouts a second assumed for the first sale (the service's warm-up), before any was measured;
 * later sales size the first two locations from the service's last sale.
 */
const FIRST_GUESS_PER_SECOND = 300;

/** The three sale locations, created through the API; their ids by priority. */
async function createSaleLocations(baseUrl: string, auth: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  for (const location of SALE_LOCATIONS) {
    const reply = await postJson(`${baseUrl}/api/locations`, location, auth);
    if (reply.status !== 201) throw new Error(`creating location ${location.code} failed: ${reply.status}`);
    ids.push(String(reply.body?.id));
  }
  return ids;
}

/** A variant with no stock, then each location's stock set through PUT /api/variants/{id}/stock with its `location_id`. */
async function newVariantAtLocations(baseUrl: string, auth: Record<string, string>, stockAt: Map<string, number>): Promise<string> {
  const id = await newSaleVariant(baseUrl, auth, 0);
  for (const [locationId, stock] of stockAt) {
    const reply = await postJson(`${baseUrl}/api/variants/${id}/stock`, { stock, location_id: locationId, reason: 'bench: stock for the sale' }, auth, 'PUT');
    if (reply.status !== 200) throw new Error(`stocking the sale variant at ${locationId} failed: ${reply.status}`);
  }
  return id;
}

/**
 * The oversell check at every location, read from the database: at each of the variant's levels
 * nothing is left reserved, no stock is below zero, the stock is its start less the units of the
 * acknowledged commits whose replies named that location, the committed allocations recorded
 * there say the same, and the level's movements sum to its stock; over all of them, the units
 * taken are the acknowledged commits, and the variant's own row agrees.
 */
async function oversellProblemsAtLocations(databaseUrl: string, variantId: string, startAt: Map<string, number>, committed: number, committedAt: Map<string, number>): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: levels } = await client.query<{ location_id: string; stock: number; reserved: number; allocated_to_commits: number; movements_sum: number }>(
      `select levels.location_id, levels.stock, levels.reserved,
         coalesce((select sum(allocations.quantity) from reservation_allocations as allocations
           join reservation_lines as lines on lines.reservation_id = allocations.reservation_id and lines.position = allocations.position
           join reservations on reservations.id = allocations.reservation_id
           where lines.variant_id = levels.variant_id and allocations.location_id = levels.location_id and reservations.status = 'committed'), 0)::integer as allocated_to_commits,
         coalesce((select sum(movements.delta) from stock_movements as movements
           where movements.variant_id = levels.variant_id and movements.location_id = levels.location_id), 0)::integer as movements_sum
       from stock_levels as levels where levels.variant_id = $1`,
      [variantId],
    );
    const { rows: variants } = await client.query<{ stock: number; reserved: number }>('select stock, reserved from variants where id = $1', [variantId]);
    const problems: string[] = [];
    let taken = 0;
    for (const level of levels) {
      const at = `at ${level.location_id}`;
      const start = startAt.get(level.location_id) ?? 0;
      const acknowledged = committedAt.get(level.location_id) ?? 0;
      taken += start - level.stock;
      if (level.reserved !== 0) problems.push(`${level.reserved} units still reserved ${at}`);
      if (level.stock < 0) problems.push(`${level.stock} on hand ${at}, below zero`);
      if (level.stock !== start - acknowledged) problems.push(`${level.stock} on hand ${at}, expected ${start} - ${acknowledged} acknowledged = ${start - acknowledged}`);
      if (level.allocated_to_commits !== acknowledged) problems.push(`${level.allocated_to_commits} units of committed reservations allocated ${at}, ${acknowledged} acknowledged there`);
      if (level.movements_sum !== level.stock) problems.push(`movements ${at} sum to ${level.movements_sum}, stock is ${level.stock}`);
    }
    const unknown = [...committedAt.keys()].filter((locationId) => !levels.some((level) => level.location_id === locationId));
    if (unknown.length > 0) problems.push(`commits acknowledged at locations with no level: ${unknown.join(', ')}`);
    if (taken !== committed) problems.push(`${taken} units taken over the locations, ${committed} commits acknowledged`);
    const total = [...startAt.values()].reduce((sum, stock) => sum + stock, 0);
    if (variants[0]!.reserved !== 0) problems.push(`${variants[0]!.reserved} units still reserved on the variant`);
    if (variants[0]!.stock !== total - committed) problems.push(`${variants[0]!.stock} on hand on the variant, expected ${total - committed}`);
    return problems;
  } finally {
    await client.end();
  }
}

/**
 * The flash sale over three active locations (priorities 10, 20, 30), the first holding a third
 * of the sales the service is expected to make in a sale's time and the second another third, so
 * the first sells out a third of the way in and the second two thirds in; the third holds the
 * rest. Against the same bare lock-last reference as the one-location sale
 * (bench/flash-sale-reference.ts, which allocates at the default location only), its variant
 * holding the same total there. One process of each for the whole comparison, each first warmed
 * by `warmUp` seconds of its sale unmeasured, then alternated in `rounds` rounds, each on a fresh
 * variant; every sale gets the oversell check at every location.
 */
export async function runFlashSaleAtLocations(
  service: { baseUrl: string },
  databaseUrl: string,
  auth: Record<string, string>,
  options: { connections: number; duration: number; rounds: number; warmUp: number },
) {
  const locationIds = await createSaleLocations(service.baseUrl, auth);
  const clientAuth = await checkoutClient(service.baseUrl, auth);
  const defaultLocationId = await defaultLocation(databaseUrl);
  const rows: Figures[] = [];
  const problems: string[] = [];
  const checkouts = { reference: 0, service: 0 };
  // Where the service's last sale stood: the next sale's first two locations hold a third of that rate's sales each.
  let servicePerSecond = FIRST_GUESS_PER_SECOND;
  /** Units at each sale location for a sale of `seconds`: two thirds of the expected sales over the first two, the rest at the third. */
  const stockFor = (seconds: number) => {
    const third = Math.max(1, Math.round((servicePerSecond * seconds) / 3));
    return [third, third, LAST_LOCATION_STOCK];
  };
  const reference = await startService({ PORT: await freePort(), DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: '10' }, 'bench/flash-sale-reference.ts');
  try {
    const sides: { side: 'reference' | 'service'; name: string; stock: (seconds: number) => Promise<{ variantId: string; startAt: Map<string, number> }>; shopOf: (variantId: string) => Shop }[] = [
      {
        side: 'reference',
        name: 'bare lock-last reference (one location): reserve + commit',
        // The reference allocates at the default location only: the same total, all there.
        stock: async (seconds) => {
          const total = stockFor(seconds).reduce((sum, units) => sum + units, 0);
          return { variantId: await newSaleVariant(service.baseUrl, auth, total), startAt: new Map([[defaultLocationId, total]]) };
        },
        shopOf: (variantId) => referenceShop(reference.baseUrl, clientAuth, variantId),
      },
      {
        side: 'service',
        name: 'service, 3 locations: POST /api/reservations + commit',
        stock: async (seconds) => {
          const startAt = new Map(stockFor(seconds).map((units, index) => [locationIds[index]!, units]));
          return { variantId: await newVariantAtLocations(service.baseUrl, auth, startAt), startAt };
        },
        shopOf: (variantId) => serviceShop(service.baseUrl, clientAuth, variantId),
      },
    ];
    const sale = async (side: (typeof sides)[number], duration: number, label: string) => {
      const { variantId, startAt } = await side.stock(duration);
      const run = await shop(side.name, side.shopOf(variantId), { connections: options.connections, duration });
      problems.push(...(await oversellProblemsAtLocations(databaseUrl, variantId, startAt, run.committed, run.committedAt)).map((problem) => `${side.side}, ${label}: ${problem}`));
      if (side.side === 'service') servicePerSecond = Math.max(run.committed / duration, 1);
      const soldAt = locationIds.map((id) => run.committedAt.get(id) ?? 0);
      return { run, soldAt, startAt };
    };
    const soldOut: string[] = [];
    for (const side of sides) await sale(side, options.warmUp, 'warm-up');
    for (let round = 0; round < options.rounds; round++) {
      for (const side of sides) {
        const { run, soldAt, startAt } = await sale(side, options.duration, `round ${round + 1}`);
        rows.push(run.figures);
        checkouts[side.side] += run.committed;
        if (side.side === 'service') soldOut.push(`round ${round + 1}: ${soldAt.map((units, index) => `${units} of ${startAt.get(locationIds[index]!)}`).join(', ')}`);
      }
    }
    return { rows, ratio: checkouts.service / checkouts.reference, problems, soldOut };
  } finally {
    reference.child.kill('SIGTERM');
    await reference.exited;
  }
}

/** The default location's id, where the reference allocates. */
async function defaultLocation(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<{ id: string }>('select id from locations where is_default')).rows[0]!.id;
  } finally {
    await client.end();
  }
}
