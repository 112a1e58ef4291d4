import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Ed25519 keys that sign access tokens, shared by every instance through the database. One is
 * active; after a rotation the previous one is retiring until its last token has expired.
 */
export const signingKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table signing_keys (
        kid text primary key,
        alg text not null,
        public_jwk jsonb not null,
        private_pem text not null,
        status text not null check (status in ('active', 'retiring')),
        created_at timestamptz not null,
        retires_at timestamptz
      )`.execute(db);
    await sql`create unique index signing_keys_one_active on signing_keys (status) where status = 'active'`.execute(db);
  },
};
