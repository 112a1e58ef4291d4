import type { Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import type { EventContext } from '../events/event-recorder.js';
import { findSessionForUpdate } from '../sessions/session-service.js';
import { findUserByIdForUpdate } from '../users/user-service.js';
import type { ProvidedIdentity, SignedInConnection } from './federated-signin-service.js';
import { lockIdentityBySubject, lockIdentitySubject } from './identity-repository.js';
import { linkIdentity } from './identity-service.js';
import { shareEnabledProvider } from './provider-repository.js';

/**
 * The end of "Connect" from the profile (API.md section 20): a signed-in user, manager and admin
 * included, links an identity at a provider to the account. The user's row is locked first, then
 * the session that pressed the button, the order in which a suspension, a password change or a
 * deletion locks them before ending sessions: whichever commits first, the other sees it. The
 * session must still be live and the user active, and the provider still there and enabled
 * (disabled or deleted during the exchange: nothing is linked). An identity already linked to
 * this user is a success that changes nothing; one linked to another user is refused (it belongs
 * to one user). No email is compared: the user proved the account by signing in, and the
 * identity by signing in at the provider. The account's address is told (someone at a shared
 * computer reopening the provider's link while the session lives would show there).
 */
export async function connectIdentity(
  trx: Transaction<Database>,
  linking: SignedInConnection,
  providerId: string,
  identity: ProvidedIdentity,
  context: EventContext,
): Promise<boolean> {
  const user = await findUserByIdForUpdate(trx, linking.userId);
  if (!user || user.status !== 'active') return false;
  const session = await findSessionForUpdate(trx, linking.sessionId);
  const live = session !== undefined && session.user_id === linking.userId && session.ended_at === null && session.expires_at > new Date();
  if (!live) return false;
  const provider = await shareEnabledProvider(trx, providerId);
  if (!provider) return false;
  await lockIdentitySubject(trx, providerId, identity.subject);
  const known = await lockIdentityBySubject(trx, providerId, identity.subject);
  if (known) return known.user_id === linking.userId;
  const notify = { to: user.email, providerName: provider.name };
  await linkIdentity(trx, { userId: user.id, providerId, subject: identity.subject, email: identity.email, usedNow: false, notify }, { ...context, actorId: user.id, actorType: 'user' });
  return true;
}
