import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, FactorType, MfaFactorRow } from '../db/tables.js';
import { callerRead } from '../sessions/caller-query.js';

/** A user's confirmed factors, oldest first, each beside the count of unused recovery codes (GET /api/auth/mfa). */
export const confirmedFactorsOfUser = callerRead<MfaFactorRow & { recovery_codes_left: number }, [string]>('mfa.confirmedFactorsOfUser', (db, userId) =>
  db
    .selectFrom('mfa_factors')
    .selectAll()
    .select(sql<number>`(select count(*)::integer from mfa_recovery_codes where mfa_recovery_codes.user_id = mfa_factors.user_id and used_at is null)`.as('recovery_codes_left'))
    .where('user_id', '=', userId)
    .where('confirmed_at', 'is not', null)
    .orderBy('created_at')
    .orderBy('id'),
);

/** One factor of a user, confirmed or not, beside the caller. */
export const factorOfUser = callerRead<MfaFactorRow, [string, string]>('mfa.factorOfUser', (db, userId, id) =>
  db.selectFrom('mfa_factors').selectAll().where('user_id', '=', userId).where('id', '=', id),
);

export function insertFactor(trx: Transaction<Database>, factor: Omit<MfaFactorRow, 'last_used_at'>): Promise<MfaFactorRow> {
  return trx.insertInto('mfa_factors').values(factor).returningAll().executeTakeFirstOrThrow();
}

/** A user's factors (confirmed only, unless asked), of one type or all, oldest first. */
export function factorsOfUser(db: Kysely<Database>, userId: string, which: { type?: FactorType; unconfirmedToo?: boolean } = {}): Promise<MfaFactorRow[]> {
  let query = db.selectFrom('mfa_factors').selectAll().where('user_id', '=', userId);
  if (which.type) query = query.where('type', '=', which.type);
  if (!which.unconfirmedToo) query = query.where('confirmed_at', 'is not', null);
  return query.orderBy('created_at').orderBy('id').execute();
}

/** A user's confirmed factors of a type, locked: a code is checked against them and marked used. */
export function lockConfirmedFactors(trx: Transaction<Database>, userId: string, type: FactorType): Promise<MfaFactorRow[]> {
  return trx.selectFrom('mfa_factors').selectAll().where('user_id', '=', userId).where('type', '=', type).where('confirmed_at', 'is not', null).orderBy('id').forUpdate().execute();
}

/** One factor of a user, locked. */
export function lockFactor(trx: Transaction<Database>, userId: string, id: string): Promise<MfaFactorRow | undefined> {
  return trx.selectFrom('mfa_factors').selectAll().where('id', '=', id).where('user_id', '=', userId).forUpdate().executeTakeFirst();
}

/** Whether any user has registered this passkey already. */
export async function passkeyIsRegistered(db: Kysely<Database>, credentialId: string): Promise<boolean> {
  return (await db.selectFrom('mfa_factors').select('id').where('credential_id', '=', credentialId).executeTakeFirst()) !== undefined;
}

/**
 * The user a confirmed passkey belongs to, by its credential id (what an assertion's `id` names,
 * unique among every user's passkeys); undefined for an unknown, unconfirmed or removed one.
 */
export async function findPasskeyHolder(db: Kysely<Database>, credentialId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('mfa_factors')
    .select('user_id')
    .where('credential_id', '=', credentialId)
    .where('type', '=', 'webauthn')
    .where('confirmed_at', 'is not', null)
    .executeTakeFirst();
  return row?.user_id;
}

export async function countConfirmedFactors(db: Kysely<Database>, userId: string): Promise<number> {
  const row = await db.selectFrom('mfa_factors').select(sql<number>`count(*)::integer`.as('count')).where('user_id', '=', userId).where('confirmed_at', 'is not', null).executeTakeFirstOrThrow();
  return row.count;
}

/** A TOTP factor confirmed, or used: its step is spent, so its code is not accepted again. */
export async function markTotpStepUsed(trx: Transaction<Database>, id: string, step: number, confirm: boolean): Promise<MfaFactorRow> {
  const now = new Date();
  return trx
    .updateTable('mfa_factors')
    .set({ totp_last_step: step, last_used_at: now, ...(confirm ? { confirmed_at: now } : {}) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function markPasskeyUsed(trx: Transaction<Database>, id: string, signCount: number): Promise<void> {
  await trx.updateTable('mfa_factors').set({ sign_count: signCount, last_used_at: new Date() }).where('id', '=', id).execute();
}

export async function deleteFactor(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom('mfa_factors').where('id', '=', id).execute();
}

/** Every factor of a user, confirmed or not; returns those removed. */
export function deleteFactorsOfUser(trx: Transaction<Database>, userId: string): Promise<MfaFactorRow[]> {
  return trx.deleteFrom('mfa_factors').where('user_id', '=', userId).returningAll().execute();
}

/** TOTP factors never confirmed are dropped after a day. */
export async function deleteStaleUnconfirmedFactors(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('mfa_factors').where('confirmed_at', 'is', null).where('created_at', '<', sql<Date>`now() - interval '1 day'`).executeTakeFirst();
  return Number(result.numDeletedRows);
}
