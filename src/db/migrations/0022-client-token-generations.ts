import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Re-enabled clients (API.md section 17): `token_generation` replaces `tokens_valid_after`.
 * Disabling a client moves its generation on; an access token carries the generation it was
 * issued in (claim `client_generation`), and counts only while that is still the client's. So a
 * token issued after the client is enabled again works at once, even in the second it was
 * disabled in (a time in whole seconds could not tell the two apart), and every token issued
 * before the disabling stays refused, with no clock involved. Tokens issued before this migration
 * carry no generation and are read as 0; a client disabled before (`tokens_valid_after` set)
 * starts at 1, so none of its earlier tokens comes back. The caller-change trigger of 0020 watches
 * the new column instead of the old.
 */
export const clientTokenGenerations: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table api_clients add column token_generation integer not null default 0 check (token_generation >= 0)`.execute(db);
    await sql`update api_clients set token_generation = 1 where tokens_valid_after is not null`.execute(db);
    await sql`drop trigger api_clients_caller_changed on api_clients`.execute(db);
    await sql`alter table api_clients drop column tokens_valid_after`.execute(db);
    await sql`create trigger api_clients_caller_changed after update of status, scopes, rate_limit, deleted_at, token_generation or delete on api_clients
        for each row execute function notify_change('caller', 'id')`.execute(db);
  },
};
