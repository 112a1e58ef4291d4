import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FORM, form } from '../helpers/code-grant.js';
import { buildTestApp, loginAdmin, problemOf, type TestApp } from '../helpers/test-app.js';

const SIGN_IN_SCOPES = ['openid', 'profile', 'email', 'phone', 'offline_access', 'account'];

/** API.md section 18, "Issuer" and "Endpoints": OpenID Connect Discovery 1.0 and RFC 8414. */
describe('discovery of the authorization server', () => {
  let testApp: TestApp;
  before(async () => {
    testApp = await buildTestApp({ environment: { PUBLIC_URL: 'https://id.shop.example/' } });
  });
  after(() => testApp.close());

  it('publishes the OpenID Connect metadata, and the same document as RFC 8414 metadata', async () => {
    const reply = await testApp.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    assert.equal(reply.statusCode, 200, reply.body);
    assert.match(String(reply.headers['content-type']), /^application\/json/);
    assert.equal(reply.headers['cache-control'], 'public, max-age=300');
    const metadata = reply.json();
    const base = 'https://id.shop.example';
    assert.deepEqual(
      { ...metadata, scopes_supported: undefined },
      {
        issuer: base,
        authorization_endpoint: `${base}/oauth/authorize`,
        token_endpoint: `${base}/api/oauth/token`,
        userinfo_endpoint: `${base}/oauth/userinfo`,
        end_session_endpoint: `${base}/oauth/logout`,
        revocation_endpoint: `${base}/oauth/revoke`,
        introspection_endpoint: `${base}/oauth/introspect`,
        jwks_uri: `${base}/.well-known/jwks.json`,
        grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        code_challenge_methods_supported: ['S256'],
        id_token_signing_alg_values_supported: ['RS256', 'EdDSA'],
        subject_types_supported: ['public'],
        scopes_supported: undefined,
        claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'sid', 'amr', 'at_hash', 'email', 'email_verified', 'name', 'updated_at', 'phone_number'],
        claim_types_supported: ['normal'],
        prompt_values_supported: ['none', 'login', 'consent', 'create'],
        ui_locales_supported: ['en', 'de'],
        authorization_response_iss_parameter_supported: true,
        claims_parameter_supported: false,
        request_parameter_supported: false,
        request_uri_parameter_supported: false,
      },
    );
    assert.deepEqual(metadata.scopes_supported.slice(0, SIGN_IN_SCOPES.length), SIGN_IN_SCOPES);
    for (const scope of ['variants:read', 'reservations:write', 'events:read']) assert.ok(metadata.scopes_supported.includes(scope), scope);

    const rfc8414 = await testApp.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    assert.equal(rfc8414.statusCode, 200);
    assert.deepEqual(rfc8414.json(), metadata, 'RFC 8414 gains the same fields');
  });
});

describe('the authorization server off (JWT_ISSUER neither https nor http on a loopback host)', () => {
  let testApp: TestApp;
  before(async () => {
    testApp = await buildTestApp({ environment: { PUBLIC_URL: 'http://shop.internal:3000' } });
  });
  after(() => testApp.close());

  it('answers 404 for OpenID discovery, keeps v3\'s RFC 8414 document, and only the client credentials grant', async () => {
    assert.equal(testApp.config.authorizationServer, false);
    const openid = await testApp.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
    assert.equal(openid.statusCode, 404, openid.body);
    assert.equal(problemOf(openid).code, 'not_found');

    const metadata = (await testApp.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json();
    assert.deepEqual(Object.keys(metadata).sort(), ['grant_types_supported', 'issuer', 'jwks_uri', 'response_types_supported', 'scopes_supported', 'token_endpoint', 'token_endpoint_auth_methods_supported']);
    assert.deepEqual(
      [metadata.issuer, metadata.grant_types_supported, metadata.token_endpoint_auth_methods_supported, metadata.response_types_supported],
      ['http://shop.internal:3000', ['client_credentials'], ['client_secret_basic', 'client_secret_post'], []],
    );
    assert.ok(!metadata.scopes_supported.includes('openid'));

    for (const grantType of ['authorization_code', 'refresh_token']) {
      const reply = await testApp.app.inject({ method: 'POST', url: '/api/oauth/token', headers: FORM, payload: form({ grant_type: grantType, code: 'a', redirect_uri: 'https://x.example/cb', refresh_token: 'r', client_id: 'x' }) });
      assert.deepEqual([reply.statusCode, reply.json().error], [400, 'unsupported_grant_type'], reply.body);
    }
    const admin = await loginAdmin(testApp.app);
    const created = (await testApp.app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: 'ERP', scopes: ['variants:read'] } })).json();
    const granted = await testApp.app.inject({ method: 'POST', url: '/api/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: created.id, client_secret: created.secret }) });
    assert.equal(granted.statusCode, 200, 'the client credentials grant stays');
  });
});
