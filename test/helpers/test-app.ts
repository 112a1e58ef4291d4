import { randomUUID } from 'node:crypto';
import { after, before } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/tables.js';
import { buildApp } from '../../src/app.js';
import { buildConfig, parseEnvironment, type Config } from '../../src/config.js';
import { openDatabase, type DatabaseHandle, type PoolMode } from '../../src/db/database.js';
import type { Registry } from 'prom-client';
import type { JobRunner } from '../../src/jobs/job-runner.js';
import type { IdTokenSigner } from '../../src/sessions/id-token-signer.js';
import type { Tracing } from '../../src/tracing.js';
import { migratedPGliteImage } from './pglite-image.js';
import { createScratchDatabase as createDatabaseOn } from './scratch-database.js';

export const ADMIN_EMAIL = 'root-admin@example.com';
export const ADMIN_PASSWORD = 'admin-password-1';
export const JWT_SECRET = 'test-secret-that-is-at-least-32-bytes-long!';

/** PostgreSQL when DATABASE_URL is set (each test app gets its own database), PGlite otherwise. */
export const onPostgres = Boolean(process.env.DATABASE_URL);

/** DATABASE_POOL_MODE of the run: `transaction` when DATABASE_URL names a pooler in transaction mode (PgBouncer). */
export const poolMode: PoolMode = process.env.DATABASE_POOL_MODE === 'transaction' ? 'transaction' : 'session';

export interface TestApp {
  app: FastifyInstance;
  /** The app's background runner (jobs and outboxes): `runNow` a pass, `stop` it. No handler can reach it. */
  jobs: JobRunner;
  /** The figures GET /metrics serves, read now rather than at most once a second. */
  metricsRegistry: Registry;
  /** The app's signer of ID tokens (the authorization server's, API.md section 18). */
  idTokens: IdTokenSigner;
  /** The database the app runs on, for a test to read or arrange what it checks. */
  db: Kysely<Database>;
  config: Config;
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

export function testConfig(environment: Record<string, string> = {}, databaseUrl?: string): Config {
  return buildConfig(
    parseEnvironment({
      JWT_SECRET,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      LOG_LEVEL: 'silent',
      API_RATE_LIMIT: '100000',
      LOGIN_RATE_LIMIT: '100000',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      DATABASE_POOL_MODE: poolMode,
      ...environment,
    }),
  );
}

/** Creates an empty database on the server named by DATABASE_URL. */
export async function createScratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) throw new Error('createScratchDatabase needs DATABASE_URL');
  return createDatabaseOn(baseUrl);
}

export async function openTestDatabase(databaseUrl: string | undefined, statementTimeoutMs?: number, onStatement?: (sql: string) => void, traced = false): Promise<DatabaseHandle> {
  const image = databaseUrl ? undefined : await migratedPGliteImage();
  return openDatabase({ databaseUrl, dataDir: 'memory://', poolSize: 20, poolMode, traced, image, ...(statementTimeoutMs ? { statementTimeoutMs } : {}), ...(onStatement ? { onStatement } : {}) });
}

/**
 * Builds the real app over a real, empty database. With `databaseUrl` the app joins an
 * existing scratch database (a second instance); otherwise it gets a fresh one.
 */
export async function buildTestApp(
  options: {
    environment?: Record<string, string>;
    databaseUrl?: string;
    tellOperator?: (line: string) => void;
    /** Where the app's JSON log lines go (the app logs nothing without it). */
    logLines?: string[];
    /** Tracing started by the test (src/tracing.ts): the app's server spans and statement spans. */
    tracing?: Tracing;
  } = {},
): Promise<TestApp> {
  const scratch = onPostgres && !options.databaseUrl ? await createScratchDatabase() : undefined;
  const databaseUrl = options.databaseUrl ?? scratch?.url;
  const config = testConfig(options.environment, databaseUrl);
  const database = await openTestDatabase(databaseUrl, config.databaseStatementTimeoutMs, undefined, options.tracing !== undefined);
  const logLines = options.logLines;
  const logger = logLines ? { level: 'info', stream: { write: (line: string) => void logLines.push(line) } } : false;
  const { app, jobs, metricsRegistry, idTokens } = await buildApp({ config, database, logger, tracing: options.tracing, tellOperator: options.tellOperator ?? (() => {}) });
  await app.ready();
  return {
    app,
    jobs,
    metricsRegistry,
    idTokens,
    db: database.db,
    config,
    databaseUrl,
    close: async () => {
      try {
        await app.close();
      } finally {
        await scratch?.drop();
      }
    },
  };
}

export interface Session {
  id: string;
  email: string;
  password: string;
  accessToken: string;
  refreshToken: string;
  auth: { authorization: string };
}

export async function login(app: FastifyInstance, email: string, password: string): Promise<Session> {
  const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password } });
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
  const tokens = response.json();
  const profile = await app.inject({
    method: 'GET',
    url: '/api/users/profile',
    headers: { authorization: `Bearer ${tokens.access_token}` },
  });
  return {
    id: profile.json().id,
    email,
    password,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    auth: { authorization: `Bearer ${tokens.access_token}` },
  };
}

export const loginAdmin = (app: FastifyInstance) => login(app, ADMIN_EMAIL, ADMIN_PASSWORD);

/**
 * The set-up most suites share: the app over a fresh database, built before the suite's tests
 * with its first admin signed in, and closed after them. Read the fields inside the tests.
 */
export function useAppWithAdmin(options: Parameters<typeof buildTestApp>[0] = {}) {
  const fixture = {} as { testApp: TestApp; app: FastifyInstance; jobs: JobRunner; db: Kysely<Database>; admin: Session };
  before(async () => {
    fixture.testApp = await buildTestApp(options);
    fixture.app = fixture.testApp.app;
    fixture.jobs = fixture.testApp.jobs;
    fixture.db = fixture.testApp.db;
    fixture.admin = await loginAdmin(fixture.app);
  });
  after(() => fixture.testApp.close());
  return fixture;
}

/** Two instances of the app over one fresh database (PostgreSQL), the admin signed in on the first. */
export function useTwoInstancesWithAdmin() {
  const fixture = {} as { first: TestApp; second: TestApp; admin: Session };
  before(async () => {
    fixture.first = await buildTestApp();
    fixture.second = await buildTestApp({ databaseUrl: fixture.first.databaseUrl! });
    fixture.admin = await loginAdmin(fixture.first.app);
  });
  after(async () => {
    await fixture.second?.app.close();
    await fixture.first?.close();
  });
  return fixture;
}

/** A variant body no other test uses: its own product, SKU and name. */
export const newVariantBody = (stock: number, prefix = 'test') => ({
  product_id: `${prefix}-${randomUUID().slice(0, 8)}`,
  sku: `${prefix.toUpperCase()}-${randomUUID().slice(0, 12)}`,
  name: 'Stocked',
  price: 100,
  stock,
});

export const uniqueEmail = (prefix = 'user') => `${prefix}-${randomUUID().slice(0, 8)}@example.com`;

/** Registers a user and, when asked, gives it a role through the admin API. */
export async function createUser(
  app: FastifyInstance,
  options: { role?: 'user' | 'manager' | 'admin'; admin?: Session; name?: string; email?: string } = {},
): Promise<Session> {
  const email = options.email ?? uniqueEmail(options.role ?? 'user');
  const password = 'password-123';
  const registered = await app.inject({
    method: 'POST',
    url: '/api/auth/register',
    payload: { email, password, name: options.name ?? 'Test User' },
  });
  if (registered.statusCode !== 201) throw new Error(`register failed: ${registered.statusCode} ${registered.body}`);
  if (options.role && options.role !== 'user') {
    const admin = options.admin ?? (await loginAdmin(app));
    const changed = await app.inject({
      method: 'PUT',
      url: `/api/users/${registered.json().id}/role`,
      headers: admin.auth,
      payload: { role: options.role },
    });
    if (changed.statusCode !== 200) throw new Error(`role change failed: ${changed.body}`);
  }
  return login(app, email, password);
}

/** Asserts the shape every error reply shares, and returns its parsed body. */
export function problemOf(response: LightMyRequestResponse): {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: { path: string; message: string }[];
} {
  const contentType = String(response.headers['content-type']);
  if (!contentType.startsWith('application/problem+json')) {
    throw new Error(`expected problem+json, got ${contentType}: ${response.body}`);
  }
  const body = response.json();
  if (body.status !== response.statusCode || typeof body.detail !== 'string' || typeof body.code !== 'string') {
    throw new Error(`malformed problem: ${response.body}`);
  }
  return body;
}
