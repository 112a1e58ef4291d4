import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Undoes 0020 (and 0022's re-made trigger): nothing listens for changes of callers any more. The
 * admission reads the caller's row with every request's first statement (sessions/admission.ts),
 * so no instance keeps callers in memory and nothing has to tell it of a change.
 */
export const dropCallerChangeNotifications: Migration = {
  async up(db: Kysely<unknown>) {
    for (const [trigger, table] of [
      ['users_caller_changed', 'users'],
      ['sessions_caller_changed', 'sessions'],
      ['mfa_factors_caller_changed', 'mfa_factors'],
      ['api_clients_caller_changed', 'api_clients'],
      ['api_client_secrets_caller_changed', 'api_client_secrets'],
    ] as const) {
      await sql`drop trigger if exists ${sql.id(trigger)} on ${sql.table(table)}`.execute(db);
    }
    await sql`drop function if exists notify_change()`.execute(db);
  },
};
