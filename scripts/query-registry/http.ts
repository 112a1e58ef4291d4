import * as idempotencyKeyRepository from '../../src/http/idempotency-key-repository.js';
import { call, SAMPLE, type RepositoryFile } from './sample.js';

const scope = { ownerId: SAMPLE.userId, key: 'key-1', fingerprint: 'fingerprint-1' };

export const http: RepositoryFile[] = [
  {
    file: 'src/http/idempotency-key-repository.ts',
    area: 'http',
    entries: {
      // A key nobody holds: the insert takes it, the statement a first request sends.
      claimKey: call(idempotencyKeyRepository.claimKey, scope),
      completeKey: call(idempotencyKeyRepository.completeKey, scope, { status: 200, body: { ok: true } }),
      releaseKey: call(idempotencyKeyRepository.releaseKey, scope),
      deleteExpiredIdempotencyKeys: call(idempotencyKeyRepository.deleteExpiredIdempotencyKeys),
      forgetRepliesAbout: call(idempotencyKeyRepository.forgetRepliesAbout, SAMPLE.userId),
    },
  },
];
