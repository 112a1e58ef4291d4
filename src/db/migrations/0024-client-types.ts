import { sql, type Kysely, type Migration } from 'kysely';

/**
 * API clients gain a type (API.md section 18, "Apps"): `service` (the v3 client, client
 * credentials), `confidential` and `public` (apps that sign users in). Every client there was
 * before is a service client. Only apps have redirect URIs, a consent setting, a logo and an ID
 * token algorithm: the checks keep a service client's columns at their empty values (so no
 * service client can ever be sent users through a redirect) and an app's at its rules' bounds.
 */
export const clientTypes: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      alter table api_clients
        add column type text not null default 'service' check (type in ('service', 'confidential', 'public')),
        add column redirect_uris text[] not null default '{}',
        add column post_logout_redirect_uris text[] not null default '{}',
        add column first_party boolean not null default false,
        add column logo_uri text,
        add column id_token_signed_response_alg text check (id_token_signed_response_alg in ('RS256', 'EdDSA')),
        add constraint api_clients_settings_of_type check (
          case when type = 'service'
            then cardinality(redirect_uris) = 0 and cardinality(post_logout_redirect_uris) = 0 and not first_party
              and logo_uri is null and id_token_signed_response_alg is null
            else cardinality(redirect_uris) between 1 and 10 and cardinality(post_logout_redirect_uris) <= 10
              and id_token_signed_response_alg is not null
          end
        )`.execute(db);
  },
};
