import type { Kysely, Transaction } from 'kysely';
import { findClient } from '../clients/client-service.js';
import type { Database } from '../db/tables.js';
import type { EventContext } from '../events/event-recorder.js';
import { findSessionForUpdate } from '../sessions/session-service.js';
import { liveSigninSession } from '../sessions/signin-sessions.js';
import { signOut } from '../users/sign-out-service.js';

/** What an `id_token_hint` names, once its signature is checked: the app, the user and the app's session. */
export interface LogoutHint {
  clientId: string;
  userId: string;
  sessionId: string;
}

/** The hint's claims as a LogoutHint; undefined when they do not name an app, a user and a session. */
export function logoutHintOf(claims: Record<string, unknown> | undefined): LogoutHint | undefined {
  if (!claims) return undefined;
  const audience = Array.isArray(claims.aud) && claims.aud.length === 1 ? claims.aud[0] : claims.aud;
  if (typeof audience !== 'string' || typeof claims.sub !== 'string' || typeof claims.sid !== 'string') return undefined;
  return { clientId: audience, userId: claims.sub, sessionId: claims.sid };
}

/**
 * RP-initiated logout (API.md section 18, "Logout"): ends the session the hint names, the
 * sign-in session it came from and every session that sign-in started for apps; and the
 * browser's own sign-in session (its cookie) with its apps' sessions, but only when it is the
 * hint's user's: a hint is no proof that the browser presenting it wants its own sign-in ended
 * (an attacker's page could embed a logout link with the attacker's own ID token). Each is ended
 * the way every sign-out is (`user.sessions_ended`, refresh tokens revoked), so their tokens fail
 * on the very next request. A sign-in session is locked before its sessions end, so a code
 * exchange starting an app session from it either finishes first (and its session ends here) or
 * finds it ended. Nothing to end is no fault: logging out twice is logging out. Answers whether
 * the browser's sign-in session was left alone because it is another user's.
 */
export async function logOut(trx: Transaction<Database>, which: { hint?: LogoutHint; browserSecretHash?: string }, context: EventContext): Promise<{ otherUsersSignIn: boolean }> {
  if (which.hint) {
    const session = await findSessionForUpdate(trx, which.hint.sessionId);
    if (session && session.user_id === which.hint.userId && session.client_id === which.hint.clientId) {
      await signOut(trx, { userId: session.user_id, sessionId: session.id }, 'logout', context);
      if (session.signin_session_id) await endSignIn(trx, session.user_id, session.signin_session_id, context);
    }
  }
  if (which.browserSecretHash) {
    const signIn = await liveSigninSession(trx, which.browserSecretHash);
    if (signIn && which.hint && signIn.user_id !== which.hint.userId) return { otherUsersSignIn: true };
    if (signIn) await endSignIn(trx, signIn.user_id, signIn.id, context);
  }
  return { otherUsersSignIn: false };
}

/** Ends a sign-in session and the app sessions it started, the sign-in's row locked first. */
async function endSignIn(trx: Transaction<Database>, userId: string, signinSessionId: string, context: EventContext): Promise<void> {
  await findSessionForUpdate(trx, signinSessionId);
  await signOut(trx, { userId, signinSessionId }, 'logout', context);
}

/** Where a logout may send the browser: a URI the app registered for it, character for character; else nowhere. */
export async function registeredLogoutRedirect(db: Kysely<Database>, clientId: string | undefined, uri: string | undefined): Promise<string | undefined> {
  if (clientId === undefined || uri === undefined) return undefined;
  const app = await findClient(db, clientId);
  return app && app.status === 'active' && app.post_logout_redirect_uris.includes(uri) ? uri : undefined;
}
