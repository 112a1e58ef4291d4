/**
 * Crash safety on PostgreSQL: writes under load, SIGKILL mid-way, restart, then checks that
 * every write acknowledged to a client is stored and every ledger still sums to its balance.
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

  const acknowledgedReasons: string[] = [];
  const acknowledgedVariants: string[] = [];
  let stop = false;
  const worker = async (index: number) => {
    while (!stop) {
      try {
        if (index % 2 === 0) {
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
  console.log(`killed with SIGKILL after ${acknowledgedReasons.length} acknowledged deltas and ${acknowledgedVariants.length} acknowledged creates`);

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
  const profile = await fetch(`${service.baseUrl}/api/users/${customerId}`, { headers: auth });
  await check.end();
  console.log(`after restart: ${lostDeltas} acknowledged deltas lost, ${lostVariants} acknowledged creates lost, ${mismatched} balances off their ledger, service answers ${profile.status}`);
  failures = lostDeltas + lostVariants + (mismatched ?? 0) + (profile.status === 200 ? 0 : 1);
  service.child.kill('SIGTERM');
  await service.exited;
} finally {
  await scratch.drop();
}
console.log(failures === 0 ? 'crash safety: OK' : 'crash safety: FAILED');
process.exit(failures === 0 ? 0 : 1);
