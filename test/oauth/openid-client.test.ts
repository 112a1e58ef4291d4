import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { createUser, useAppWithAdmin } from '../helpers/test-app.js';
import { appSession, bearer, claimsOf, registerClient } from './oauth-helpers.js';

/**
 * The endpoints of API.md section 18 as a relying party's library sees them over HTTP:
 * openid-client 6 (panva) reads userinfo, introspects and revokes an app's tokens.
 */
describe('userinfo, introspection and revocation through openid-client', () => {
  const fixture = useAppWithAdmin();
  let base: string;
  before(async () => {
    await fixture.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(fixture.app.server.address() as AddressInfo).port}`;
  });

  const serverMetadata = () => ({
    issuer: fixture.testApp.config.jwtIssuer,
    token_endpoint: `${base}/api/oauth/token`,
    userinfo_endpoint: `${base}/oauth/userinfo`,
    revocation_endpoint: `${base}/oauth/revoke`,
    introspection_endpoint: `${base}/oauth/introspect`,
  });

  it('reads userinfo, introspects with a secret, and revokes a public app\'s token with its client_id', async () => {
    const confidential = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app, { name: 'Ada Lovelace' });
    const pair = await appSession(fixture.db, fixture.testApp.config, customer, confidential.id, ['openid', 'profile', 'email', 'offline_access']);

    const config = new client.Configuration(serverMetadata(), confidential.id, {}, client.ClientSecretBasic(confidential.secret!));
    client.allowInsecureRequests(config);
    const userInfo = await client.fetchUserInfo(config, pair.access_token, customer.id);
    assert.equal(userInfo.sub, customer.id);
    assert.equal(userInfo.name, 'Ada Lovelace');
    assert.equal(userInfo.email, customer.email);
    assert.equal(userInfo.email_verified, false);
    // Another subject than the one the ID token named: the library refuses it.
    await assert.rejects(client.fetchUserInfo(config, pair.access_token, '7d1c2b3a-0f9e-4d8c-b7a6-1e2f3a4b5c6d'));

    const introspected = await client.tokenIntrospection(config, pair.access_token);
    assert.equal(introspected.active, true);
    assert.equal(introspected.sub, customer.id);
    assert.equal(introspected.client_id, confidential.id);
    assert.equal(introspected.scope, 'openid profile email offline_access');
    assert.equal(introspected.sid, claimsOf(pair.access_token).sid);

    await client.tokenRevocation(config, pair.refresh_token, { token_type_hint: 'refresh_token' });
    assert.equal((await client.tokenIntrospection(config, pair.access_token)).active, false);
    await assert.rejects(client.fetchUserInfo(config, pair.access_token, customer.id), (error: Error & { status?: number }) => error.status === 401);

    // A public app revokes with its client_id alone (token_endpoint_auth_method none).
    const publicApp = await registerClient(fixture.app, fixture.admin, 'public');
    const publicPair = await appSession(fixture.db, fixture.testApp.config, customer, publicApp.id, ['openid', 'account']);
    const publicConfig = new client.Configuration(serverMetadata(), publicApp.id, {}, client.None());
    client.allowInsecureRequests(publicConfig);
    await client.tokenRevocation(publicConfig, publicPair.access_token);
    const profile = await fixture.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(publicPair.access_token) });
    assert.equal(profile.statusCode, 401);
    // And may not introspect: the library sees the server's invalid_client.
    await assert.rejects(client.tokenIntrospection(publicConfig, pair.access_token), (error: Error & { error?: string }) => error.error === 'invalid_client');
  });
});
