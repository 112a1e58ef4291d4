import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database, UserIdentityRow } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { queueMail } from '../mail/mail-outbox.js';
import { identityLinkedMail } from '../mail/mail-templates.js';
import { deleteIdentitiesOfUser, deleteIdentityOfUser, insertIdentity } from './identity-repository.js';

const identityEvent = (type: 'user.identity_linked' | 'user.identity_unlinked', identity: UserIdentityRow) => ({
  type,
  subjectType: 'user' as const,
  subjectId: identity.user_id,
  data: { provider_id: identity.provider_id, identity_id: identity.id },
});

/**
 * Links an identity at a provider to a user and records `user.identity_linked` (the sign-in flow
 * calls it for a new identity). A second link of the same identity meets the unique index
 * `user_identities_subject_unique`, which the caller handles. With `notify`, the account's owner
 * is mailed that the identity now signs them in (an existing account gained a way in; a new
 * account made by that identity is not told), in the same transaction as the link.
 */
export async function linkIdentity(
  trx: Transaction<Database>,
  link: { userId: string; providerId: string; subject: string; email: string | null; usedNow: boolean; notify?: { to: string; providerName: string } },
  context: EventContext,
): Promise<UserIdentityRow> {
  const now = new Date();
  const identity = await insertIdentity(trx, { id: randomUUID(), user_id: link.userId, provider_id: link.providerId, subject: link.subject, email: link.email, linked_at: now, last_used_at: link.usedNow ? now : null });
  await record(trx, identityEvent('user.identity_linked', identity), context);
  if (link.notify) await queueMail(trx, identityLinkedMail(link.notify.to, link.notify.providerName, now));
  return identity;
}

/**
 * The user unlinks one of its identities (API.md section 20): `user.identity_unlinked`. False
 * when the user has no such identity (another user's included), and nothing changes. Every
 * account can still sign in by email code (section 19), so the last identity may go too.
 */
export async function unlinkIdentity(trx: Transaction<Database>, userId: string, id: string, context: EventContext): Promise<boolean> {
  const identity = await deleteIdentityOfUser(trx, userId, id);
  if (!identity) return false;
  await record(trx, identityEvent('user.identity_unlinked', identity), context);
  return true;
}

/**
 * The federation area's part of an erasure (API.md section 13): every identity of the user goes,
 * for an identity's `sub` and email name the person. The erasure's own event says so; none is
 * recorded per identity.
 */
export async function eraseIdentities(trx: Transaction<Database>, userId: string): Promise<void> {
  await deleteIdentitiesOfUser(trx, userId);
}
