import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Sign in with another identity provider (API.md section 20), its tables.
 *
 * - `identity_providers`: the OpenID providers an admin connected. A provider authenticates the
 *   service either with a `client_secret` or, for Apple, with a key (`apple_team_id`,
 *   `apple_key_id`, `apple_private_key`) from which the service signs its client secret JWT:
 *   exactly one of the two (the check). Both secrets are kept sealed (secrets-at-rest.ts), for
 *   the service must send them back to the provider. `discovery` is the provider's discovery
 *   document as last read and `discovered_at` when; `discovery_attempted_at` is when it was last
 *   tried (read or not), which the hourly re-read claims so that one instance of many reads each
 *   provider, and a failure keeps the document it had.
 * - `user_identities`: an identity (its provider and `sub`) belongs to one user. A deleted
 *   provider's identities go with it (the cascade); a user's go when the user is erased (the
 *   privacy area calls the federation area for them).
 */
export const identityProviders: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table identity_providers (
        id uuid primary key,
        name text not null check (char_length(name) between 1 and 100),
        issuer text not null,
        client_id text not null,
        client_secret text,
        scopes text[] not null,
        button_label text not null check (char_length(button_label) between 1 and 100),
        link_by_verified_email boolean not null default false,
        enabled boolean not null default true,
        apple_team_id text,
        apple_key_id text,
        apple_private_key text,
        discovery jsonb not null,
        discovered_at timestamptz not null,
        discovery_attempted_at timestamptz not null,
        version integer not null default 1,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        constraint identity_providers_scopes_have_openid check ('openid' = any (scopes)),
        constraint identity_providers_one_credential check (
          (client_secret is not null and apple_team_id is null and apple_key_id is null and apple_private_key is null)
          or (client_secret is null and apple_team_id is not null and apple_key_id is not null and apple_private_key is not null)
        )
      )`.execute(db);
    await sql`create index identity_providers_discovery_due on identity_providers (discovery_attempted_at) where enabled`.execute(db);
    await sql`
      create table user_identities (
        id uuid primary key,
        user_id uuid not null references users (id),
        provider_id uuid not null references identity_providers (id) on delete cascade,
        subject text not null,
        email text,
        linked_at timestamptz not null,
        last_used_at timestamptz,
        constraint user_identities_subject_unique unique (provider_id, subject)
      )`.execute(db);
    await sql`create index user_identities_of_user on user_identities (user_id, linked_at, id)`.execute(db);
  },
};
