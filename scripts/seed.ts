/**
 * `npm run seed`: demo data (scripts/seed-data.ts) for the staff console. It talks to a running
 * service over HTTP as any client would, signed in as an admin: the embedded database under
 * DATA_DIR belongs to the running service, and going through the API also records the events,
 * stock movements and ledger entries a real shop would have.
 *
 * Settings, from the environment or ./.env as `npm start` reads them: BASE (default
 * http://127.0.0.1:3000), ADMIN_EMAIL (default admin@localhost, the first admin `npm start`
 * creates) and ADMIN_PASSWORD (required), and ADMIN_TOTP_SECRET, the base32 secret of the
 * admin's authenticator app, once the admin has one (docs/api.md enrols one): the seed then
 * answers the login's `mfa_required` with the app's code. Or, instead of the admin, an API
 * client by its secret (SEED_CLIENT_SECRET, `shop_sk_…`), holding the scopes the seed uses
 * (SEED_CLIENT_SCOPES below): then no password or second factor is needed. It calls the API
 * through the typed client in client/.
 *
 * A rerun adds nothing that is already there: a 409 `sku_taken` or `email_taken` means "made
 * before"; a balance change is skipped when the customer's ledger already holds its reason,
 * and a reservation when one with its reference is already in the planned state. Those
 * checks, rather than Idempotency-Keys alone, because keys live 24 hours and a rerun may come
 * later. An open reservation whose predecessor expired (they live at most 24 hours) is made
 * again, so the console has open ones to show.
 */
import { randomBytes } from 'node:crypto';
import dotenv from 'dotenv';
import { Secret, TOTP } from 'otpauth';
import { createShopClient, NetworkError, ProblemError, reply, type Problem } from '../client/shop-client.js';
import { customers, products, reservations, skuOf, variantNameOf, type ReservationPlan } from './seed-data.js';

/** A reason to stop, printed as one line. */
class SeedStop extends Error {}

// The settings `npm start` was given in ./.env apply here too; the environment wins over the file.
dotenv.config({ quiet: true });
const base = (process.env.BASE || 'http://127.0.0.1:3000').replace(/\/+$/, '');
const adminEmail = process.env.ADMIN_EMAIL || 'admin@localhost';
const adminPassword = process.env.ADMIN_PASSWORD;
const adminTotpSecret = process.env.ADMIN_TOTP_SECRET?.replace(/\s+/g, '').toUpperCase();
const seedClientSecret = process.env.SEED_CLIENT_SECRET;
/** What the seed does, as an API client's scopes: make variants and reservations, read users and ledgers, credit balances. */
const SEED_CLIENT_SCOPES = ['variants:read', 'variants:write', 'inventory:read', 'reservations:write', 'users:read', 'balance:read', 'balance:write'];
let accessToken: string | undefined;

const client = createShopClient({ baseUrl: base, accessToken: () => accessToken, fetch: (request) => fetch(request, { signal: AbortSignal.timeout(30_000) }) });

type Call<Body> = Promise<{ data?: Body; error?: unknown; response: Response }>;

/**
 * One request: its body, or the problem it was answered with, for the caller to judge. A
 * network failure or a reply that is not this service's stops the seed with the reason.
 */
async function attempt<Body>(call: Call<Body>): Promise<{ body: Body; problem?: never } | { body?: never; problem: Problem }> {
  try {
    return { body: (await reply(call)).body };
  } catch (error) {
    if (error instanceof ProblemError) return { problem: error.problem };
    if (error instanceof SyntaxError) throw new SeedStop(`a reply from ${base} was not JSON; is BASE this service?`);
    const failure = error instanceof NetworkError ? error.reason : error;
    const cause = (failure as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (failure as Error).message;
    throw new SeedStop(`cannot reach the service at ${base} (${why}); start it with \`npm start\`, or set BASE to where it listens`);
  }
}

/** Stops the seed, saying which request got what. */
function refused(what: string, problem: Problem): never {
  throw new SeedStop(`${what} answered ${problem.status} ${problem.code}: ${problem.detail}`);
}

/** One request that must succeed. */
async function must<Body>(what: string, call: Call<Body>): Promise<Body> {
  const { body, problem } = await attempt(call);
  return problem ? refused(what, problem) : (body as Body);
}

/** The code an authenticator app shows for ADMIN_TOTP_SECRET, `ahead` 30-second steps from now (RFC 6238 as API.md section 12 fixes it). */
function totpCode(ahead: number): string {
  if (!/^[A-Z2-7]+=*$/.test(adminTotpSecret ?? '')) throw new SeedStop('ADMIN_TOTP_SECRET is not a base32 secret (letters A to Z and digits 2 to 7, as the enrolment showed it)');
  return TOTP.generate({ secret: Secret.fromBase32(adminTotpSecret!), algorithm: 'SHA1', digits: 6, period: 30, timestamp: Date.now() + ahead * 30_000 });
}

/**
 * The login's second step with the app's code. Each code is good once, so when the current one
 * was just used (by a person, or by the docs' walkthrough) the next step's code, which the
 * service also accepts, is tried; if both were used, waiting for the next code is the way.
 */
async function secondStep(mfaToken: string): Promise<string> {
  for (const ahead of [0, 1]) {
    const { body, problem } = await attempt(client.POST('/api/auth/login/mfa', { body: { mfa_token: mfaToken, code: totpCode(ahead) } }));
    if (body) return body.access_token;
    if (problem.code !== 'invalid_mfa_code') refused('POST /api/auth/login/mfa', problem);
  }
  throw new SeedStop(
    `the codes of ADMIN_TOTP_SECRET were refused (invalid_mfa_code): each code is good once, so wait 30 seconds for the next and run the seed again; if it fails again, the secret is not ${adminEmail}'s`,
  );
}

async function logIn(): Promise<void> {
  if (seedClientSecret) {
    // A client's secret is a bearer token itself (docs/api.md, "Connect a service"); a cheap read tells a wrong one at once.
    accessToken = seedClientSecret;
    const { problem } = await attempt(client.GET('/api/variants', { params: { query: { limit: 1 } } }));
    if (problem) throw new SeedStop(`SEED_CLIENT_SECRET was refused at ${base}: ${problem.status} ${problem.code} (${problem.detail}); it needs the scopes ${SEED_CLIENT_SCOPES.join(', ')}`);
    return;
  }
  const { body, problem } = await attempt(client.POST('/api/auth/login', { body: { email: adminEmail, password: adminPassword! } }));
  if (body && 'access_token' in body) {
    accessToken = body.access_token;
    return;
  }
  const code = problem?.code ?? 'mfa_required';
  if (code === 'mfa_required' && adminTotpSecret && problem?.mfa_token && problem.methods?.includes('totp')) {
    accessToken = await secondStep(problem.mfa_token);
    return;
  }
  const hints: Record<string, string> = {
    invalid_credentials: 'check ADMIN_EMAIL and ADMIN_PASSWORD',
    mfa_required: adminTotpSecret
      ? 'this account has no authenticator app to answer with ADMIN_TOTP_SECRET'
      : "this account has a second factor: set ADMIN_TOTP_SECRET to its authenticator app's secret, or sign in as an API client with SEED_CLIENT_SECRET",
    not_found: `no login route there; set BASE to the service's root, such as http://127.0.0.1:3000`,
  };
  const hint = hints[code] ?? problem?.detail ?? 'no detail';
  throw new SeedStop(`signing in as ${adminEmail} at ${base} failed: ${problem?.status ?? 200} ${code} (${hint})`);
}

const made = { variants: 0, customers: 0, balanceChanges: 0, reservations: { active: 0, committed: 0, released: 0 } };
const alreadyThere = { variants: 0, customers: 0, balanceChanges: 0, reservations: 0 };

/** Creates every variant, or finds it by SKU; returns SKU to id, for the reservations. */
async function seedVariants(): Promise<Map<string, string>> {
  const idsBySku = new Map<string, string>();
  for (const product of products) {
    for (const { attributes, stock } of product.variants) {
      const sku = skuOf(product, attributes);
      const body = { product_id: product.productId, sku, name: variantNameOf(product, attributes), price: product.price, stock, attributes };
      const created = await attempt(client.POST('/api/variants', { body }));
      if (created.body) {
        made.variants++;
        idsBySku.set(sku, created.body.id);
        continue;
      }
      // Another problem (duplicate_attributes: someone else's variant is in the way) stops the seed, saying so.
      if (created.problem.code !== 'sku_taken') refused(`POST /api/variants (${sku})`, created.problem);
      const found = await must(`GET /api/variants/sku/${sku}`, client.GET('/api/variants/sku/{sku}', { params: { path: { sku } } }));
      alreadyThere.variants++;
      idsBySku.set(sku, found.id);
    }
  }
  return idsBySku;
}

/** Registers each customer (or finds it by email) and writes the ledger entries it lacks. */
async function seedCustomers(): Promise<void> {
  for (const customer of customers) {
    // An unguessable password nobody is told: the demo accounts are for the console to show, not
    // a way into a service the seed was pointed at. A password reset gives one a password.
    const password = randomBytes(24).toString('base64url');
    const body = { email: customer.email, password, name: customer.name, ...(customer.phone ? { phone: customer.phone } : {}) };
    const registered = await attempt(client.POST('/api/auth/register', { body }));
    if (registered.problem?.status === 403) {
      console.warn('seed: registration is closed (ALLOW_REGISTRATION=false), so no demo customers were made');
      return;
    }
    if (registered.problem && registered.problem.code !== 'email_taken') refused('POST /api/auth/register', registered.problem);
    const userId = registered.body ? registered.body.id : await userIdByEmail(customer.email);
    if (registered.body) made.customers++;
    else alreadyThere.customers++;

    const reasonsWritten = await ledgerReasons(userId);
    for (const [index, change] of customer.ledger.entries()) {
      if (reasonsWritten.has(change.reason)) {
        alreadyThere.balanceChanges++;
        continue;
      }
      // The key names the user and the entry, so a repeat within 24 hours replays instead of adding.
      const headers = { 'idempotency-key': `demo-seed-balance-${userId}-${index}` };
      await must(`PUT /api/users/${userId}/balance`, client.PUT('/api/users/{id}/balance', { params: { path: { id: userId }, header: headers }, body: change }));
      made.balanceChanges++;
    }
  }
}

/** Every reason in the user's ledger, page after page (a demo customer may have been used since). */
async function ledgerReasons(userId: string): Promise<Set<string>> {
  const reasons = new Set<string>();
  let cursor: string | undefined;
  do {
    const query = { limit: 100, ...(cursor ? { cursor } : {}) };
    const page = await must(`GET /api/users/${userId}/balance/ledger`, client.GET('/api/users/{id}/balance/ledger', { params: { path: { id: userId }, query } }));
    for (const entry of page.items) reasons.add(entry.reason);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return reasons;
}

async function userIdByEmail(email: string): Promise<string> {
  const page = await must('GET /api/users', client.GET('/api/users', { params: { query: { limit: 100, q: email } } }));
  const user = page.items.find((item) => item.email.toLowerCase() === email.toLowerCase());
  if (!user) throw new SeedStop(`${email} is taken, yet no listed user has it`);
  return user.id;
}

/** Leaves each planned reservation in its planned state, making it only when none with its reference is. */
async function seedReservation(plan: ReservationPlan, idsBySku: Map<string, string>): Promise<void> {
  const query = { limit: 100, reference: plan.reference };
  const existing = (await must('GET /api/reservations', client.GET('/api/reservations', { params: { query } }))).items;
  if (existing.some((reservation) => reservation.status === plan.outcome)) {
    alreadyThere.reservations++;
    return;
  }
  // A reservation a stopped run left active is finished rather than doubled.
  let reservation = plan.outcome === 'active' ? undefined : existing.find((candidate) => candidate.status === 'active');
  if (!reservation) {
    const lines = plan.lines.map(({ sku, quantity }) => ({ variant_id: idsBySku.get(sku)!, quantity }));
    // Open ones live as long as the service allows (a day), so the console still shows them tomorrow.
    const body = { lines, reference: plan.reference, ...(plan.outcome === 'active' ? { expires_in: 86_400 } : {}) };
    reservation = await must(`POST /api/reservations (${plan.reference})`, client.POST('/api/reservations', { body }));
  }
  if (plan.outcome !== 'active') {
    const params = { path: { id: reservation.id } };
    const finished = plan.outcome === 'committed' ? client.POST('/api/reservations/{id}/commit', { params }) : client.POST('/api/reservations/{id}/release', { params });
    await must(`finishing reservation ${reservation.id} as ${plan.outcome}`, finished);
  }
  made.reservations[plan.outcome]++;
}

async function seed(): Promise<void> {
  if (!adminPassword && !seedClientSecret) {
    throw new SeedStop("ADMIN_PASSWORD is not set: run `ADMIN_PASSWORD='…' npm run seed` with the password the first `npm start` printed, or sign in as an API client with SEED_CLIENT_SECRET");
  }
  if (!/^https?:\/\/[^/]/.test(base)) throw new SeedStop(`BASE must be the service's http(s) address, such as http://127.0.0.1:3000, not "${base}"`);
  await logIn();
  const idsBySku = await seedVariants();
  await seedCustomers();
  for (const plan of reservations) await seedReservation(plan, idsBySku);

  const { active, committed, released } = made.reservations;
  console.log(`Demo data on ${base} (made, and already there from an earlier run):`);
  console.log(`  variants:        ${made.variants} made, ${alreadyThere.variants} already there (${products.length} products, SKUs DEMO-…)`);
  console.log(`  customers:       ${made.customers} made, ${alreadyThere.customers} already there (emails …@demo.example)`);
  console.log(`  balance changes: ${made.balanceChanges} made, ${alreadyThere.balanceChanges} already there`);
  console.log(`  reservations:    ${active + committed + released} made (${active} open, ${committed} committed, ${released} released), ${alreadyThere.reservations} already there`);
}

try {
  await seed();
} catch (error) {
  console.error(`seed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
