import { sql, type Kysely, type Migration } from 'kysely';

/**
 * API clients (API.md section 11): other services call the API with scopes, through a secret
 * (stored only as its SHA-256) or an access token obtained with one. A client is deleted softly,
 * so its id keeps naming the actor of the events it caused. `tokens_valid_after` moves when a
 * client is disabled: tokens issued before stay dead after it is enabled again. Events say
 * whether their actor was a user or a client.
 */
export const apiClients: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table api_clients (
        id uuid primary key,
        name text not null,
        description text,
        scopes text[] not null,
        status text not null check (status in ('active', 'disabled')),
        rate_limit integer check (rate_limit between 1 and 1000000),
        version integer not null default 1,
        created_by uuid not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        last_used_at timestamptz,
        tokens_valid_after timestamptz,
        deleted_at timestamptz
      )`.execute(db);
    await sql`create index api_clients_by_creation on api_clients (created_at, id) where deleted_at is null`.execute(db);
    await sql`
      create table api_client_secrets (
        id uuid primary key,
        client_id uuid not null references api_clients (id),
        secret_hash text not null unique,
        prefix text not null,
        created_at timestamptz not null,
        expires_at timestamptz,
        last_used_at timestamptz,
        deleted_at timestamptz
      )`.execute(db);
    await sql`create index api_client_secrets_of_client on api_client_secrets (client_id, created_at) where deleted_at is null`.execute(db);
    await sql`alter table events add column actor_type text check (actor_type in ('user', 'client'))`.execute(db);
    await sql`update events set actor_type = 'user' where actor_id is not null`.execute(db);
    await sql`create index events_by_actor_type on events (actor_type, created_at, id)`.execute(db);
  },
};
