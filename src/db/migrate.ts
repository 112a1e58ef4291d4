import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { initialSchema } from './migrations/0001-initial-schema.js';
import { rowValueKeysetIndexes } from './migrations/0002-row-value-keyset-indexes.js';
import { ledgerActorWithoutForeignKey } from './migrations/0003-ledger-actor-without-foreign-key.js';
import { userSearchTrigramIndexes } from './migrations/0004-user-search-trigram-indexes.js';
import { idempotencyReplyHeaders } from './migrations/0005-idempotency-reply-headers.js';
import { variantListIndexes } from './migrations/0006-variant-list-indexes.js';
import { eventsAndWebhooks } from './migrations/0007-events-and-webhooks.js';
import { sessions } from './migrations/0008-sessions.js';
import { signingKeys } from './migrations/0009-signing-keys.js';
import { email } from './migrations/0010-email.js';
import { stockMovements } from './migrations/0011-stock-movements.js';
import { reservations } from './migrations/0012-reservations.js';
import { hardening } from './migrations/0013-hardening.js';
import { apiClients } from './migrations/0014-api-clients.js';
import { secondFactors } from './migrations/0015-second-factors.js';
import { privacy } from './migrations/0016-privacy.js';
import { imports } from './migrations/0017-imports.js';
import { eventTraceContext } from './migrations/0018-event-trace-context.js';
import { reservedReconciliation } from './migrations/0019-reserved-reconciliation.js';
import { callerChangeNotifications } from './migrations/0020-caller-change-notifications.js';
import { secondFactorLocks } from './migrations/0021-second-factor-locks.js';
import { clientTokenGenerations } from './migrations/0022-client-token-generations.js';
import { dropCallerChangeNotifications } from './migrations/0023-drop-caller-change-notifications.js';
import { clientTypes } from './migrations/0024-client-types.js';
import { idTokenKeys } from './migrations/0026-id-token-keys.js';
import { passkeySignIn } from './migrations/0027-passkey-sign-in.js';
import { locations } from './migrations/0028-locations.js';
import { appSessions } from './migrations/0029-app-sessions.js';
import { emailCodes } from './migrations/0030-email-codes.js';
import { authorizationServer } from './migrations/0031-authorization-server.js';
import { stockLevels } from './migrations/0035-stock-levels.js';
import { availableAtInactiveLocations } from './migrations/0036-available-at-inactive-locations.js';
import { emailCodeSignups } from './migrations/0038-email-code-signups.js';
import { identityProviders } from './migrations/0039-identity-providers.js';
import { federatedSignIns } from './migrations/0041-federated-sign-ins.js';
import { identityConnections } from './migrations/0042-identity-connections.js';
import { locationStatusAfresh } from './migrations/0043-location-status-afresh.js';

/** Ordered by name; a new migration gets the next number and is never edited once released. */
const migrations: Record<string, Migration> = {
  '0001-initial-schema': initialSchema,
  '0002-row-value-keyset-indexes': rowValueKeysetIndexes,
  '0003-ledger-actor-without-foreign-key': ledgerActorWithoutForeignKey,
  '0004-user-search-trigram-indexes': userSearchTrigramIndexes,
  '0005-idempotency-reply-headers': idempotencyReplyHeaders,
  '0006-variant-list-indexes': variantListIndexes,
  '0007-events-and-webhooks': eventsAndWebhooks,
  '0008-sessions': sessions,
  '0009-signing-keys': signingKeys,
  '0010-email': email,
  '0011-stock-movements': stockMovements,
  '0012-reservations': reservations,
  '0013-hardening': hardening,
  '0014-api-clients': apiClients,
  '0015-second-factors': secondFactors,
  '0016-privacy': privacy,
  '0017-imports': imports,
  '0018-event-trace-context': eventTraceContext,
  '0019-reserved-reconciliation': reservedReconciliation,
  '0020-caller-change-notifications': callerChangeNotifications,
  '0021-second-factor-locks': secondFactorLocks,
  '0022-client-token-generations': clientTokenGenerations,
  '0023-drop-caller-change-notifications': dropCallerChangeNotifications,
  '0024-client-types': clientTypes,
  '0026-id-token-keys': idTokenKeys,
  '0027-passkey-sign-in': passkeySignIn,
  '0028-locations': locations,
  '0029-app-sessions': appSessions,
  '0030-email-codes': emailCodes,
  '0031-authorization-server': authorizationServer,
  '0035-stock-levels': stockLevels,
  '0036-available-at-inactive-locations': availableAtInactiveLocations,
  '0038-email-code-signups': emailCodeSignups,
  '0039-identity-providers': identityProviders,
  '0041-federated-sign-ins': federatedSignIns,
  '0042-identity-connections': identityConnections,
  '0043-location-status-afresh': locationStatusAfresh,
};

/**
 * Each migration as the run's transaction needs it: one that throws (an SQL error, or its own
 * code's after some DDL ran) rolls back everything the run did before the error propagates, so
 * the COMMIT that releases the lock (migration-lock.ts) commits nothing half-done.
 */
const undoneOnFailure = (migration: Migration): Migration => ({
  up: async (db) => {
    try {
      await migration.up(db);
    } catch (error) {
      await sql`rollback`.execute(db);
      await sql`begin`.execute(db);
      throw error;
    }
  },
});

/**
 * Runs pending migrations in one transaction under a transaction-level advisory lock
 * (migration-lock.ts: the dialects' adapter begins and commits it, so the migrator's own
 * transactions are off), so instances starting together over one database migrate once, also
 * behind a pooler in transaction mode.
 */
export function migrateToLatest(db: Kysely<any>): Promise<void> {
  return runMigrations(db, migrations);
}

/** The service's own migrations up to `last` (its name) included: a database as an earlier release left it (upgrade tests). */
export function migrateUpTo(db: Kysely<any>, last: string): Promise<void> {
  if (!(last in migrations)) throw new Error(`no migration ${last}`);
  return runMigrations(db, Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= last)));
}

/** The migrations given, as migrateToLatest runs the service's own (a test gives others). */
export async function runMigrations(db: Kysely<any>, list: Record<string, Migration>): Promise<void> {
  const provider = { getMigrations: async () => Object.fromEntries(Object.entries(list).map(([name, migration]) => [name, undoneOnFailure(migration)])) };
  const migrator = new Migrator({ db, provider, disableTransactions: true });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (failed) throw new Error(`migration ${failed.migrationName} failed: ${(error as Error | undefined)?.message ?? 'unknown error'}`, { cause: error });
  if (error) throw new Error(`cannot migrate the database: ${(error as Error).message}`, { cause: error });
}
