/**
 * Crash safety on PostgreSQL: writes under load (balance changes, variant creations, stock
 * adjustments, reservations committed or released), SIGKILL mid-way, restart, then checks that
 * every write acknowledged to a client is stored, every ledger still sums to its balance, every
 * stock to its movements and every `reserved` to the variant's active reservations.
 * `npm run crash-test` (DATABASE_URL names the server; a scratch database is made on it).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createScratchDatabase } from '../test/helpers/scratch-database.js';
import { freePort, postJson, startService } from '../test/helpers/service-process.js';

const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const scratch = await createScratchDatabase(serverUrl, 'crash');

const environment = {
  DATABASE_URL: scratch.url,
  PORT: await freePort(),
  JWT_SECRET: randomUUID() + randomUUID(),
  ADMIN_EMAIL: 'crash-admin@example.com',
  ADMIN_PASSWORD: 'crash-admin-password',
  API_RATE_LIMIT: '1000000',
  LOGIN_RATE_LIMIT: '1000',
};

let failures = 0;
try {
  let service = await startService(environment);
  const login = await postJson(`${service.baseUrl}/api/auth/login`, { email: environment.ADMIN_EMAIL, password: environment.ADMIN_PASSWORD });
  const auth = { authorization: `Bearer ${login.body?.access_token}` };
  const customer = await postJson(`${service.baseUrl}/api/auth/register`, { email: `c-${randomUUID()}@example.com`, password: 'password-123', name: 'Customer' });
  const customerId = String(customer.body?.id);

  const hotVariants: string[] = [];
  for (let index = 0; index < 3; index++) {
    const id = randomUUID();
    await postJson(`${service.baseUrl}/api/variants/${id}`, { product_id: 'crash-hot', sku: `HOT-${id}`, name: 'Hot', price: 1, stock: 1_000_000, attributes: { n: String(index) } }, auth);
    hotVariants.push(id);
  }

  const acknowledgedReasons: string[] = [];
  const acknowledgedVariants: string[] = [];
  const acknowledgedAdjustments: string[] = [];
  const acknowledgedReservations = new Map<string, 'active' | 'committed' | 'released'>();
  const adjust = async (index: number) => {
    const reference = `adjust-${randomUUID()}`;
    const lines = (index % 8 < 4 ? hotVariants : [...hotVariants].reverse()).map((variant_id) => ({ variant_id, delta: -1 }));
    const reply = await postJson(`${service.baseUrl}/api/stock-adjustments`, { lines, reason: 'crash sale', reference }, auth);
    if (reply.status === 200) acknowledgedAdjustments.push(reference);
  };
  const reserveThenClose = async (index: number) => {
    const lines = hotVariants.slice(index % 3).map((variant_id) => ({ variant_id, quantity: 2 }));
    const created = await postJson(`${service.baseUrl}/api/reservations`, { lines, reference: `crash-${index}` }, auth);
    if (created.status !== 201) return;
    const id = String(created.body?.id);
    acknowledgedReservations.set(id, 'active');
    const action = Math.random() < 0.5 ? 'commit' : 'release';
    const closed = await postJson(`${service.baseUrl}/api/reservations/${id}/${action}`, {}, auth);
    if (closed.status === 200) acknowledgedReservations.set(id, action === 'commit' ? 'committed' : 'released');
  };
  let stop = false;
  const worker = async (index: number) => {
    while (!stop) {
      try {
        if (index % 4 === 2) {
          await adjust(index);
        } else if (index % 4 === 3) {
          await reserveThenClose(index);
        } else if (index % 2 === 0) {
          const reason = `crash-${randomUUID()}`;
          const reply = await postJson(`${service.baseUrl}/api/users/${customerId}/balance`, { delta: 1, reason }, auth, 'PUT');
          if (reply.status === 200) acknowledgedReasons.push(reason);
        } else {
          const id = randomUUID();
          const reply = await postJson(`${service.baseUrl}/api/variants/${id}`, { product_id: `crash-${id}`, sku: `CRASH-${id}`, name: 'Crash', price: 1 }, auth);
          if (reply.status === 201) acknowledgedVariants.push(id);
        }
      } catch {
        // The connection died with the process; whatever was not acknowledged may or may not be stored.
      }
    }
  };
  const workers = Array.from({ length: 16 }, (_, index) => worker(index));
  await new Promise((resolve) => setTimeout(resolve, 2500));
  service.child.kill('SIGKILL');
  await service.exited;
  stop = true;
  await Promise.all(workers);
  console.log(
    `killed with SIGKILL after ${acknowledgedReasons.length} acknowledged deltas, ${acknowledgedVariants.length} creates, ` +
      `${acknowledgedAdjustments.length} adjustments and ${acknowledgedReservations.size} reservations`,
  );

  service = await startService(environment);
  const check = new pg.Client({ connectionString: environment.DATABASE_URL });
  await check.connect();
  const reasons = new Set((await check.query('select reason from balance_ledger where user_id = $1', [customerId])).rows.map((row) => row.reason));
  const lostDeltas = acknowledgedReasons.filter((reason) => !reasons.has(reason)).length;
  const variantIds = new Set((await check.query('select id from variants')).rows.map((row) => row.id));
  const lostVariants = acknowledgedVariants.filter((id) => !variantIds.has(id)).length;
  const mismatched = (
    await check.query(`select u.id from users u left join balance_ledger l on l.user_id = u.id
                       group by u.id, u.balance having u.balance <> coalesce(sum(l.delta), 0)`)
  ).rowCount;
  const movementCounts = new Map(
    (await check.query(`select reference, count(*)::int as lines from stock_movements where reference like 'adjust-%' group by reference`)).rows.map((row) => [row.reference, row.lines]),
  );
  const lostAdjustments = acknowledgedAdjustments.filter((reference) => movementCounts.get(reference) !== hotVariants.length).length;
  const statuses = new Map((await check.query('select id, status from reservations')).rows.map((row) => [row.id, row.status]));
  const lostReservations = [...acknowledgedReservations].filter(([id, status]) => {
    const storedStatus = statuses.get(id);
    return status === 'active' ? storedStatus === undefined : storedStatus !== status;
  }).length;
  const stockOffMovements = (
    await check.query(`select v.id from variants v left join stock_movements m on m.variant_id = v.id
                       group by v.id, v.stock having v.stock <> coalesce(sum(m.delta), 0)`)
  ).rowCount;
  const reservedOffReservations = (
    await check.query(`select v.id from variants v left join reservation_lines l on l.variant_id = v.id and l.active
                       group by v.id, v.reserved having v.reserved <> coalesce(sum(l.quantity), 0) or v.reserved > v.stock`)
  ).rowCount;
  const profile = await fetch(`${service.baseUrl}/api/users/${customerId}`, { headers: auth });
  await check.end();
  console.log(
    `after restart: ${lostDeltas} acknowledged deltas lost, ${lostVariants} creates lost, ${lostAdjustments} adjustments lost, ` +
      `${lostReservations} reservations lost or in another state, ${mismatched} balances off their ledger, ` +
      `${stockOffMovements} stocks off their movements, ${reservedOffReservations} reserved counters off their reservations, service answers ${profile.status}`,
  );
  failures =
    lostDeltas + lostVariants + lostAdjustments + lostReservations + (mismatched ?? 0) + (stockOffMovements ?? 0) + (reservedOffReservations ?? 0) + (profile.status === 200 ? 0 : 1);
  service.child.kill('SIGTERM');
  await service.exited;
} finally {
  await scratch.drop();
}
console.log(failures === 0 ? 'crash safety: OK' : 'crash safety: FAILED');
process.exit(failures === 0 ? 0 : 1);
