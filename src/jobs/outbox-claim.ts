import { sql, type Kysely } from 'kysely';

/**
 * The claim of every outbox (webhook deliveries, emails): takes up to `limit` due rows for this
 * instance and counts the attempt. FOR UPDATE SKIP LOCKED lets every instance claim at once
 * without two taking the same row; the lease makes a row whose instance died mid-send due again
 * after `leaseSeconds`. The table needs status, next_attempt_at, claimed_until and attempts.
 */
export async function claimDueRows<Row>(db: Kysely<any>, table: 'webhook_deliveries' | 'email_outbox', leaseSeconds: number, limit: number): Promise<Row[]> {
  const claimed = await sql<Row>`
    update ${sql.table(table)}
    set claimed_until = now() + make_interval(secs => ${leaseSeconds}), attempts = attempts + 1
    where id in (
      select id from ${sql.table(table)}
      where status = 'pending' and next_attempt_at <= now() and (claimed_until is null or claimed_until <= now())
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    )
    returning *`.execute(db);
  return claimed.rows;
}
