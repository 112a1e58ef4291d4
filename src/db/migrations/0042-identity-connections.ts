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
  },
};
