import * as callerQuery from '../../src/sessions/caller-query.js';
import * as refreshTokenRepository from '../../src/sessions/refresh-token-repository.js';
import { SecretsAtRest } from '../../src/sessions/secrets-at-rest.js';
import * as sessionRepository from '../../src/sessions/session-repository.js';
import * as signingKeyRepository from '../../src/sessions/signing-key-repository.js';
import { variantsPage } from '../../src/variants/variant-repository.js';
import { call, custom, FIRST_PAGE, notSql, SAMPLE, USER_CALLER, type RepositoryFile } from './sample.js';

const CLIENT_SECRET_CALLER = { kind: 'client-secret', secretHash: 'secret-hash' } as const;
const CLIENT_TOKEN_CALLER = { kind: 'client-token', clientId: SAMPLE.clientId, scopes: ['variants:read'], generation: 0 } as const;
const APP_USER_CALLER = { kind: 'app-user', userId: SAMPLE.userId, sessionId: SAMPLE.sessionId, clientId: SAMPLE.clientId, scopes: ['account'] } as const;
const EVERY_KIND_OF_CALLER = [USER_CALLER, APP_USER_CALLER, CLIENT_SECRET_CALLER, CLIENT_TOKEN_CALLER];

export const sessions: RepositoryFile[] = [
  {
    // The admission's statements: the caller's row, alone or beside a request's data.
    file: 'src/sessions/caller-query.ts',
    area: 'sessions',
    entries: {
      // A page beside the caller (here GET /api/variants): the row number keeps the page's order.
      besideCaller: custom("a user, an app's user, a client secret, a client token; variantsPage(…, {}, { limit: 20 }), ordered", async (trx) => {
        for (const key of EVERY_KIND_OF_CALLER) await callerQuery.besideCaller(trx, key, variantsPage(trx, {}, FIRST_PAGE), true).execute();
      }),
      callerLetIn: notSql('fragment'),
      namesUser: notSql('predicate'),
      CALLER_READS: notSql('constant'),
      callerRead: notSql('factory'),
      // Each kind of caller alone: a write's first statement in its transaction (and, in an `exists`, the flash sale's condition, callerLetIn).
      callerAlone: custom("a user, an app's user, a client secret, a client token", async (trx) => {
        for (const key of EVERY_KIND_OF_CALLER) await callerQuery.callerAlone(trx, key);
      }),
      findUserStanding: call(callerQuery.findUserStanding, SAMPLE.userId),
    },
  },
  {
    file: 'src/sessions/refresh-token-repository.ts',
    area: 'sessions',
    entries: {
      insertRefreshToken: call(refreshTokenRepository.insertRefreshToken, { userId: SAMPLE.userId, familyId: SAMPLE.sessionId, tokenHash: 'refresh-hash-2', expiresAt: SAMPLE.date }),
      findRefreshToken: call(refreshTokenRepository.findRefreshToken, 'refresh-hash'),
      findRefreshTokenForUpdate: call(refreshTokenRepository.findRefreshTokenForUpdate, 'refresh-hash'),
      markRefreshTokenRotated: call(refreshTokenRepository.markRefreshTokenRotated, SAMPLE.newId, 'sealed-successor'),
      deleteExpiredRefreshTokens: call(refreshTokenRepository.deleteExpiredRefreshTokens),
    },
  },
  {
    file: 'src/sessions/session-repository.ts',
    area: 'sessions',
    entries: {
      insertSession: call(sessionRepository.insertSession, {
        id: SAMPLE.newId,
        user_id: SAMPLE.userId,
        created_at: SAMPLE.date,
        last_used_at: SAMPLE.date,
        expires_at: SAMPLE.date,
        user_agent: 'curl/8',
        ip: '192.0.2.1',
        amr: ['pwd'],
        auth_time: SAMPLE.date,
        mfa_verified_at: null,
      }),
      findSession: call(sessionRepository.findSession, SAMPLE.sessionId),
      findSessionForUpdate: call(sessionRepository.findSessionForUpdate, SAMPLE.sessionId),
      activeSessions: call(sessionRepository.activeSessions, SAMPLE.userId),
      listActiveSessions: call(sessionRepository.listActiveSessions, SAMPLE.userId),
      // Ends the sample session, so its refresh tokens are revoked in a second statement.
      endSessions: call(sessionRepository.endSessions, { userId: SAMPLE.userId, sessionId: SAMPLE.sessionId }),
      endSessionsOfApp: call(sessionRepository.endSessionsOfApp, SAMPLE.clientId),
      extendSession: call(sessionRepository.extendSession, SAMPLE.sessionId, SAMPLE.date),
      touchSession: call(sessionRepository.touchSession, SAMPLE.sessionId),
      markSecondFactorVerified: call(sessionRepository.markSecondFactorVerified, SAMPLE.sessionId),
      allSessionsOfUserPage: call(sessionRepository.allSessionsOfUserPage, SAMPLE.userId, FIRST_PAGE),
      deleteSessionsOfUser: call(sessionRepository.deleteSessionsOfUser, SAMPLE.userId),
      purgeSessionsEndedBefore: call(sessionRepository.purgeSessionsEndedBefore, SAMPLE.date),
      findLiveSigninSession: call(sessionRepository.findLiveSigninSession, 'browser-secret-hash'),
    },
  },
  {
    file: 'src/sessions/signing-key-repository.ts',
    area: 'sessions',
    entries: {
      liveSigningKeys: call(signingKeyRepository.liveSigningKeys),
      listLiveSigningKeys: call(signingKeyRepository.listLiveSigningKeys),
      findActiveSigningKeys: call(signingKeyRepository.findActiveSigningKeys),
      // A new key pair each run: its values are parameters, so the statement reads the same.
      insertSigningKey: custom('secrets kept as they are', (trx) => signingKeyRepository.insertSigningKey(trx, new SecretsAtRest(undefined), 'EdDSA')),
      listStoredSigningKeysForUpdate: call(signingKeyRepository.listStoredSigningKeysForUpdate),
      storePrivateKey: call(signingKeyRepository.storePrivateKey, 'key-1', 'sealed-pem'),
      retireSigningKey: call(signingKeyRepository.retireSigningKey, 'key-1', SAMPLE.date),
      deleteRetiredSigningKeys: call(signingKeyRepository.deleteRetiredSigningKeys),
      lockSigningKeys: call(signingKeyRepository.lockSigningKeys),
    },
  },
];
