import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { findLiveApp } from '../clients/client-service.js';
import type { Database } from '../db/tables.js';
import type { EventContext } from '../events/event-recorder.js';
import { findSessionForUpdate, findSignInSessionByBrowserSecret } from '../sessions/session-service.js';
import { signOut } from '../users/sign-out-service.js';

/** The hosted pages' sign-in cookie holds a random secret; the database keeps its SHA-256 only. */
export const hashBrowserSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

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
 * browser's own sign-in session (its cookie) with its apps' sessions. Each is ended the way
 * every sign-out is (`user.sessions_ended`, refresh tokens revoked), so their tokens fail on the
 * very next request. Nothing to end is no fault: logging out twice is logging out.
 */
export async function logOut(trx: Transaction<Database>, which: { hint?: LogoutHint; browserSecretHash?: string }, context: EventContext): Promise<void> {
  if (which.hint) {
    const session = await findSessionForUpdate(trx, which.hint.sessionId);
    if (session && session.user_id === which.hint.userId && session.client_id === which.hint.clientId) {
      await signOut(trx, { userId: session.user_id, sessionId: session.id }, 'logout', context);
      if (session.signin_session_id) await signOut(trx, { userId: session.user_id, signinSessionId: session.signin_session_id }, 'logout', context);
    }
  }
  if (which.browserSecretHash) {
    const signIn = await findSignInSessionByBrowserSecret(trx, which.browserSecretHash);
    if (signIn) await signOut(trx, { userId: signIn.user_id, signinSessionId: signIn.id }, 'logout', context);
  }
}

/** Where a logout may send the browser: a URI the app registered for it, character for character; else nowhere. */
export async function registeredLogoutRedirect(db: Kysely<Database>, clientId: string | undefined, uri: string | undefined): Promise<string | undefined> {
  if (clientId === undefined || uri === undefined) return undefined;
  const app = await findLiveApp(db, clientId);
  return app?.post_logout_redirect_uris.includes(uri) ? uri : undefined;
}
