/**
 * `npm run seed`: demo data (scripts/seed-data.ts) for the staff console. It talks to a running
 * service over HTTP as any client would, signed in as an admin: the embedded database under
 * DATA_DIR belongs to the running service, and going through the API also records the events,
 * stock movements and ledger entries a real shop would have.
 *
 * Settings: BASE (default http://127.0.0.1:3000), ADMIN_EMAIL (default admin@localhost, the
 * first admin `npm start` creates) and ADMIN_PASSWORD (required).
 *
 * A rerun adds nothing that is already there: a 409 `sku_taken` or `email_taken` means "made
 * before"; a balance change is skipped when the customer's ledger already holds its reason,
 * and a reservation when one with its reference is already in the planned state. Those
 * checks, rather than Idempotency-Keys alone, because keys live 24 hours and a rerun may come
 * later. An open reservation whose predecessor expired (they live at most 24 hours) is made
 * again, so the console has open ones to show.
 */
import { randomBytes } from 'node:crypto';
import { customers, products, reservations, skuOf, variantNameOf, type ReservationPlan } from './seed-data.js';

/** A reason to stop, printed as one line. */
class SeedStop extends Error {}

interface Problem {
  code?: string;
  detail?: string;
}
interface Page<Item> {
  items: Item[];
}
interface Identified {
  id: string;
}
interface Reservation extends Identified {
  status: string;
}

const base = (process.env.BASE || 'http://127.0.0.1:3000').replace(/\/+$/, '');
const adminEmail = process.env.ADMIN_EMAIL || 'admin@localhost';
const adminPassword = process.env.ADMIN_PASSWORD;
let accessToken: string | undefined;

/** One request; a network failure stops the seed with the reason, any reply is returned. */
async function call<Body>(method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (accessToken) headers.authorization = `Bearer ${accessToken}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new SeedStop(`cannot reach the service at ${base} (${why}); start it with \`npm start\`, or set BASE to where it listens`);
  }
  const text = await response.text();
  try {
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Body & Problem };
  } catch {
    throw new SeedStop(`${method} ${path} answered ${response.status} with no JSON; is ${base} this service?`);
  }
}

/** Stops the seed, saying which request got what. */
function refused(path: string, reply: { status: number; body: Problem }): never {
  throw new SeedStop(`${path} answered ${reply.status} ${reply.body.code ?? ''}: ${reply.body.detail ?? 'no detail'}`);
}

function expectStatus<Reply extends { status: number; body: Problem }>(reply: Reply, path: string, ...expected: number[]): Reply {
  return expected.includes(reply.status) ? reply : refused(path, reply);
}

async function logIn(): Promise<void> {
  const reply = await call<{ access_token: string }>('POST', '/api/auth/login', { body: { email: adminEmail, password: adminPassword } });
  if (reply.status === 200) {
    accessToken = reply.body.access_token;
    return;
  }
  const hints: Record<string, string> = {
    invalid_credentials: 'check ADMIN_EMAIL and ADMIN_PASSWORD',
    mfa_required: 'this account has a second factor and the seed signs in with a password only; use an admin without one',
    not_found: `no login route there; set BASE to the service's root, such as http://127.0.0.1:3000`,
  };
  const hint = hints[reply.body.code ?? ''] ?? reply.body.detail ?? 'no detail';
  throw new SeedStop(`signing in as ${adminEmail} at ${base} failed: ${reply.status} ${reply.body.code ?? ''} (${hint})`);
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
      const created = expectStatus(await call<Identified>('POST', '/api/variants', { body }), `POST /api/variants (${sku})`, 201, 409);
      if (created.status === 201) {
        made.variants++;
        idsBySku.set(sku, created.body.id);
        continue;
      }
      // Another 409 (duplicate_attributes) means someone else's variant is in the way: say so.
      if (created.body.code !== 'sku_taken') refused(`POST /api/variants (${sku})`, created);
      const found = expectStatus(await call<Identified>('GET', `/api/variants/sku/${sku}`), `GET /api/variants/sku/${sku}`, 200);
      alreadyThere.variants++;
      idsBySku.set(sku, found.body.id);
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
    const registered = expectStatus(await call<Identified>('POST', '/api/auth/register', { body }), 'POST /api/auth/register', 201, 403, 409);
    if (registered.status === 403) {
      console.warn('seed: registration is closed (ALLOW_REGISTRATION=false), so no demo customers were made');
      return;
    }
    if (registered.status === 409 && registered.body.code !== 'email_taken') refused('POST /api/auth/register', registered);
    const userId = registered.status === 201 ? registered.body.id : await userIdByEmail(customer.email);
    if (registered.status === 201) made.customers++;
    else alreadyThere.customers++;

    const ledgerPath = `/api/users/${userId}/balance/ledger?limit=100`;
    const ledger = expectStatus(await call<Page<{ reason: string }>>('GET', ledgerPath), ledgerPath, 200);
    const reasonsWritten = new Set(ledger.body.items.map((entry) => entry.reason));
    for (const [index, change] of customer.ledger.entries()) {
      if (reasonsWritten.has(change.reason)) {
        alreadyThere.balanceChanges++;
        continue;
      }
      // The key names the user and the entry, so a repeat within 24 hours replays instead of adding.
      const headers = { 'idempotency-key': `demo-seed-balance-${userId}-${index}` };
      expectStatus(await call('PUT', `/api/users/${userId}/balance`, { body: change, headers }), `PUT /api/users/${userId}/balance`, 200);
      made.balanceChanges++;
    }
  }
}

async function userIdByEmail(email: string): Promise<string> {
  const path = `/api/users?limit=100&q=${encodeURIComponent(email)}`;
  const page = expectStatus(await call<Page<Identified & { email: string }>>('GET', path), path, 200);
  const user = page.body.items.find((item) => item.email.toLowerCase() === email.toLowerCase());
  if (!user) throw new SeedStop(`${email} is taken, yet no listed user has it`);
  return user.id;
}

/** Leaves each planned reservation in its planned state, making it only when none with its reference is. */
async function seedReservation(plan: ReservationPlan, idsBySku: Map<string, string>): Promise<void> {
  const listPath = `/api/reservations?limit=100&reference=${encodeURIComponent(plan.reference)}`;
  const existing = expectStatus(await call<Page<Reservation>>('GET', listPath), listPath, 200).body.items;
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
    reservation = expectStatus(await call<Reservation>('POST', '/api/reservations', { body }), `POST /api/reservations (${plan.reference})`, 201).body;
  }
  if (plan.outcome !== 'active') {
    const action = plan.outcome === 'committed' ? 'commit' : 'release';
    const path = `/api/reservations/${reservation.id}/${action}`;
    expectStatus(await call('POST', path), path, 200);
  }
  made.reservations[plan.outcome]++;
}

async function seed(): Promise<void> {
  if (!adminPassword) {
    throw new SeedStop("ADMIN_PASSWORD is not set: run `ADMIN_PASSWORD='…' npm run seed` with the password the first `npm start` printed");
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
