import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/database.js';
import { createScratchDatabase, loginAdmin, onPostgres, poolMode, testConfig } from '../helpers/test-app.js';

const KEY = randomBytes(32).toString('base64');
const OTHER_KEY = randomBytes(32).toString('base64');

/** API.md section 10, "Secrets at rest": private signing keys sealed with SIGNING_KEY_ENCRYPTION_KEY. */
describe('SIGNING_KEY_ENCRYPTION_KEY', () => {
  it('seals the private signing keys (those stored plain before too), and refuses to start with the wrong key or none', async () => {
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    const dataDir = await mkdtemp(path.join(tmpdir(), 'sealed-keys-'));
    // Ed25519 keys from the database (no JWT_SECRET), over one database that outlives each start.
    const start = async (key: string | undefined) => {
      const config = testConfig({ JWT_SECRET: '', ...(key ? { SIGNING_KEY_ENCRYPTION_KEY: key } : {}) }, scratch?.url);
      const database = await openDatabase({ databaseUrl: scratch?.url, dataDir, poolMode });
      try {
        const { app } = await buildApp({ config, database, logger: false, tellOperator: () => {} });
        await app.ready();
        return Object.assign(app, { database: database.db });
      } catch (error) {
        await database.close();
        throw error;
      }
    };
    try {
      const plain = await start(undefined);
      const storedPlain = await plain.database.selectFrom('signing_keys').select('private_pem').execute();
      assert.match(storedPlain[0]!.private_pem, /PRIVATE KEY/, 'without the key, stored as before');
      await plain.close();

      const sealed = await start(KEY);
      await loginAdmin(sealed);
      const rotated = await sealed.inject({ method: 'POST', url: '/api/signing-keys/rotate', headers: (await loginAdmin(sealed)).auth });
      assert.equal(rotated.statusCode, 200);
      const stored = await sealed.database.selectFrom('signing_keys').select('private_pem').execute();
      assert.equal(stored.length, 4, 'an Ed25519 key and an RSA key, each rotated once');
      for (const row of stored) {
        assert.match(row.private_pem, /^aes256gcm:/);
        assert.doesNotMatch(row.private_pem, /PRIVATE KEY/);
      }
      await sealed.close();

      await assert.rejects(start(OTHER_KEY), /SIGNING_KEY_ENCRYPTION_KEY does not decrypt the stored signing keys/);
      await assert.rejects(start(undefined), /the stored signing keys are encrypted: set SIGNING_KEY_ENCRYPTION_KEY/);

      const again = await start(KEY);
      const admin = await loginAdmin(again);
      assert.equal((await again.inject({ method: 'GET', url: '/api/users/profile', headers: admin.auth })).statusCode, 200, 'tokens sign and verify with the sealed keys');
      await again.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await scratch?.drop();
    }
  });

  it('must be the base64 of 32 bytes', () => {
    assert.throws(() => testConfig({ SIGNING_KEY_ENCRYPTION_KEY: randomBytes(16).toString('base64') }), /SIGNING_KEY_ENCRYPTION_KEY must be the base64 of 32 bytes/);
    assert.throws(() => testConfig({ SIGNING_KEY_ENCRYPTION_KEY: 'not base64 at all!' }), /SIGNING_KEY_ENCRYPTION_KEY/);
  });
});
