import { randomUUID } from 'node:crypto';
import { postJson } from '../test/helpers/service-process.js';
import { measure, type Figures } from './measure.js';
import { cpuSeconds, vacuum } from './setup.js';

/** Locations made besides the default, so that one variant is stocked at ten. */
const EXTRA_LOCATIONS = 9;
/** Of those, how many are made inactive: their stock is kept apart from `available` (API.md section 21). */
const INACTIVE_LOCATIONS = 2;

/** A variant for the read, with `stock` at the default location (set by the variant's own POST). */
async function newReadVariant(baseUrl: string, auth: Record<string, string>, label: string): Promise<string> {
  const id = randomUUID();
  const reply = await postJson(`${baseUrl}/api/variants/${id}`, { product_id: 'bench-locations', sku: `LOC-${id}`, name: `Read at ${label}`, price: 100, stock: 10, attributes: { locations: label } }, auth);
  if (reply.status !== 201) throw new Error(`seeding the ${label} variant failed: ${reply.status}`);
  return id;
}

/** Nine more locations (the last two inactive), and the variant stocked at each of them besides the default. */
async function stockAtTenLocations(baseUrl: string, auth: Record<string, string>, variantId: string): Promise<void> {
  for (let index = 0; index < EXTRA_LOCATIONS; index++) {
    const status = index >= EXTRA_LOCATIONS - INACTIVE_LOCATIONS ? 'inactive' : 'active';
    const location = await postJson(`${baseUrl}/api/locations`, { code: `read-${index + 1}`, name: `Read ${index + 1}`, priority: 200 + index, status }, auth);
    if (location.status !== 201) throw new Error(`creating location read-${index + 1} failed: ${location.status}`);
    // An inactive location may be counted this way (API.md section 21).
    const stocked = await postJson(`${baseUrl}/api/variants/${variantId}/stock`, { stock: 10 + index, location_id: location.body?.id, reason: 'bench: stock at ten locations' }, auth, 'PUT');
    if (stocked.status !== 200) throw new Error(`stocking at location read-${index + 1} failed: ${stocked.status}`);
  }
}

/**
 * Cleans the tables the stocking wrote. Each PUT of stock at a location updates the variant's row
 * (and a level's change at an inactive location updates it once more, the trigger's
 * `available_at_inactive_locations`), so the ten-location variant's row has a dozen versions to
 * the other's one. On a page with room to spare a read does not prune them (eleven updates of a
 * row left eleven dead versions after reads, none after a vacuum, by pageinspect), so every
 * lookup walks that chain; the first run, without the vacuum, read 0.81x with the service's own
 * CPU per read the same on both sides (bench/README.md). Vacuumed, each row is one live version,
 * as autovacuum leaves any row in time, and what is compared is what ten locations cost a read.
 */
const vacuumStockTables = (databaseUrl: string) => vacuum(databaseUrl, ['variants', 'stock_levels', 'locations']);

/**
 * `GET /api/variants/{id}` of a variant stocked at one location against a variant stocked at ten
 * (the default and nine more, two of them inactive), on the one service process, alternated in
 * `rounds` rounds (one location then ten, ten then one, ...) with autocannon at `connections`,
 * with the service's own CPU time per read. Ratio: the ten-location variant's reads over the
 * one-location variant's, summed.
 */
export async function runByIdAtLocations(
  service: { baseUrl: string; pid: number },
  databaseUrl: string,
  auth: Record<string, string>,
  options: { connections: number; duration: number; rounds: number; warmUp: number },
) {
  const atOne = await newReadVariant(service.baseUrl, auth, 'one location');
  const atTen = await newReadVariant(service.baseUrl, auth, 'ten locations');
  await stockAtTenLocations(service.baseUrl, auth, atTen);
  await vacuumStockTables(databaseUrl);
  const sides = [
    { side: 'one' as const, name: 'GET /api/variants/{id}, stocked at 1 location', variantId: atOne },
    { side: 'ten' as const, name: 'GET /api/variants/{id}, stocked at 10 locations (2 inactive)', variantId: atTen },
  ];
  const rows: Figures[] = [];
  const reads = { one: 0, ten: 0 };
  // The service's own CPU time per read, round by round: on a machine others load, steadier than the rate.
  const cpuMicroseconds = { one: [] as number[], ten: [] as number[] };
  for (let round = 0; round < options.rounds; round++) {
    // Each round the other goes first, so that neither always meets the machine right after the other's load.
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      let cpuBefore = 0;
      const afterWarmUp = async () => void (cpuBefore = await cpuSeconds(service.pid));
      // The first round of each warms the route's code up for longer; later ones get measure's one second.
      const figures = await measure(
        service.baseUrl,
        { name: side.name, path: () => `/api/variants/${side.variantId}`, headers: auth },
        { connections: options.connections, duration: options.duration, warmUpSeconds: round === 0 ? options.warmUp : 1, afterWarmUp },
      );
      cpuMicroseconds[side.side].push((((await cpuSeconds(service.pid)) - cpuBefore) / Math.max(figures.total, 1)) * 1e6);
      rows.push(figures);
      reads[side.side] += figures.requestsPerSecond;
    }
  }
  const faults = rows.reduce((sum, row) => sum + row.errors + row.non2xx, 0);
  return { rows, ratio: reads.ten / reads.one, faults, cpuMicroseconds };
}
