import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { customers, products, reservations } from '../../scripts/seed-data.js';
import { freePort, postJson, startService } from '../helpers/service-process.js';
import { JWT_SECRET, createScratchDatabase, onPostgres } from '../helpers/test-app.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ADMIN_EMAIL = 'seed-admin@example.com';
const ADMIN_PASSWORD = 'seed-admin-password';

/** Runs scripts/seed.ts as `npm run seed` does, in a process of its own, with only `environment` as its settings. */
function runSeed(environment: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/seed.ts'], {
      cwd: ROOT,
      env: { ...process.env, BASE: '', ADMIN_EMAIL: '', ADMIN_PASSWORD: '', ...environment },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

interface Variant {
  id: string;
  sku: string;
  product_id: string;
  stock: number;
  reserved: number;
}
interface User {
  id: string;
  email: string;
  balance: number;
}
interface Reservation {
  reference: string | null;
  status: string;
  lines: Array<{ variant_id: string; quantity: number }>;
}

/** Everything demo in the service, as the API shows it, in a fixed order so two snapshots compare. */
async function demoData(baseUrl: string) {
  const login = await postJson(`${baseUrl}/api/auth/login`, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  const authorization = `Bearer ${login.body!.access_token as string}`;
  const get = async <Body>(pathAndQuery: string) => {
    const reply = await fetch(`${baseUrl}${pathAndQuery}`, { headers: { authorization } });
    assert.equal(reply.status, 200, pathAndQuery);
    return (await reply.json()) as Body;
  };
  const variants = (await get<{ items: Variant[] }>('/api/variants?q=DEMO-&limit=100')).items.sort((a, b) => a.sku.localeCompare(b.sku));
  const users = (await get<{ items: User[] }>('/api/users?q=%40demo.example&limit=100')).items.sort((a, b) => a.email.localeCompare(b.email));
  const customers = await Promise.all(
    users.map(async (user) => ({ ...user, ledgerEntries: (await get<{ total: number }>(`/api/users/${user.id}/balance/ledger?include_total=true&limit=1`)).total })),
  );
  const demoReservations = (await get<{ items: Reservation[] }>('/api/reservations?limit=100')).items
    .filter((reservation) => reservation.reference?.startsWith('DEMO-'))
    .map(({ reference, status, lines }) => ({ reference, status, lines }))
    .sort((a, b) => a.reference!.localeCompare(b.reference!));
  return { variants, customers, reservations: demoReservations };
}

describe('npm run seed', () => {
  it('fills a running service with demo data once, however often it runs, and stops with one line when it cannot', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'seed-'));
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    const service = await startService({ PORT: await freePort(), DATA_DIR: dataDir, DATABASE_URL: scratch?.url ?? '', ADMIN_EMAIL, ADMIN_PASSWORD, JWT_SECRET });
    try {
      const settings = { BASE: service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD };
      const first = await runSeed(settings);
      assert.equal(first.code, 0, first.stderr);
      const seeded = await demoData(service.baseUrl);

      // Variants over several products, with the stock the plan gives less what the committed order took.
      const plannedVariants = products.flatMap((product) => product.variants);
      assert.equal(seeded.variants.length, plannedVariants.length);
      assert.equal(new Set(seeded.variants.map((variant) => variant.product_id)).size, products.length);
      assert.ok(products.length >= 3);
      const plannedStock = plannedVariants.reduce((sum, variant) => sum + variant.stock, 0);
      const committedUnits = reservations.filter((plan) => plan.outcome === 'committed').flatMap((plan) => plan.lines).reduce((sum, line) => sum + line.quantity, 0);
      assert.equal(seeded.variants.reduce((sum, variant) => sum + variant.stock, 0), plannedStock - committedUnits);

      // Customers with store credit, each change in the ledger.
      assert.equal(seeded.customers.length, customers.length);
      for (const customer of seeded.customers) assert.ok(customer.balance > 0, `${customer.email} has a balance`);
      assert.equal(
        seeded.customers.reduce((sum, customer) => sum + customer.ledgerEntries, 0),
        customers.reduce((sum, customer) => sum + customer.ledger.length, 0),
      );

      // Open reservations hold stock: each variant's `reserved` is what the active ones hold of it.
      const statuses = seeded.reservations.map((reservation) => reservation.status).sort();
      assert.deepEqual(statuses, reservations.map((plan) => plan.outcome as string).sort());
      assert.ok(statuses.filter((status) => status === 'active').length >= 2);
      const held = new Map<string, number>();
      for (const line of seeded.reservations.filter((reservation) => reservation.status === 'active').flatMap((reservation) => reservation.lines)) {
        held.set(line.variant_id, (held.get(line.variant_id) ?? 0) + line.quantity);
      }
      for (const variant of seeded.variants) assert.equal(variant.reserved, held.get(variant.id) ?? 0, `${variant.sku} reserved`);
      assert.ok([...held.values()].reduce((sum, units) => sum + units, 0) > 0);
      assert.match(first.stdout, new RegExp(`variants: +${plannedVariants.length} made, 0 already there`));

      // The second run finds everything there and adds nothing.
      const second = await runSeed(settings);
      assert.equal(second.code, 0, second.stderr);
      assert.deepEqual(await demoData(service.baseUrl), seeded);
      assert.match(second.stdout, new RegExp(`variants: +0 made, ${plannedVariants.length} already there`));
      assert.match(second.stdout, /reservations: +0 made/);

      // What stops it: one line on stderr, exit 1.
      const stops = [
        { settings: { ...settings, ADMIN_PASSWORD: '' }, says: /ADMIN_PASSWORD is not set/ },
        { settings: { ...settings, ADMIN_PASSWORD: 'not-the-password' }, says: /signing in as seed-admin@example\.com .*invalid_credentials/ },
        { settings: { ...settings, BASE: `http://127.0.0.1:${await freePort()}` }, says: /cannot reach the service at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/ },
      ];
      for (const stop of stops) {
        const run = await runSeed(stop.settings);
        assert.equal(run.code, 1, run.stdout);
        assert.match(run.stderr, stop.says);
        assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      }
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
      await rm(dataDir, { recursive: true, force: true });
      await scratch?.drop();
    }
  });

  it("signs in with the admin's authenticator app (ADMIN_TOTP_SECRET) or as an API client (SEED_CLIENT_SECRET) once the admin has a second factor", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'seed-'));
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    const service = await startService({ PORT: await freePort(), DATA_DIR: dataDir, DATABASE_URL: scratch?.url ?? '', ADMIN_EMAIL, ADMIN_PASSWORD, JWT_SECRET });
    try {
      const settings = { BASE: service.baseUrl, ADMIN_EMAIL, ADMIN_PASSWORD };
      const login = await postJson(`${service.baseUrl}/api/auth/login`, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
      const authorization = { authorization: `Bearer ${login.body!.access_token as string}` };
      const scopes = ['variants:read', 'variants:write', 'inventory:read', 'reservations:write', 'users:read', 'balance:read', 'balance:write'];
      const apiClient = await postJson(`${service.baseUrl}/api/clients`, { name: 'Demo seed', scopes }, authorization);
      assert.equal(apiClient.status, 201, JSON.stringify(apiClient.body));

      // The admin enrols an authenticator app, as docs/api.md does: from now on a password alone starts no session.
      const factor = await postJson(`${service.baseUrl}/api/auth/mfa/totp`, { name: 'Phone' }, authorization);
      assert.equal(factor.status, 201, JSON.stringify(factor.body));
      const secret = factor.body!.secret as string;
      const code = TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
      const confirmed = await postJson(`${service.baseUrl}/api/auth/mfa/totp/${factor.body!.id as string}/confirm`, { code }, authorization);
      assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));

      const passwordOnly = await runSeed(settings);
      assert.equal(passwordOnly.code, 1, passwordOnly.stdout);
      assert.match(passwordOnly.stderr, /mfa_required \(this account has a second factor: set ADMIN_TOTP_SECRET .* SEED_CLIENT_SECRET\)/);

      // As the API client: everything is made, and no password is given.
      const asClient = await runSeed({ BASE: service.baseUrl, SEED_CLIENT_SECRET: apiClient.body!.secret as string });
      assert.equal(asClient.code, 0, asClient.stderr);
      const plannedVariants = products.flatMap((product) => product.variants).length;
      assert.match(asClient.stdout, new RegExp(`variants: +${plannedVariants} made, 0 already there`));
      assert.match(asClient.stdout, new RegExp(`customers: +${customers.length} made`));

      // With the app's secret: the code the confirmation used is spent, and the seed answers with the next one.
      const withCode = await runSeed({ ...settings, ADMIN_TOTP_SECRET: secret });
      assert.equal(withCode.code, 0, withCode.stderr);
      assert.match(withCode.stdout, new RegExp(`variants: +0 made, ${plannedVariants} already there`));

      const wrongSecret = await runSeed({ BASE: service.baseUrl, SEED_CLIENT_SECRET: 'shop_sk_not-a-secret' });
      assert.equal(wrongSecret.code, 1, wrongSecret.stdout);
      assert.match(wrongSecret.stderr, /SEED_CLIENT_SECRET was refused/);
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
      await rm(dataDir, { recursive: true, force: true });
      await scratch?.drop();
    }
  });
});
