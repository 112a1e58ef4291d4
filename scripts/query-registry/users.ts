import * as accountAttemptRepository from '../../src/users/account-attempt-repository.js';
import * as accountTokenRepository from '../../src/users/account-token-repository.js';
import * as balanceRepository from '../../src/users/balance-repository.js';
import * as emailCodeRepository from '../../src/users/email-code-repository.js';
import * as userRepository from '../../src/users/user-repository.js';
import { call, callerReadSample, FIRST_PAGE, notSql, SAMPLE, type RepositoryFile } from './sample.js';

export const users: RepositoryFile[] = [
  {
    file: 'src/users/account-attempt-repository.ts',
    area: 'users',
    entries: {
      insertAccountAttempt: call(accountAttemptRepository.insertAccountAttempt, 'login_failure', 'ada@example.com'),
      deleteAccountAttempt: call(accountAttemptRepository.deleteAccountAttempt, SAMPLE.newId),
      deleteAccountAttempts: call(accountAttemptRepository.deleteAccountAttempts, 'login_failure', 'ada@example.com'),
      countRecentAttempts: call(accountAttemptRepository.countRecentAttempts, 'login_failure', 'ada@example.com', 900),
      deleteStaleAccountAttempts: call(accountAttemptRepository.deleteStaleAccountAttempts),
    },
  },
  {
    file: 'src/users/account-token-repository.ts',
    area: 'users',
    entries: {
      hashAccountToken: notSql('helper'),
      createAccountToken: call(accountTokenRepository.createAccountToken, { userId: SAMPLE.userId, purpose: 'email_verification', email: 'ada@example.com', ttlSeconds: 86_400 }),
      findLiveAccountToken: call(accountTokenRepository.findLiveAccountToken, 'password_reset', 'token-value'),
      accountTokenIsLive: call(accountTokenRepository.accountTokenIsLive, 'password_reset', 'token-value'),
      findResendableAccountToken: call(accountTokenRepository.findResendableAccountToken, SAMPLE.userId, 'email_verification', 'ada@example.com'),
      countRecentAccountTokens: call(accountTokenRepository.countRecentAccountTokens, SAMPLE.userId, 'password_reset', 3600),
      spendAccountTokens: call(accountTokenRepository.spendAccountTokens, SAMPLE.userId, 'password_reset'),
      clearExpiredSealedTokens: call(accountTokenRepository.clearExpiredSealedTokens),
    },
  },
  {
    file: 'src/users/balance-repository.ts',
    area: 'users',
    entries: {
      insertLedgerEntry: call(balanceRepository.insertLedgerEntry, {
        user_id: SAMPLE.userId,
        delta: 500,
        balance_after: 500,
        currency: 'EUR',
        reason: 'top-up',
        actor_id: SAMPLE.userId,
        created_at: SAMPLE.date,
      }),
      ledgerPage: call(balanceRepository.ledgerPage, SAMPLE.userId, FIRST_PAGE),
      ledgerOldestFirstPage: call(balanceRepository.ledgerOldestFirstPage, SAMPLE.userId, FIRST_PAGE),
      countLedgerEntries: call(balanceRepository.countLedgerEntries, SAMPLE.userId),
    },
  },
  {
    file: 'src/users/email-code-repository.ts',
    area: 'users',
    entries: {
      hashEmailCode: notSql('helper'),
      lockAddressForCodes: call(emailCodeRepository.lockAddressForCodes, 'Ada@Example.com'),
      countRecentEmailCodes: call(emailCodeRepository.countRecentEmailCodes, 'Ada@Example.com', 3600),
      spendCodesOfAddress: call(emailCodeRepository.spendCodesOfAddress, 'Ada@Example.com'),
      insertEmailCode: call(emailCodeRepository.insertEmailCode, { email: 'ada@example.com', userId: SAMPLE.userId, value: '042917', ttlSeconds: 600 }),
      findLiveEmailCode: call(emailCodeRepository.findLiveEmailCode, 'Ada@Example.com', 5),
      lockEmailCode: call(emailCodeRepository.lockEmailCode, SAMPLE.newId),
      countEmailCodeFailure: call(emailCodeRepository.countEmailCodeFailure, SAMPLE.newId),
      spendEmailCode: call(emailCodeRepository.spendEmailCode, SAMPLE.newId),
      spendLiveEmailCode: call(emailCodeRepository.spendLiveEmailCode, SAMPLE.newId),
      spendCodesOfUser: call(emailCodeRepository.spendCodesOfUser, SAMPLE.userId, ['ada@example.com', 'ada.lovelace@example.com']),
      deleteStaleEmailCodes: call(emailCodeRepository.deleteStaleEmailCodes),
      deleteCodesOfUser: call(emailCodeRepository.deleteCodesOfUser, SAMPLE.userId),
    },
  },
  {
    file: 'src/users/user-repository.ts',
    area: 'users',
    entries: {
      userById: callerReadSample(userRepository.userById, SAMPLE.userId),
      userRecordById: callerReadSample(userRepository.userRecordById, SAMPLE.userId),
      findUserById: call(userRepository.findUserById, SAMPLE.userId),
      findUserRecord: call(userRepository.findUserRecord, SAMPLE.userId),
      addressesNobodyHolds: call(userRepository.addressesNobodyHolds, ['ada@example.com', 'grace@example.com'], SAMPLE.newId),
      findUserByIdForUpdate: call(userRepository.findUserByIdForUpdate, SAMPLE.userId),
      lockUserForLogin: call(userRepository.lockUserForLogin, SAMPLE.userId),
      findUserByEmail: call(userRepository.findUserByEmail, 'Ada@Example.com'),
      insertUser: call(userRepository.insertUser, { id: SAMPLE.newId, email: 'grace@example.com', name: 'Grace', phone: null, role: 'user', status: 'active', password_hash: 'hash', created_at: SAMPLE.date, updated_at: SAMPLE.date, deleted_at: null }),
      updateUser: call(userRepository.updateUser, SAMPLE.userId, { name: 'Ada L.' }),
      lockActiveAdminsAndTarget: call(userRepository.lockActiveAdminsAndTarget, SAMPLE.userId),
      anyAdminExists: call(userRepository.anyAdminExists),
      usersPage: call(userRepository.usersPage, { q: 'ada', role: 'admin' }, FIRST_PAGE),
      countUsers: call(userRepository.countUsers, { q: 'ada', role: 'admin' }),
    },
  },
];
