import { sql, type Kysely, type Migration } from 'kysely';

/**
 * What a request's caller check reads (sessions/caller-query.ts) notifies every instance when it
 * changes: `pg_notify('changes', 'caller:<user or client id>')` from the transaction that changes
 * it, delivered when it commits. Instances keep the callers they admitted (sessions/known-callers.ts)
 * and forget a caller on its notification, so a read of theirs needs no caller row of its own.
 * Only the columns the check reads fire, so a session noted as used (`last_used_at`, once a
 * minute) notifies nobody. A trigger, not the code that writes, so no write can forget it.
 */
export const callerChangeNotifications: Migration = {
  async up(db: Kysely<unknown>) {
    // tg_argv: the topic, and the column naming whose caller the row is. An update that moves a
    // row to another caller notifies both; PostgreSQL sends a payload once per transaction.
    await sql`
      create function notify_change() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') then
          perform pg_notify('changes', tg_argv[0] || ':' || (to_jsonb(old) ->> tg_argv[1]));
        end if;
        if tg_op in ('INSERT', 'UPDATE') then
          perform pg_notify('changes', tg_argv[0] || ':' || (to_jsonb(new) ->> tg_argv[1]));
        end if;
        return null;
      end
      $$`.execute(db);
    const triggers = [
      sql`create trigger users_caller_changed after update of role, status, deleted_at or delete on users
          for each row execute function notify_change('caller', 'id')`,
      sql`create trigger sessions_caller_changed after update of user_id, ended_at, expires_at, mfa_verified_at or delete on sessions
          for each row execute function notify_change('caller', 'user_id')`,
      sql`create trigger mfa_factors_caller_changed after insert or update of user_id, confirmed_at or delete on mfa_factors
          for each row execute function notify_change('caller', 'user_id')`,
      sql`create trigger api_clients_caller_changed after update of status, scopes, rate_limit, deleted_at, tokens_valid_after or delete on api_clients
          for each row execute function notify_change('caller', 'id')`,
      sql`create trigger api_client_secrets_caller_changed after update of client_id, secret_hash, expires_at, deleted_at or delete on api_client_secrets
          for each row execute function notify_change('caller', 'client_id')`,
    ];
    for (const trigger of triggers) await trigger.execute(db);
  },
};
