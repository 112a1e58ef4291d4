import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/tables.js';

/**
 * Notes an API client, and the secret it sent, as used: at most one write a minute each, however
 * many requests it makes (`last_used_at` of API.md section 11).
 */
export async function touchClient(db: Kysely<Database>, clientId: string, secretId: string | null): Promise<void> {
  await sql`update api_clients set last_used_at = now() where id = ${clientId} and (last_used_at is null or last_used_at < now() - interval '1 minute')`.execute(db);
  if (secretId) {
    await sql`update api_client_secrets set last_used_at = now() where id = ${secretId} and (last_used_at is null or last_used_at < now() - interval '1 minute')`.execute(db);
  }
}
