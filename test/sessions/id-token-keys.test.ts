import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, randomUUID, sign as signBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSigner, createVerifier } from 'fast-jwt';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { sql, type Migration } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { runMigrations } from '../../src/db/migrate.js';
import type { SigningAlgorithm } from '../../src/db/tables.js';
import { SecretsAtRest } from '../../src/sessions/secrets-at-rest.js';
import { ensureActiveSigningKeys } from '../../src/sessions/signing-key-service.js';
import { decodeJwt } from '../helpers/jwt.js';
import { buildTestApp, createScratchDatabase, loginAdmin, onPostgres, poolMode, problemOf, type TestApp } from '../helpers/test-app.js';

// Without JWT_SECRET the service signs access tokens with its Ed25519 keys.
const ED25519 = { JWT_SECRET: '' };
const ALGORITHMS: SigningAlgorithm[] = ['RS256', 'EdDSA'];
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

type Jwk = Record<string, string>;

/** The JWKS over HTTP, as an app verifying an ID token fetches it. */
async function fetchJwks(base: string): Promise<Jwk[]> {
  const response = await fetch(`${base}/.well-known/jwks.json`);
  assert.equal(response.status, 200);
  return ((await response.json()) as { keys: Jwk[] }).keys;
}

/** Verifies with the published key the token's kid names, as a relying party would (fast-jwt). */
function verifyWithJwks(token: string, keys: Jwk[], audience: string): Record<string, unknown> {
  const { header } = decodeJwt(token);
  const jwk = keys.find((key) => key.kid === header.kid);
  assert.ok(jwk, `the JWKS publishes the key ${String(header.kid)}`);
  const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString();
  return createVerifier({ key: pem, algorithms: [jwk.alg as SigningAlgorithm], allowedAud: audience, allowedIss: 'https://id.shop.example', checkTyp: 'JWT' })(token);
}

/** The claims the authorization server will pass: all of them are the caller's. */
function idTokenClaims(nonce: string) {
  const now = Math.floor(Date.now() / 1000);
  return { iss: 'https://id.shop.example', sub: randomUUID(), aud: 'app-client-id', exp: now + 900, iat: now, auth_time: now, nonce, sid: randomUUID(), amr: ['pwd'] };
}

/** A private key as stored, opened (the tests run without SIGNING_KEY_ENCRYPTION_KEY). */
async function storedKey(testApp: TestApp, alg: SigningAlgorithm) {
  const row = await testApp.db.selectFrom('signing_keys').selectAll().where('alg', '=', alg).where('status', '=', 'active').executeTakeFirstOrThrow();
  return { kid: row.kid, privatePem: new SecretsAtRest(undefined).open(row.private_pem) };
}

/** A token with the claims of `accessToken`, signed by a key of the database with the header given. */
function resign(accessToken: string, privatePem: string, alg: SigningAlgorithm, kid: string): string {
  const { payload } = decodeJwt(accessToken);
  return createSigner({ key: privatePem, algorithm: alg, kid, header: { alg, typ: 'at+jwt', kid } })(payload);
}

const profile = (testApp: TestApp, token: string) => testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${token}` } });

describe('keys that sign ID tokens', () => {
  let testApp: TestApp;
  let base: string;
  before(async () => {
    testApp = await buildTestApp({ environment: ED25519 });
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
  });
  after(() => testApp.close());

  it('publishes an RSA key of 2048 bits beside the Ed25519 one, each with its own kid', async () => {
    const keys = await fetchJwks(base);
    const rsa = keys.filter((key) => key.kty === 'RSA');
    assert.equal(rsa.length, 1);
    assert.deepEqual(Object.keys(rsa[0]!).sort(), ['alg', 'e', 'kid', 'kty', 'n', 'use'], 'the public parts only');
    assert.equal(rsa[0]!.alg, 'RS256');
    assert.equal(rsa[0]!.use, 'sig');
    assert.equal(rsa[0]!.e, 'AQAB');
    assert.ok(Buffer.from(rsa[0]!.n!, 'base64url').length * 8 >= 2048, 'at least 2048 bits');
    const stored = await testApp.db.selectFrom('signing_keys').select(['kid', 'alg', 'status']).orderBy('alg').execute();
    assert.deepEqual(stored.map((key) => [key.alg, key.status]), [['EdDSA', 'active'], ['RS256', 'active']]);
    assert.equal(stored[1]!.kid, rsa[0]!.kid);
    assert.notEqual(stored[0]!.kid, stored[1]!.kid);
  });

  it('signs ID tokens with either algorithm under the active kid, verifiable with the JWKS over HTTP, before and after a rotation', async () => {
    const signedBefore = new Map<SigningAlgorithm, string>();
    for (const alg of ALGORITHMS) {
      const claims = idTokenClaims(`nonce-${alg}`);
      const token = testApp.idTokens.signIdToken(claims, alg);
      const { header } = decodeJwt(token);
      const active = await storedKey(testApp, alg);
      assert.deepEqual(header, { alg, typ: 'JWT', kid: active.kid });
      assert.deepEqual(verifyWithJwks(token, await fetchJwks(base), 'app-client-id'), claims, 'the claims are exactly the caller’s');
      signedBefore.set(alg, token);
    }

    const admin = await loginAdmin(testApp.app);
    const rotated = await testApp.app.inject({ method: 'POST', url: '/api/signing-keys/rotate', headers: admin.auth });
    assert.equal(rotated.statusCode, 200);
    const keys = await fetchJwks(base);
    assert.equal(keys.length, 4, 'the new key of each algorithm, and the retiring ones');
    // An independent library, fetching the JWKS itself, agrees.
    const remote = createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`));
    for (const alg of ALGORITHMS) {
      const old = signedBefore.get(alg)!;
      assert.equal(verifyWithJwks(old, keys, 'app-client-id').nonce, `nonce-${alg}`, 'a retiring key still verifies its ID tokens');
      const fresh = testApp.idTokens.signIdToken(idTokenClaims(`after-${alg}`), alg);
      const active = await storedKey(testApp, alg);
      assert.equal(decodeJwt(fresh).header.kid, active.kid);
      assert.notEqual(decodeJwt(fresh).header.kid, decodeJwt(old).header.kid, 'the new key signs');
      for (const token of [old, fresh]) {
        const { payload, protectedHeader } = await jwtVerify(token, remote, { issuer: 'https://id.shop.example', audience: 'app-client-id', algorithms: [alg] });
        assert.equal(protectedHeader.typ, 'JWT');
        assert.equal(payload.nonce, token === old ? `nonce-${alg}` : `after-${alg}`);
      }
    }

    // Once their tokens have expired, the retiring keys leave the JWKS, and their ID tokens no longer verify.
    await testApp.db.updateTable('signing_keys').set({ retires_at: new Date(Date.now() - 1000) }).where('status', '=', 'retiring').execute();
    await testApp.jobs.runNow('refresh-signing-keys');
    const remaining = await fetchJwks(base);
    assert.equal(remaining.length, 2);
    for (const old of signedBefore.values()) assert.throws(() => verifyWithJwks(old, remaining, 'app-client-id'), /publishes the key/);
  });

  it('never verifies an access token with an RSA key, whatever the header says, nor takes an ID token for one: 401', async () => {
    const admin = await loginAdmin(testApp.app);
    // The way these tokens are made works: re-signed with the Ed25519 key, the same token passes.
    const ed25519 = await storedKey(testApp, 'EdDSA');
    assert.equal((await profile(testApp, resign(admin.accessToken, ed25519.privatePem, 'EdDSA', ed25519.kid))).statusCode, 200);

    const rsa = await storedKey(testApp, 'RS256');
    const signedRs256 = await profile(testApp, resign(admin.accessToken, rsa.privatePem, 'RS256', rsa.kid));
    assert.equal(signedRs256.statusCode, 401);
    assert.equal(problemOf(signedRs256).code, 'invalid_token');
    // Claiming EdDSA under the RSA key's kid, with an RS256 signature, changes nothing.
    const input = `${encode({ alg: 'EdDSA', typ: 'at+jwt', kid: rsa.kid })}.${encode(decodeJwt(admin.accessToken).payload)}`;
    const claimed = await profile(testApp, `${input}.${signBytes('sha256', Buffer.from(input), rsa.privatePem).toString('base64url')}`);
    assert.equal(claimed.statusCode, 401);
    assert.equal(problemOf(claimed).code, 'invalid_token');
    // Nor is an ID token an access token, though the Ed25519 key signs both: its typ is JWT.
    const { payload } = decodeJwt(admin.accessToken);
    const idToken = testApp.idTokens.signIdToken(payload, 'EdDSA');
    assert.equal(decodeJwt(idToken).header.kid, ed25519.kid);
    const asAccessToken = await profile(testApp, idToken);
    assert.equal(asAccessToken.statusCode, 401);
    assert.equal(problemOf(asAccessToken).code, 'invalid_token');
  });

  it('rotates both keys when the automatic rotation is due', async () => {
    const before = await testApp.db.selectFrom('signing_keys').select(['kid', 'alg']).where('status', '=', 'active').execute();
    await testApp.db.updateTable('signing_keys').set({ created_at: new Date(Date.now() - 91 * 24 * 3600 * 1000) }).where('alg', '=', 'EdDSA').where('status', '=', 'active').execute();
    const eventsBefore = await testApp.db.selectFrom('events').select('id').where('type', '=', 'signing_key.rotated').execute();
    await testApp.jobs.runNow('rotate-signing-key');
    const active = await testApp.db.selectFrom('signing_keys').select(['kid', 'alg']).where('status', '=', 'active').orderBy('alg').execute();
    assert.deepEqual(active.map((key) => key.alg), ['EdDSA', 'RS256']);
    for (const key of active) assert.ok(!before.some((old) => old.kid === key.kid), `a new ${key.alg} key`);
    const retiring = await testApp.db.selectFrom('signing_keys').select('kid').where('status', '=', 'retiring').where('retires_at', '>', new Date()).execute();
    assert.deepEqual(retiring.map((key) => key.kid).sort(), before.map((key) => key.kid).sort());
    const eventsAfter = await testApp.db.selectFrom('events').select('id').where('type', '=', 'signing_key.rotated').execute();
    assert.equal(eventsAfter.length - eventsBefore.length, 2);
    // Not due again: nothing happens.
    await testApp.jobs.runNow('rotate-signing-key');
    assert.equal((await testApp.db.selectFrom('signing_keys').select('kid').where('status', '=', 'active').execute()).length, 2);
    assert.equal((await testApp.db.selectFrom('events').select('id').where('type', '=', 'signing_key.rotated').execute()).length, eventsAfter.length);
  });
});

describe('keys that sign ID tokens, with JWT_SECRET', () => {
  let testApp: TestApp;
  let base: string;
  before(async () => {
    testApp = await buildTestApp();
    assert.ok(testApp.config.jwtSecret, 'the tests run with JWT_SECRET by default');
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
  });
  after(() => testApp.close());

  it('still creates an Ed25519 key and an RSA key, publishes them and signs ID tokens with them', async () => {
    const stored = await testApp.db.selectFrom('signing_keys').select(['kid', 'alg']).orderBy('alg').execute();
    assert.deepEqual(stored.map((key) => key.alg), ['EdDSA', 'RS256']);
    const keys = await fetchJwks(base);
    assert.deepEqual(keys.map((key) => key.kid).sort(), stored.map((key) => key.kid).sort(), 'only the keys of ID tokens');
    for (const alg of ALGORITHMS) {
      const claims = idTokenClaims(`secret-mode-${alg}`);
      assert.deepEqual(verifyWithJwks(testApp.idTokens.signIdToken(claims, alg), keys, 'app-client-id'), claims);
    }
  });

  it('verifies access tokens with the secret only: one signed by a key of the JWKS is 401', async () => {
    const admin = await loginAdmin(testApp.app);
    assert.equal(decodeJwt(admin.accessToken).header.alg, 'HS256');
    assert.equal((await profile(testApp, admin.accessToken)).statusCode, 200);
    for (const alg of ALGORITHMS) {
      const key = await storedKey(testApp, alg);
      const forged = await profile(testApp, resign(admin.accessToken, key.privatePem, alg, key.kid));
      assert.equal(forged.statusCode, 401, `an access token signed by the ${alg} key`);
      assert.equal(problemOf(forged).code, 'invalid_token');
    }
  });

  it('rotates both keys at the admin route', async () => {
    const admin = await loginAdmin(testApp.app);
    const rotated = await testApp.app.inject({ method: 'POST', url: '/api/signing-keys/rotate', headers: admin.auth });
    assert.equal(rotated.statusCode, 200);
    assert.equal(rotated.json().alg, 'EdDSA');
    const listed = (await testApp.app.inject({ method: 'GET', url: '/api/signing-keys', headers: admin.auth })).json().items as { alg: string; status: string }[];
    assert.deepEqual(listed.map((key) => `${key.status} ${key.alg}`), ['active RS256', 'active EdDSA', 'retiring RS256', 'retiring EdDSA']);
    assert.equal((await fetchJwks(base)).length, 4);
    const token = testApp.idTokens.signIdToken(idTokenClaims('rotated'), 'RS256');
    assert.equal(decodeJwt(token).header.kid, (await storedKey(testApp, 'RS256')).kid);
  });
});

describe('the migration to one active key per algorithm', () => {
  it('keeps the Ed25519 key there was, and the next start adds only an RSA key', async () => {
    const directory = path.join(import.meta.dirname, '../../src/db/migrations');
    const files = readdirSync(directory).filter((file) => file.endsWith('.ts')).sort();
    const migrations: [string, Migration][] = await Promise.all(
      files.map(async (file) => [file.replace(/\.ts$/, ''), Object.values(await import(path.join(directory, file)))[0] as Migration] as [string, Migration]),
    );
    assert.ok(migrations.some(([name]) => name === '0026-id-token-keys'));
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    const database = await openDatabase({ databaseUrl: scratch?.url, dataDir: 'memory://', poolMode });
    try {
      await runMigrations(database.db, Object.fromEntries(migrations.filter(([name]) => name < '0026-id-token-keys')));
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const kid = randomUUID();
      const jwk = JSON.stringify({ ...publicKey.export({ format: 'jwk' }), kid, alg: 'EdDSA', use: 'sig' });
      const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
      await sql`insert into signing_keys (kid, alg, public_jwk, private_pem, status, created_at) values (${kid}, 'EdDSA', ${jwk}, ${pem}, 'active', now())`.execute(database.db);
      await runMigrations(database.db, Object.fromEntries(migrations));

      await ensureActiveSigningKeys(database.db, new SecretsAtRest(undefined));
      const keys = await database.db.selectFrom('signing_keys').select(['kid', 'alg', 'status', 'private_pem']).orderBy('alg').execute();
      assert.deepEqual(keys.map((key) => [key.alg, key.status]), [['EdDSA', 'active'], ['RS256', 'active']]);
      assert.equal(keys[0]!.kid, kid, 'the Ed25519 key is the one there was');
      assert.equal(keys[0]!.private_pem, pem);

      // The table holds one active key per algorithm, and no algorithm but the two.
      const insert = (alg: string, status: string) =>
        sql`insert into signing_keys (kid, alg, public_jwk, private_pem, status, created_at) values (${randomUUID()}, ${alg}, '{}', 'pem', ${status}, now())`.execute(database.db);
      await assert.rejects(insert('EdDSA', 'active'), 'a second active Ed25519 key');
      await assert.rejects(insert('RS256', 'active'), 'a second active RSA key');
      await assert.rejects(insert('HS256', 'retiring'), 'an algorithm the service does not sign with');
      await insert('RS256', 'retiring');
    } finally {
      await database.close();
      await scratch?.drop();
    }
  });
});

describe('keys that sign ID tokens across instances (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  it('creates exactly one active key per algorithm when two instances start together on a database without keys', async () => {
    const scratch = await createScratchDatabase();
    const started = await Promise.allSettled([buildTestApp({ environment: ED25519, databaseUrl: scratch.url }), buildTestApp({ environment: ED25519, databaseUrl: scratch.url })]);
    try {
      assert.deepEqual(started.map((result) => result.status), ['fulfilled', 'fulfilled'], 'both instances start');
      const [first, second] = started.map((result) => (result as PromiseFulfilledResult<TestApp>).value) as [TestApp, TestApp];
      const keys = await first.db.selectFrom('signing_keys').select(['kid', 'alg', 'status']).orderBy('alg').execute();
      assert.deepEqual(keys.map((key) => [key.alg, key.status]), [['EdDSA', 'active'], ['RS256', 'active']]);
      // Both sign ID tokens with the same keys.
      for (const alg of ALGORITHMS) {
        const kid = keys.find((key) => key.alg === alg)!.kid;
        assert.equal(decodeJwt(first.idTokens.signIdToken(idTokenClaims('first'), alg)).header.kid, kid);
        assert.equal(decodeJwt(second.idTokens.signIdToken(idTokenClaims('second'), alg)).header.kid, kid);
      }
    } finally {
      for (const result of started) if (result.status === 'fulfilled') await result.value.close();
      await scratch.drop();
    }
  });
});
