import * as challengeRepository from '../../src/mfa/challenge-repository.js';
import * as factorRepository from '../../src/mfa/factor-repository.js';
import * as failureLockRepository from '../../src/mfa/failure-lock-repository.js';
import * as loginTokenRepository from '../../src/mfa/login-token-repository.js';
import * as recoveryCodeRepository from '../../src/mfa/recovery-code-repository.js';
import { call, callerReadSample, SAMPLE, type RepositoryFile } from './sample.js';

const challenge = { value: 'challenge-1', purpose: 'authentication' as const, userId: SAMPLE.userId, owner: { loginTokenId: SAMPLE.loginTokenId } };

export const mfa: RepositoryFile[] = [
  {
    file: 'src/mfa/challenge-repository.ts',
    area: 'mfa',
    entries: {
      insertChallenge: call(challengeRepository.insertChallenge, { ...challenge, ttlSeconds: 300 }),
      takeChallenge: call(challengeRepository.takeChallenge, challenge),
      deleteExpiredChallenges: call(challengeRepository.deleteExpiredChallenges),
    },
  },
  {
    file: 'src/mfa/factor-repository.ts',
    area: 'mfa',
    entries: {
      confirmedFactorsOfUser: callerReadSample(factorRepository.confirmedFactorsOfUser, SAMPLE.userId),
      factorOfUser: callerReadSample(factorRepository.factorOfUser, SAMPLE.userId, SAMPLE.factorId),
      insertFactor: call(factorRepository.insertFactor, {
        id: SAMPLE.newId,
        user_id: SAMPLE.userId,
        type: 'totp',
        name: 'Tablet',
        totp_secret: 'SECRET2',
        totp_last_step: null,
        credential_id: null,
        public_key: null,
        sign_count: 0,
        transports: null,
        confirmed_at: null,
        created_at: SAMPLE.date,
      }),
      factorsOfUser: call(factorRepository.factorsOfUser, SAMPLE.userId, { type: 'totp' }),
      lockConfirmedFactors: call(factorRepository.lockConfirmedFactors, SAMPLE.userId, 'totp'),
      lockFactor: call(factorRepository.lockFactor, SAMPLE.userId, SAMPLE.factorId),
      passkeyIsRegistered: call(factorRepository.passkeyIsRegistered, 'credential-1'),
      countConfirmedFactors: call(factorRepository.countConfirmedFactors, SAMPLE.userId),
      markTotpStepUsed: call(factorRepository.markTotpStepUsed, SAMPLE.factorId, 58_000_000, false),
      markPasskeyUsed: call(factorRepository.markPasskeyUsed, SAMPLE.factorId, 7),
      deleteFactor: call(factorRepository.deleteFactor, SAMPLE.factorId),
      deleteFactorsOfUser: call(factorRepository.deleteFactorsOfUser, SAMPLE.userId),
      deleteStaleUnconfirmedFactors: call(factorRepository.deleteStaleUnconfirmedFactors),
    },
  },
  {
    file: 'src/mfa/failure-lock-repository.ts',
    area: 'mfa',
    entries: {
      lockFailureCount: call(failureLockRepository.lockFailureCount, SAMPLE.userId),
      countWrongCode: call(failureLockRepository.countWrongCode, SAMPLE.userId),
      startLock: call(failureLockRepository.startLock, SAMPLE.userId, { firstSeconds: 60, maxSeconds: 86_400 }),
      resetWrongCodes: call(failureLockRepository.resetWrongCodes, SAMPLE.userId),
      deleteFailureCount: call(failureLockRepository.deleteFailureCount, SAMPLE.userId),
    },
  },
  {
    file: 'src/mfa/login-token-repository.ts',
    area: 'mfa',
    entries: {
      insertLoginToken: call(loginTokenRepository.insertLoginToken, { tokenHash: 'login-hash-2', userId: SAMPLE.userId, sessionVersion: 0, firstFactor: 'pwd', ttlSeconds: 300 }),
      findLoginToken: call(loginTokenRepository.findLoginToken, 'login-hash'),
      lockLoginToken: call(loginTokenRepository.lockLoginToken, SAMPLE.loginTokenId),
      countLoginTokenFailure: call(loginTokenRepository.countLoginTokenFailure, SAMPLE.loginTokenId),
      spendLoginToken: call(loginTokenRepository.spendLoginToken, SAMPLE.loginTokenId),
      deleteExpiredLoginTokens: call(loginTokenRepository.deleteExpiredLoginTokens),
    },
  },
  {
    file: 'src/mfa/recovery-code-repository.ts',
    area: 'mfa',
    entries: {
      replaceRecoveryCodes: call(recoveryCodeRepository.replaceRecoveryCodes, SAMPLE.userId, ['code-hash-1', 'code-hash-2']),
      spendRecoveryCode: call(recoveryCodeRepository.spendRecoveryCode, SAMPLE.userId, 'code-hash-1'),
      countRecoveryCodesLeft: call(recoveryCodeRepository.countRecoveryCodesLeft, SAMPLE.userId),
      deleteRecoveryCodes: call(recoveryCodeRepository.deleteRecoveryCodes, SAMPLE.userId),
    },
  },
];
