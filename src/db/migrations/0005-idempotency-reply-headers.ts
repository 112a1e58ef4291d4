import { sql, type Kysely, type Migration } from 'kysely';

/** A replayed reply carries the headers of the first one (ETag, Location), not only its body. */
export const idempotencyReplyHeaders: Migration = {
  async up(db: Kysely<any>) {
    await sql`alter table idempotency_keys add column response_headers jsonb`.execute(db);
  },
};
