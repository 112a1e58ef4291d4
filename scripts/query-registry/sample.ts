/**
 * The pieces every area's registry file is written with (see index.ts for what the registry is):
 * a sample call of a repository function, a not-SQL entry, and the sample rows the samples find.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../src/db/tables.js';
import type { CallerRead, UserKey } from '../../src/sessions/caller-query.js';

/** One function's sample: the values it is called with (for the header) and the call itself. */
export interface Sample {
  /** What the header of the function's statements shows in parentheses. */
  summary: string;
  /** Runs the call inside the generator's transaction, which is rolled back after it. */
  run(trx: Transaction<Database>): Promise<unknown>;
  /** The export it calls (a plain call or a read beside the caller), so the test can tell an entry under the wrong name. */
  calls?: unknown;
}

/** An export that sends no statement of its own, with the one-word reason. */
export interface NotSql {
  notSql: 'constant' | 'helper' | 'fragment' | 'factory' | 'predicate';
}

export type Entry = Sample | NotSql;

/** A repository file: its path from the project's root, its area (the queries/<area>.sql it goes to), an entry per export. */
export interface RepositoryFile {
  file: string;
  area: string;
  entries: Record<string, Entry>;
}

export const isSample = (entry: Entry): entry is Sample => 'run' in entry;

export const notSql = (reason: NotSql['notSql']): NotSql => ({ notSql: reason });

/**
 * The sample of `fn(trx, ...args)`: the header shows `args`. A function that returns a query
 * builder (a page its caller executes) has it executed, so its statement is sent.
 */
export function call<Args extends unknown[]>(fn: (db: Transaction<Database>, ...args: Args) => unknown, ...args: Args): Sample {
  return {
    summary: args.map(describeValue).join(', '),
    calls: fn,
    run: async (trx) => {
      const result = fn(trx, ...args);
      if (isExecutable(result)) return result.execute();
      return result;
    },
  };
}

/** A sample that cannot be a plain call (an async generator, a callback for the database). */
export function custom(summary: string, run: (trx: Transaction<Database>) => Promise<unknown>): Sample {
  return { summary, run };
}

/**
 * A read beside the caller (callerRead): the statement a user's request sends, then the data
 * alone (what a request whose caller an earlier statement admitted sends). The statements for
 * an API client's caller differ only in the caller's part, shown in sessions.sql.
 */
export function callerReadSample<Values extends unknown[]>(read: CallerRead<unknown, Values>, ...values: Values): Sample {
  return {
    summary: `beside a user's caller, then alone: ${values.map(describeValue).join(', ')}`,
    calls: read,
    run: async (trx) => {
      await read.run(trx, USER_CALLER, values);
      await read.alone(trx, values);
    },
  };
}

function isExecutable(value: unknown): value is { execute(): Promise<unknown> } {
  return typeof value === 'object' && value !== null && 'execute' in value && typeof value.execute === 'function';
}

/** A sample value as the header shows it: plain, and the same on every run. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'function') return value.name || 'function';
  if (value instanceof Date) return `'${value.toISOString()}'`;
  if (value instanceof Uint8Array) return `<${value.length} bytes>`;
  if (Array.isArray(value)) return `[${value.map(describeValue).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    if ('isRawBuilder' in value) return 'sql`…`';
    const fields = Object.entries(value).map(([key, field]) => `${key}: ${describeValue(field)}`);
    return fields.length === 0 ? '{}' : `{ ${fields.join(', ')} }`;
  }
  return String(value);
}

/**
 * The ids of the sample rows (seedSampleRows): fixed, so the headers read the same on every
 * run. The last digits say which row: 1 a user, 2 a session, and so on.
 */
export const SAMPLE = {
  userId: '00000000-0000-4000-8000-000000000001',
  sessionId: '00000000-0000-4000-8000-000000000002',
  variantId: '00000000-0000-4000-8000-000000000003',
  reservationId: '00000000-0000-4000-8000-000000000004',
  clientId: '00000000-0000-4000-8000-000000000005',
  secretId: '00000000-0000-4000-8000-000000000006',
  webhookId: '00000000-0000-4000-8000-000000000007',
  eventId: '00000000-0000-4000-8000-000000000008',
  deliveryId: '00000000-0000-4000-8000-000000000009',
  importId: '00000000-0000-4000-8000-000000000010',
  uploadId: '00000000-0000-4000-8000-000000000011',
  factorId: '00000000-0000-4000-8000-000000000012',
  loginTokenId: '00000000-0000-4000-8000-000000000013',
  locationId: '00000000-0000-4000-8000-000000000016',
  providerId: '00000000-0000-4000-8000-000000000017',
  identityId: '00000000-0000-4000-8000-000000000018',
  /** An id no sample row has (a new row's). */
  newId: '00000000-0000-4000-8000-000000000099',
  date: new Date('2026-01-01T00:00:00.000Z'),
} as const;

/** A first page of twenty. */
export const FIRST_PAGE = { limit: 20 };
/** A page after a position (the keyset's comparison shows). */
export const NEXT_PAGE = { limit: 20, after: { createdAt: SAMPLE.date, id: SAMPLE.newId } };

export const USER_CALLER: UserKey = { kind: 'user', userId: SAMPLE.userId, sessionId: SAMPLE.sessionId };

/** Stands for the steps that record a change's events (events/event-recorder.ts, recordingSteps), which are not a repository's. */
export function recordNothing(step: string) {
  return sql`recorded as (select 1 from ${sql.table(step)})`;
}

/**
 * The rows the samples find, written once before them: a function that reads, locks or updates a
 * row by id then sends every statement it would in use (a refresh token's rotation, a session's
 * end and its tokens), and inserts meet their foreign keys. Each sample's own writes are rolled
 * back, so every sample starts from these rows.
 */
export async function seedSampleRows(db: Kysely<Database>): Promise<void> {
  const id = SAMPLE;
  const statements = [
    sql`insert into users (id, email, name, role, password_hash) values (${id.userId}, 'ada@example.com', 'Ada', 'admin', 'hash')`,
    sql`insert into sessions (id, user_id, created_at, last_used_at, expires_at, auth_time) values (${id.sessionId}, ${id.userId}, now(), now() - interval '1 hour', now() + interval '1 day', now())`,
    sql`insert into refresh_tokens (id, user_id, family_id, token_hash, expires_at) values (gen_random_uuid(), ${id.userId}, ${id.sessionId}, 'refresh-hash', now() + interval '1 day')`,
    sql`insert into variants (id, product_id, sku, name, price, stock, reserved, attributes) values (${id.variantId}, 'P-1', 'SKU-1', 'Red shirt', 1999, 10, 2, '{"color":"red"}')`,
    sql`insert into reservations (id, status, expires_at, created_at, updated_at) values (${id.reservationId}, 'active', now() + interval '1 hour', now(), now())`,
    sql`insert into reservation_lines (reservation_id, position, variant_id, quantity) values (${id.reservationId}, 0, ${id.variantId}, 2)`,
    sql`insert into api_clients (id, name, scopes, status, created_by, created_at, updated_at) values (${id.clientId}, 'Shop front', '{variants:read}', 'active', ${id.userId}, now(), now())`,
    sql`insert into api_client_secrets (id, client_id, secret_hash, prefix, created_at) values (${id.secretId}, ${id.clientId}, 'secret-hash', 'sk_1', now())`,
    sql`insert into webhooks (id, url, events, secret, created_at, updated_at) values (${id.webhookId}, 'https://example.com/hook', '{variant.created}', 'whsec', now(), now())`,
    sql`insert into events (id, type, created_at, subject_type, subject_id, data) values (${id.eventId}, 'user.created', now(), 'user', ${id.userId}, '{"email":"ada@example.com"}')`,
    sql`insert into webhook_deliveries (id, webhook_id, event_id, status, next_attempt_at, created_at) values (${id.deliveryId}, ${id.webhookId}, ${id.eventId}, 'failed', now(), now())`,
    sql`insert into import_uploads (upload_id, position, data, created_at) values (${id.uploadId}, 0, '\\x00', now())`,
    sql`insert into variant_imports (id, upload_id, status, format, mode, on_error, dry_run, byte_size, created_by, actor_type, created_at, next_attempt_at, claim_token) values (${id.importId}, ${id.uploadId}, 'running', 'csv', 'upsert', 'reject_all', false, 1, ${id.userId}, 'user', now(), now(), '00000000-0000-4000-8000-000000000014')`,
    sql`insert into mfa_factors (id, user_id, type, name, totp_secret, confirmed_at, created_at) values (${id.factorId}, ${id.userId}, 'totp', 'Phone', 'SECRET', now(), now())`,
    sql`insert into mfa_login_tokens (id, token_hash, user_id, session_version, created_at, expires_at) values (${id.loginTokenId}, 'login-hash', ${id.userId}, 0, now(), now() + interval '5 minutes')`,
    sql`insert into mfa_failure_locks (user_id, updated_at) values (${id.userId}, now())`,
    sql`insert into locations (id, code, name, priority) values (${id.locationId}, 'berlin-1', 'Berlin', 10)`,
    sql`insert into identity_providers (id, name, issuer, client_id, client_secret, scopes, button_label, discovery, discovered_at, discovery_attempted_at) values (${id.providerId}, 'Google', 'https://accounts.google.com', 'shop', 'sealed', '{openid,email,profile}', 'Sign in with Google', '{}', now(), now() - interval '2 hours')`,
    sql`insert into user_identities (id, user_id, provider_id, subject, email, linked_at) values (${id.identityId}, ${id.userId}, ${id.providerId}, 'google-sub', 'ada@example.com', now())`,
    sql`insert into signing_keys (kid, alg, public_jwk, private_pem, status, created_at) values ('key-1', 'EdDSA', '{}', 'pem', 'retiring', now())`,
  ];
  for (const statement of statements) await statement.execute(db);
}
