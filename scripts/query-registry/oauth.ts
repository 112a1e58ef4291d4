import * as authorizationCodeRepository from '../../src/oauth/authorization-code-repository.js';
import * as consentRepository from '../../src/oauth/consent-repository.js';
import { call, SAMPLE, type RepositoryFile } from './sample.js';

export const oauth: RepositoryFile[] = [
  {
    file: 'src/oauth/authorization-code-repository.ts',
    area: 'oauth',
    entries: {
      insertAuthorizationCode: call(authorizationCodeRepository.insertAuthorizationCode, {
        id: SAMPLE.newId,
        code_hash: 'sha256-hex-of-the-code',
        client_id: SAMPLE.clientId,
        user_id: SAMPLE.userId,
        redirect_uri: 'https://shop.example.com/callback',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        nonce: 'n-0S6_WzA2Mj',
        scopes: ['openid', 'email'],
        signin_session_id: SAMPLE.sessionId,
        auth_time: SAMPLE.date,
        amr: ['pwd'],
        created_at: SAMPLE.date,
        expires_at: SAMPLE.date,
      }),
      deleteLapsedAuthorizationCodes: call(authorizationCodeRepository.deleteLapsedAuthorizationCodes),
      lockAuthorizationCode: call(authorizationCodeRepository.lockAuthorizationCode, 'sha256-hex-of-the-code'),
      markAuthorizationCodeUsed: call(authorizationCodeRepository.markAuthorizationCodeUsed, SAMPLE.newId, SAMPLE.sessionId),
    },
  },
  {
    file: 'src/oauth/consent-repository.ts',
    area: 'oauth',
    entries: {
      findConsent: call(consentRepository.findConsent, SAMPLE.userId, SAMPLE.clientId),
      findConsentForShare: call(consentRepository.findConsentForShare, SAMPLE.userId, SAMPLE.clientId),
      upsertConsent: call(consentRepository.upsertConsent, { user_id: SAMPLE.userId, client_id: SAMPLE.clientId, scopes: ['openid', 'email'], granted_at: SAMPLE.date }),
      consentsOfUser: call(consentRepository.consentsOfUser, SAMPLE.userId),
      deleteConsent: call(consentRepository.deleteConsent, SAMPLE.userId, SAMPLE.clientId),
    },
  },
];
