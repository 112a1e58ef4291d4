import { randomUUID } from 'node:crypto';
import { postJson } from '../test/helpers/service-process.js';
import type { Figures } from './measure.js';

const HOT_VARIANTS = 3;
const STOCK_EACH = 3000;

/**
 * The checkout scenario: `connections` shoppers, each reserving one or two units of one of a
 * few hot variants and committing (four in five) or releasing the reservation, for `duration`
 * seconds. A checkout is the two requests; its latency is theirs together. Afterwards the
 * oversell check: no variant sold more than it had, `reserved` is back to zero and each
 * variant's stock equals what it started with less the units whose commit was acknowledged.
 */
export async function runCheckout(baseUrl: string, auth: Record<string, string>, options: { connections: number; duration: number }) {
  const variants: string[] = [];
  for (let index = 0; index < HOT_VARIANTS; index++) {
    const id = randomUUID();
    const reply = await postJson(`${baseUrl}/api/variants/${id}`, { product_id: 'bench-hot', sku: `HOT-${id}`, name: 'Hot', price: 500, stock: STOCK_EACH, attributes: { hot: String(index) } }, auth);
    if (reply.status !== 201) throw new Error(`seeding the hot variants failed: ${reply.status}`);
    variants.push(id);
  }
  const sold = new Map(variants.map((id) => [id, 0]));
  const latencies: number[] = [];
  let soldOut = 0;
  let failures = 0;
  const deadline = Date.now() + options.duration * 1000;
  const shopper = async () => {
    while (Date.now() < deadline) {
      const variantId = variants[Math.floor(Math.random() * variants.length)]!;
      const quantity = 1 + Math.floor(Math.random() * 2);
      const started = performance.now();
      const reserved = await postJson(`${baseUrl}/api/reservations`, { lines: [{ variant_id: variantId, quantity }], expires_in: 60 }, auth);
      if (reserved.status === 409) {
        soldOut++;
        continue;
      }
      if (reserved.status !== 201) {
        failures++;
        continue;
      }
      const commit = Math.random() < 0.8;
      const closed = await postJson(`${baseUrl}/api/reservations/${reserved.body?.id}/${commit ? 'commit' : 'release'}`, {}, auth);
      latencies.push(performance.now() - started);
      if (closed.status !== 200) failures++;
      else if (commit) sold.set(variantId, sold.get(variantId)! + quantity);
    }
  };
  await Promise.all(Array.from({ length: options.connections }, shopper));
  latencies.sort((a, b) => a - b);
  const at = (share: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * share))] ?? 0);
  const figures: Figures = {
    name: `checkout: reserve + commit/release over ${HOT_VARIANTS} hot variants`,
    requestsPerSecond: latencies.length / options.duration,
    p50: at(0.5),
    p99: at(0.99),
    errors: failures,
    non2xx: soldOut,
    total: latencies.length,
  };
  const problems: string[] = [];
  for (const id of variants) {
    const variant = (await (await fetch(`${baseUrl}/api/variants/${id}`, { headers: auth })).json()) as { stock: number; reserved: number };
    const unitsSold = sold.get(id)!;
    if (unitsSold > STOCK_EACH) problems.push(`${id} sold ${unitsSold} of ${STOCK_EACH}`);
    if (variant.reserved !== 0) problems.push(`${id} still has ${variant.reserved} reserved`);
    if (variant.stock !== STOCK_EACH - unitsSold) problems.push(`${id} has ${variant.stock} on hand, expected ${STOCK_EACH - unitsSold}`);
  }
  const unitsSold = [...sold.values()].reduce((sum, units) => sum + units, 0);
  const check =
    problems.length === 0
      ? `Oversell check: OK. ${unitsSold} of ${HOT_VARIANTS * STOCK_EACH} units sold in ${figures.total} checkouts (${soldOut} refused as sold out), none oversold; reserved back to 0, stock = start - acknowledged commits.`
      : `Oversell check: FAILED: ${problems.join('; ')}`;
  return { figures, check, ok: problems.length === 0 };
}
