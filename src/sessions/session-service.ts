/**
 * What other areas do with the sessions' rows, which only this folder writes: end a user's
 * sessions (a password change, a sign-out) or lock one (signing out of one session), note a second
 * factor verified (mfa), delete a user's (an erasure) and read them all (a data export). The
 * statements are session-repository.ts's, handed on as they are; other areas import this file,
 * never the repository (scripts/check-layers.ts).
 */
export { allSessionsOfUserPage, deleteSessionsOfUser, endSessions, findSessionForUpdate, findSignInSessionByBrowserSecret, markSecondFactorVerified } from './session-repository.js';
