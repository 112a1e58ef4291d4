import { sql, type Kysely, type Migration } from 'kysely';

/**
 * A signed-in user connects a provider from the profile (API.md section 20, the "Connect"
 * button): the attempt names the session that started it, and its callback links the identity
 * only while that session is live. A logout, a password change or a suspension between the
 * button and the callback ends the session, and so the connection; the session's row going
 * (the purge, an erasure) takes the attempt with it. `linking_user_id` (0041) names its user.
 */
export const identityConnections: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table federated_sign_ins add column linking_session_id uuid references sessions (id) on delete cascade`.execute(db);
    // A session's or user's row going (the purge, an erasure) finds its attempts by index, not by reading them all.
    await sql`create index federated_sign_ins_linking_session on federated_sign_ins (linking_session_id) where linking_session_id is not null`.execute(db);
    await sql`create index federated_sign_ins_linking_user on federated_sign_ins (linking_user_id) where linking_user_id is not null`.execute(db);
  },
};
