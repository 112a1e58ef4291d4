import { sql, type Kysely, type Migration } from 'kysely';

/**
 * RSA keys (RS256) beside the Ed25519 ones, to sign ID tokens (API.md section 18, "Tokens"):
 * one active key per algorithm instead of one in all. The keys there were stay, as EdDSA.
 */
export const idTokenKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`drop index signing_keys_one_active`.execute(db);
    await sql`create unique index signing_keys_one_active_per_alg on signing_keys (alg) where status = 'active'`.execute(db);
    await sql`alter table signing_keys add constraint signing_keys_alg check (alg in ('EdDSA', 'RS256'))`.execute(db);
  },
};
