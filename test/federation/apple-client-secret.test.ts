import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { createVerifier } from 'fast-jwt';
import { APPLE_AUDIENCE, APPLE_SECRET_MAX_SECONDS, signAppleClientSecret } from '../../src/federation/apple-client-secret.js';

/** API.md section 20: for Apple, the service signs the ES256 client secret JWT Apple requires. */
describe("Apple's client secret", () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const publicKeyPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const input = { teamId: 'TEAM123456', keyId: 'KEY1234567', clientId: 'com.example.shop.signin', privateKeyPem };

  it('is an ES256 JWT that the public key verifies: iss the team, sub the client id, aud Apple, kid the key', () => {
    const now = new Date();
    const token = signAppleClientSecret({ ...input, now });
    const verify = createVerifier({ key: publicKeyPem, algorithms: ['ES256'], allowedAud: APPLE_AUDIENCE, allowedIss: 'TEAM123456', allowedSub: 'com.example.shop.signin', complete: true });
    const { header, payload } = verify(token) as { header: Record<string, unknown>; payload: Record<string, number | string> };
    assert.deepEqual(header, { alg: 'ES256', kid: 'KEY1234567', typ: 'JWT' });
    const issuedAt = Math.floor(now.getTime() / 1000);
    assert.deepEqual(payload, { iss: 'TEAM123456', sub: 'com.example.shop.signin', aud: APPLE_AUDIENCE, iat: issuedAt, exp: issuedAt + 3600 });
  });

  it('never lives longer than six months, and is refused by another key', () => {
    const token = signAppleClientSecret({ ...input, lifetimeSeconds: 10 * APPLE_SECRET_MAX_SECONDS });
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iat: number; exp: number };
    assert.equal(payload.exp - payload.iat, APPLE_SECRET_MAX_SECONDS);
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
    assert.throws(() => createVerifier({ key: other, algorithms: ['ES256'] })(token));
  });

  it('needs a P-256 key', () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    assert.throws(() => signAppleClientSecret({ ...input, privateKeyPem: p384 }), /P-256/);
  });
});
