import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contextOf } from '../../src/events/event-recorder.js';
import { grantConsent } from '../../src/oauth/consent-service.js';
import { inTransaction } from '../../src/db/transaction.js';
import { createUser, problemOf, useAppWithAdmin, type Session } from '../helpers/test-app.js';
import { appSession, bearer, claimsOf, registerClient } from './oauth-helpers.js';

/** API.md section 18, "Consent": `GET /api/users/profile/apps` and `DELETE /api/users/profile/apps/{client_id}`. */
describe("a user's app consents", () => {
  const fixture = useAppWithAdmin();
  const list = (auth: Record<string, string>) => fixture.app.inject({ method: 'GET', url: '/api/users/profile/apps', headers: auth });
  const withdraw = (auth: Record<string, string>, clientId: string) => fixture.app.inject({ method: 'DELETE', url: `/api/users/profile/apps/${clientId}`, headers: auth });
  /** What the consent page does when the user allows the app. */
  const grant = (user: Session, clientId: string, scopes: string[]) =>
    inTransaction(fixture.db, (trx) => grantConsent(trx, user.id, clientId, scopes, contextOf({ id: 'test-request' }, user.id)));
  const events = (userId: string, type: 'user.app_revoked' | 'user.app_authorized') =>
    fixture.db.selectFrom('events').select(['data', 'actor_id', 'subject_type']).where('type', '=', type).where('subject_id', '=', userId).execute();

  it('lists the apps the user allowed, newest first, with their names, logos and scopes', async () => {
    const customer = await createUser(fixture.app);
    const first = await registerClient(fixture.app, fixture.admin, 'confidential', undefined, 'Partner shop');
    const second = await registerClient(fixture.app, fixture.admin, 'public', undefined, 'Mobile app');
    const gone = await registerClient(fixture.app, fixture.admin, 'public', undefined, 'Deleted app');
    await grant(customer, first.id, ['openid', 'email']);
    await grant(customer, second.id, ['openid', 'profile', 'offline_access']);
    await grant(customer, gone.id, ['openid']);
    assert.equal((await fixture.app.inject({ method: 'DELETE', url: `/api/clients/${gone.id}`, headers: fixture.admin.auth })).statusCode, 204);
    // Another user's consent is not the caller's.
    const other = await createUser(fixture.app);
    await grant(other, first.id, ['openid']);

    const reply = await list(customer.auth);
    assert.equal(reply.statusCode, 200, reply.body);
    const rows = await fixture.db.selectFrom('app_consents').select(['client_id', 'granted_at']).where('user_id', '=', customer.id).execute();
    const grantedAt = (id: string) => rows.find((row) => row.client_id === id)!.granted_at.toISOString();
    assert.deepEqual(reply.json(), {
      items: [
        { client_id: second.id, name: 'Mobile app', logo_uri: 'https://shop.example.com/logo.png', scopes: ['openid', 'profile', 'offline_access'], granted_at: grantedAt(second.id) },
        { client_id: first.id, name: 'Partner shop', logo_uri: 'https://shop.example.com/logo.png', scopes: ['openid', 'email'], granted_at: grantedAt(first.id) },
      ],
    });
    assert.deepEqual((await list((await createUser(fixture.app)).auth)).json(), { items: [] });

    // An admin reads the same list of any user (the console's page of a user); others may not; an unknown user is 404.
    const asAdmin = await fixture.app.inject({ method: 'GET', url: `/api/users/${customer.id}/apps`, headers: fixture.admin.auth });
    assert.equal(asAdmin.statusCode, 200, asAdmin.body);
    assert.deepEqual(asAdmin.json(), reply.json());
    assert.equal((await fixture.app.inject({ method: 'GET', url: `/api/users/${customer.id}/apps`, headers: other.auth })).statusCode, 403);
    const manager = await createUser(fixture.app, { role: 'manager', admin: fixture.admin });
    assert.equal((await fixture.app.inject({ method: 'GET', url: `/api/users/${customer.id}/apps`, headers: manager.auth })).statusCode, 403);
    assert.equal(problemOf(await fixture.app.inject({ method: 'GET', url: `/api/users/${randomUUID()}/apps`, headers: fixture.admin.auth })).code, 'not_found');
  });

  it("withdraws a consent: the app's sessions for the user end, user.app_revoked is recorded; 404 when there is none", async () => {
    const customer = await createUser(fixture.app);
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const otherApp = await registerClient(fixture.app, fixture.admin, 'confidential');
    await grant(customer, app.id, ['openid', 'account', 'offline_access']);
    await grant(customer, otherApp.id, ['openid', 'account']);
    const first = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'account', 'offline_access']);
    const second = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'account']);
    const others = await appSession(fixture.db, fixture.testApp.config, customer, otherApp.id, ['openid', 'account']);
    const someoneElse = await createUser(fixture.app);
    await grant(someoneElse, app.id, ['openid', 'account']);
    const theirs = await appSession(fixture.db, fixture.testApp.config, someoneElse, app.id, ['openid', 'account']);

    const reply = await withdraw(customer.auth, app.id.toUpperCase());
    assert.equal(reply.statusCode, 204, reply.body);
    assert.equal(reply.body, '');
    for (const pair of [first, second]) {
      const refused = await fixture.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(pair.access_token) });
      assert.equal(refused.statusCode, 401);
      assert.equal(problemOf(refused).code, 'invalid_token');
      const session = await fixture.db.selectFrom('sessions').select('ended_at').where('id', '=', claimsOf(pair.access_token).sid).executeTakeFirstOrThrow();
      assert.notEqual(session.ended_at, null);
      const tokens = await fixture.db.selectFrom('refresh_tokens').select('revoked_at').where('family_id', '=', claimsOf(pair.access_token).sid).execute();
      assert.ok(tokens.length > 0 && tokens.every((token) => token.revoked_at !== null));
    }
    for (const pair of [others, theirs]) {
      assert.equal((await fixture.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(pair.access_token) })).statusCode, 200, 'another app, another user: live');
    }
    assert.equal((await fixture.app.inject({ method: 'GET', url: '/api/users/profile', headers: customer.auth })).statusCode, 200, "the user's own sign-in stays");
    const consents = await fixture.db.selectFrom('app_consents').select(['client_id']).where('user_id', '=', customer.id).execute();
    assert.deepEqual(consents, [{ client_id: otherApp.id }]);
    assert.equal((await fixture.db.selectFrom('app_consents').select('client_id').where('user_id', '=', someoneElse.id).execute()).length, 1);
    const revoked = await events(customer.id, 'user.app_revoked');
    assert.deepEqual(revoked, [{ data: { client_id: app.id, scopes: ['openid', 'account', 'offline_access'] }, actor_id: customer.id, subject_type: 'user' }]);

    const again = await withdraw(customer.auth, app.id);
    assert.equal(again.statusCode, 404);
    assert.equal(problemOf(again).code, 'not_found');
    assert.equal((await events(customer.id, 'user.app_revoked')).length, 1);
    const unknown = await withdraw(customer.auth, '7d1c2b3a-0f9e-4d8c-b7a6-1e2f3a4b5c6d');
    assert.equal(unknown.statusCode, 404);
    const malformed = await withdraw(customer.auth, 'not-a-uuid');
    assert.equal(malformed.statusCode, 400);
    assert.equal(problemOf(malformed).code, 'invalid_parameter');
  });

  it("is for a direct sign-in only: an app's token is 403 forbidden, whatever its scopes, an API client too", async () => {
    const customer = await createUser(fixture.app);
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    await grant(customer, app.id, ['openid', 'account']);
    const { access_token } = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'profile', 'email', 'phone', 'offline_access', 'account', 'variants:read']);
    for (const reply of [await list(bearer(access_token)), await withdraw(bearer(access_token), app.id)]) {
      assert.equal(reply.statusCode, 403, reply.body);
      assert.equal(problemOf(reply).code, 'forbidden');
    }
    const service = await registerClient(fixture.app, fixture.admin, 'service', ['users:read', 'users:write']);
    const asClient = await list(bearer(service.secret!));
    assert.equal(asClient.statusCode, 403);
    assert.equal(problemOf(asClient).code, 'forbidden');
    assert.equal((await fixture.db.selectFrom('app_consents').select('client_id').where('user_id', '=', customer.id).execute()).length, 1, 'nothing withdrawn');
  });
});
