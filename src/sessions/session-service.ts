/**
 * What other areas do with the sessions' rows, which only this folder writes: end a user's
 * sessions (a password change, a sign-out) or lock one (signing out of one session; a profile's
 * "Connect", which links only while its session is live), note a second factor verified (mfa),
 * delete a user's (an erasure) and read them all (a data export); find the session a token names
 * (the authorization server's revocation and introspection). The statements are
 * session-repository.ts's, handed on as they are; other areas import this file, never the
 * repository (scripts/check-layers.ts).
 */
export { allSessionsOfUserPage, deleteSessionsOfUser, endSessions, endSessionsOfApp, findSession, findSessionForUpdate, markSecondFactorVerified } from './session-repository.js';
export { findRefreshToken } from './refresh-token-repository.js';
