import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { decodeJwt } from '../helpers/jwt.js';
import { buildTestApp, createUser, loginAdmin, onPostgres, problemOf, type Session, type TestApp } from '../helpers/test-app.js';

// Without JWT_SECRET the service signs with Ed25519 keys kept in the database.
const ED25519 = { JWT_SECRET: '' };

describe('signing keys and the JWKS', () => {
  let testApp: TestApp;
  let admin: Session;
  before(async () => {
    testApp = await buildTestApp({ environment: ED25519 });
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp.close());
  const jwks = async () => {
    const response = await testApp.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['cache-control'], 'public, max-age=300');
    return response.json() as { keys: Record<string, string>[] };
  };
  const profile = (token: string) => testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${token}` } });

  it('signs with EdDSA under a kid that the JWKS publishes, and an independent library verifies it', async () => {
    const { header } = decodeJwt(admin.accessToken);
    assert.equal(header.alg, 'EdDSA');
    assert.equal(header.typ, 'at+jwt');
    const set = await jwks();
    // The Ed25519 key that signs access tokens, and the RSA key that signs only ID tokens.
    assert.deepEqual(set.keys.map((key) => key.alg).sort(), ['EdDSA', 'RS256']);
    const ed25519 = set.keys.find((key) => key.alg === 'EdDSA')!;
    assert.equal(ed25519.kid, header.kid);
    assert.deepEqual(Object.keys(ed25519).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x'], 'public parts only');
    assert.deepEqual(Object.keys(set.keys.find((key) => key.alg === 'RS256')!).sort(), ['alg', 'e', 'kid', 'kty', 'n', 'use'], 'public parts only');
    const { payload } = await jwtVerify(admin.accessToken, createLocalJWKSet(set as never), { issuer: testApp.config.jwtIssuer, audience: 'shop-accounts-api' });
    assert.equal(payload.sub, admin.id);
  });

  it('refuses alg confusion: HS256 signed with the public key, and an unknown kid', async () => {
    const ed25519 = (await jwks()).keys.find((key) => key.alg === 'EdDSA')!;
    const { payload } = decodeJwt(admin.accessToken);
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const secret of [ed25519.x!, JSON.stringify(ed25519)]) {
      const input = `${encode({ alg: 'HS256', typ: 'at+jwt', kid: ed25519.kid })}.${encode(payload)}`;
      const forged = `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
      const response = await profile(forged);
      assert.equal(response.statusCode, 401);
      assert.equal(problemOf(response).code, 'invalid_token');
    }
    const [, body, signature] = admin.accessToken.split('.');
    assert.equal((await profile(`${encode({ alg: 'EdDSA', typ: 'at+jwt', kid: 'someone-else' })}.${body}.${signature}`)).statusCode, 401);
  });

  it('rotates: the new key signs, old tokens work until their key retires, then 401', async () => {
    const user = await createUser(testApp.app);
    const oldKid = decodeJwt(user.accessToken).header.kid;
    const rotated = await testApp.app.inject({ method: 'POST', url: '/api/signing-keys/rotate', headers: admin.auth });
    assert.equal(rotated.statusCode, 200);
    assert.notEqual(rotated.json().kid, oldKid);
    assert.equal(rotated.json().alg, 'EdDSA', 'the reply is the new key of access tokens');
    const listed: { kid: string; alg: string; status: string; retires_at: string | null }[] = (await testApp.app.inject({ method: 'GET', url: '/api/signing-keys', headers: admin.auth })).json().items;
    // Both algorithms rotated together: the new keys first, then the retiring ones.
    assert.deepEqual(
      listed.map((key) => `${key.status} ${key.alg}`),
      ['active RS256', 'active EdDSA', 'retiring RS256', 'retiring EdDSA'],
    );
    assert.equal(listed[1]!.kid, rotated.json().kid);
    assert.equal(listed[3]!.kid, oldKid);
    for (const retiring of listed.slice(2)) {
      const retiresAt = new Date(retiring.retires_at!).getTime();
      assert.ok(Math.abs(retiresAt - (Date.now() + 900_000 + 300_000)) < 10_000, 'retiring until the TTL plus 5 minutes');
    }
    assert.deepEqual((await jwks()).keys.map((key) => key.kid).sort(), listed.map((key) => key.kid).sort());
    assert.equal((await profile(user.accessToken)).statusCode, 200, 'an old token still works');
    const fresh = await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } });
    assert.equal(decodeJwt(fresh.json().access_token).header.kid, rotated.json().kid);
    // One event per key rotated, each naming the new kid and the one it replaced.
    const events = await testApp.db.selectFrom('events').selectAll().where('type', '=', 'signing_key.rotated').orderBy('subject_id').execute();
    assert.deepEqual(
      events.map((event) => ({ actor: event.actor_id, subject: event.subject_id, data: event.data })),
      [listed[0]!, listed[1]!]
        .map((key) => ({ actor: admin.id, subject: key.kid, data: { after: { kid: key.kid }, before: { kid: listed.find((old) => old.status === 'retiring' && old.alg === key.alg)!.kid } } }))
        .sort((a, b) => a.subject.localeCompare(b.subject)),
    );

    // Their last tokens have expired: the retiring keys are gone.
    await testApp.db.updateTable('signing_keys').set({ retires_at: new Date(Date.now() - 1000) }).where('status', '=', 'retiring').execute();
    await testApp.jobs.runNow('refresh-signing-keys');
    assert.deepEqual((await jwks()).keys.map((key) => key.kid).sort(), [listed[0]!.kid, listed[1]!.kid].sort());
    const expired = await profile(user.accessToken);
    assert.equal(expired.statusCode, 401);
    assert.equal((await testApp.app.inject({ method: 'GET', url: '/api/signing-keys', headers: user.auth })).statusCode, 401);
    const customer = await createUser(testApp.app);
    assert.equal((await testApp.app.inject({ method: 'POST', url: '/api/signing-keys/rotate', headers: customer.auth })).statusCode, 403);
  });

  it('lets another service verify tokens with the example in docs/examples', async () => {
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
    const example = path.join(import.meta.dirname, '..', '..', 'docs', 'examples', 'verify-access-token.mjs');
    const { accessTokenVerifier } = (await import(example)) as { accessTokenVerifier(url: string): (token: string) => Promise<{ userId: string; sessionId: string }> };
    const fresh = await loginAdmin(testApp.app);
    const verified = await accessTokenVerifier(base)(fresh.accessToken);
    assert.equal(verified.userId, admin.id);
    assert.equal(verified.sessionId, decodeJwt(fresh.accessToken).payload.sid);
  });
});

describe('signing with JWT_SECRET', () => {
  it('signs HS256 and publishes only the keys of ID tokens', async () => {
    const testApp = await buildTestApp();
    try {
      const admin = await loginAdmin(testApp.app);
      assert.equal(decodeJwt(admin.accessToken).header.alg, 'HS256');
      const stored = await testApp.db.selectFrom('signing_keys').select(['kid', 'alg']).orderBy('alg').execute();
      assert.deepEqual(stored.map((key) => key.alg), ['EdDSA', 'RS256']);
      const published = (await testApp.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys as Record<string, string>[];
      assert.deepEqual(published.map((key) => key.kid).sort(), stored.map((key) => key.kid).sort());
    } finally {
      await testApp.close();
    }
  });
});

describe('signing keys across instances (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  it('creates one key per algorithm for instances that start together, and verifies a key another instance just made', async () => {
    const first = await buildTestApp({ environment: ED25519 });
    const [second, third] = await Promise.all([
      buildTestApp({ environment: ED25519, databaseUrl: first.databaseUrl! }),
      buildTestApp({ environment: ED25519, databaseUrl: first.databaseUrl! }),
    ]);
    try {
      // Exactly one key per algorithm, all active: the first start made them, the others found them.
      const keys = await first.db.selectFrom('signing_keys').select(['alg', 'status']).orderBy('alg').execute();
      assert.deepEqual(keys, [
        { alg: 'EdDSA', status: 'active' },
        { alg: 'RS256', status: 'active' },
      ]);
      const admin = await loginAdmin(first.app);
      await first.app.inject({ method: 'POST', url: '/api/signing-keys/rotate', headers: admin.auth });
      const signedByNewKey = await loginAdmin(first.app);
      const elsewhere = await second.app.inject({ method: 'GET', url: '/api/users/profile', headers: signedByNewKey.auth });
      assert.equal(elsewhere.statusCode, 200, 'the other instance loads the new key on first sight');
    } finally {
      await third.app.close();
      await second.app.close();
      await first.close();
    }
  });
});
