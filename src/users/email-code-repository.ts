import { createHash, randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, EmailCodeRow } from '../db/tables.js';

/**
 * A code's hash: SHA-256 of its row's id and the code, so equal codes of two rows hash apart.
 * A 6-digit code needs no slow hash: it lives minutes and dies after 5 wrong tries.
 */
export const hashEmailCode = (id: string, code: string) => createHash('sha256').update(`${id}:${code}`).digest('hex');

/**
 * The turn of one address's code requests (a transaction-scoped advisory lock, so it holds behind
 * a pooler in transaction mode): requests racing each other count each other's codes, and one
 * code at a time lives. The first key names this lock's kind; the second is the address's hash.
 */
export async function lockAddressForCodes(trx: Transaction<Database>, email: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(19025, hashtext(${email.toLowerCase()}))`.execute(trx);
}

/** Codes made for an address (any letter case) within the last `seconds`, spent or not. */
export async function countRecentEmailCodes(db: Kysely<Database>, email: string, seconds: number): Promise<number> {
  const row = await db
    .selectFrom('email_codes')
    .select(sql<string>`count(*)`.as('count'))
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('created_at', '>', sql<Date>`now() - make_interval(secs => ${seconds})`)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A spent code keeps no password hash of a signup it carried. */
const SPENT = () => ({ used_at: new Date(), signup_name: null, signup_password_hash: null, signup_browser_hash: null });

/** Spends the live codes of an address: a newer one replaces them. */
export async function spendCodesOfAddress(db: Kysely<Database>, email: string): Promise<void> {
  await db.updateTable('email_codes').set(SPENT()).where(sql<string>`lower(email)`, '=', email.toLowerCase()).where('used_at', 'is', null).execute();
}

/** What the create-account page was given, kept on the code until it comes back through the browser that gave it (API.md section 18). */
export interface PendingSignup {
  name: string;
  passwordHash: string;
  /** SHA-256 of the browser's CSRF token. */
  browserHash: string;
}


export async function insertEmailCode(
  db: Kysely<Database>,
  code: { email: string; userId: string | null; value: string; ttlSeconds: number; signup?: PendingSignup },
): Promise<{ expiresAt: Date }> {
  const id = randomUUID();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + code.ttlSeconds * 1000);
  await db
    .insertInto('email_codes')
    .values({
      id,
      email: code.email,
      user_id: code.userId,
      code_hash: hashEmailCode(id, code.value),
      created_at: now,
      expires_at: expiresAt,
      signup_name: code.signup?.name ?? null,
      signup_password_hash: code.signup?.passwordHash ?? null,
      signup_browser_hash: code.signup?.browserHash ?? null,
    })
    .execute();
  return { expiresAt };
}

/** The live code of an address (unspent, unexpired, under 5 wrong tries), without a lock: read before the locks are taken in order. */
export function findLiveEmailCode(db: Kysely<Database>, email: string, triesAllowed: number): Promise<EmailCodeRow | undefined> {
  return db
    .selectFrom('email_codes')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .where('failures', '<', triesAllowed)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** A code locked, whatever its state: one try at a time per code. */
export function lockEmailCode(trx: Transaction<Database>, id: string): Promise<EmailCodeRow | undefined> {
  return trx.selectFrom('email_codes').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function countEmailCodeFailure(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.updateTable('email_codes').set({ failures: sql`failures + 1` }).where('id', '=', id).execute();
}

export async function spendEmailCode(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.updateTable('email_codes').set(SPENT()).where('id', '=', id).execute();
}

/** Spends a code if it is still live: whether it was. */
export async function spendLiveEmailCode(trx: Transaction<Database>, id: string): Promise<boolean> {
  const spent = await trx
    .updateTable('email_codes')
    .set(SPENT())
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returning('id')
    .executeTakeFirst();
  return spent !== undefined;
}

/**
 * Spends every live code of a user (a password or email change, a suspension, a deletion), and
 * every live code sent to these addresses (an email change's old and new ones, whoever asked).
 */
export async function spendCodesOfUser(trx: Transaction<Database>, userId: string, addresses: string[] = []): Promise<void> {
  const lowered = addresses.map((address) => address.toLowerCase());
  await trx
    .updateTable('email_codes')
    .set(SPENT())
    .where('used_at', 'is', null)
    .where((eb) => (lowered.length > 0 ? eb.or([eb('user_id', '=', userId), eb(sql<string>`lower(email)`, 'in', lowered)]) : eb('user_id', '=', userId)))
    .execute();
}

/** Codes older than any window counts them (an hour): a day gives room. */
export async function deleteStaleEmailCodes(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('email_codes').where('created_at', '<', sql<Date>`now() - interval '1 day'`).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** An erasure: the codes of a user and those sent to its addresses go; returns the addresses they were sent to. */
export async function deleteCodesOfUser(trx: Transaction<Database>, userId: string): Promise<string[]> {
  const rows = await trx.deleteFrom('email_codes').where('user_id', '=', userId).returning('email').execute();
  return rows.map((row) => row.email);
}
