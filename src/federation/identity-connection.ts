import type { Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import type { EventContext } from '../events/event-recorder.js';
import { findSessionForUpdate } from '../sessions/session-service.js';
import { findUserById } from '../users/user-service.js';
import type { ProvidedIdentity, SignedInConnection } from './federated-signin-service.js';
import { lockIdentityBySubject, lockIdentitySubject } from './identity-repository.js';
import { linkIdentity } from './identity-service.js';

/**
 * The end of "Connect" from the profile (API.md section 20): a signed-in user, manager and admin
 * included, links an identity at a provider to the account. The session that pressed the button
 * is locked first and must still be live: a logout, a password change or a suspension since then
 * committed first and refuses the link, or waits for it and ends the session after. An identity
 * already linked to this user is a success that changes nothing; one linked to another user is
 * refused (it belongs to one user). No email is compared: the user proved the account by signing
 * in, and the identity by signing in at the provider.
 */
export async function connectIdentity(
  trx: Transaction<Database>,
  linking: SignedInConnection,
  providerId: string,
  identity: ProvidedIdentity,
  context: EventContext,
): Promise<boolean> {
  const session = await findSessionForUpdate(trx, linking.sessionId);
  const live = session !== undefined && session.user_id === linking.userId && session.ended_at === null && session.expires_at > new Date();
  if (!live) return false;
  const user = await findUserById(trx, linking.userId);
  if (!user || user.status !== 'active') return false;
  await lockIdentitySubject(trx, providerId, identity.subject);
  const known = await lockIdentityBySubject(trx, providerId, identity.subject);
  if (known) return known.user_id === linking.userId;
  await linkIdentity(trx, { userId: user.id, providerId, subject: identity.subject, email: identity.email, usedNow: false }, { ...context, actorId: user.id, actorType: 'user' });
  return true;
}
