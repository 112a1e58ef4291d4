import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { Database, UserIdentitiesTable, UserIdentityRow } from '../db/tables.js';

/** The user's identities, oldest link first, each with its provider's name (as the profile lists them). */
export function identitiesOfUser(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom('user_identities')
    .innerJoin('identity_providers', 'identity_providers.id', 'user_identities.provider_id')
    .select(['user_identities.id', 'user_identities.provider_id', 'identity_providers.name as provider_name', 'user_identities.email', 'user_identities.linked_at', 'user_identities.last_used_at'])
    .where('user_identities.user_id', '=', userId)
    .orderBy('user_identities.linked_at')
    .orderBy('user_identities.id');
}

/**
 * Links an identity (its provider and `sub`) to a user. The unique (provider_id, subject) makes a
 * second link of the same identity, even a concurrent one, fail: the identity belongs to one user.
 */
export function insertIdentity(trx: Transaction<Database>, identity: Insertable<UserIdentitiesTable>): Promise<UserIdentityRow> {
  return trx.insertInto('user_identities').values(identity).returningAll().executeTakeFirstOrThrow();
}

/** Unlinks one of the user's identities; the row it removed, or undefined when the user has no such identity. */
export function deleteIdentityOfUser(trx: Transaction<Database>, userId: string, id: string): Promise<UserIdentityRow | undefined> {
  return trx.deleteFrom('user_identities').where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
}

/** Every identity of the user goes (an erasure). */
export async function deleteIdentitiesOfUser(trx: Transaction<Database>, userId: string): Promise<void> {
  await trx.deleteFrom('user_identities').where('user_id', '=', userId).execute();
}

/** How many identities a provider has (the provider's deletion removes them). */
export async function countIdentitiesOfProvider(trx: Transaction<Database>, providerId: string): Promise<number> {
  const { count } = await trx.selectFrom('user_identities').select((eb) => eb.fn.countAll<string>().as('count')).where('provider_id', '=', providerId).executeTakeFirstOrThrow();
  return Number(count);
}

/**
 * A transaction-level advisory lock on (provider, `sub`), taken before the identity is looked
 * up: two first sign-ins (or connections) of one new identity at once run one after the other,
 * and the second finds the identity the first linked. The unique (provider_id, subject) stands
 * behind it.
 */
export async function lockIdentitySubject(trx: Transaction<Database>, providerId: string, subject: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`federation:${providerId}:${subject}`}, 0))`.execute(trx);
}

/** The identity (provider, `sub`), locked, with its user: a known identity signs its user in. */
export function lockIdentityBySubject(trx: Transaction<Database>, providerId: string, subject: string): Promise<UserIdentityRow | undefined> {
  return trx.selectFrom('user_identities').selectAll().where('provider_id', '=', providerId).where('subject', '=', subject).forUpdate().executeTakeFirst();
}

export async function markIdentityUsed(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.updateTable('user_identities').set({ last_used_at: new Date() }).where('id', '=', id).execute();
}
