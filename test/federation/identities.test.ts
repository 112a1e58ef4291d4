import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { inTransaction } from '../../src/db/transaction.js';
import { SERVICE_CONTEXT } from '../../src/events/event-recorder.js';
import { linkIdentity } from '../../src/federation/identity-service.js';
import { createUser, problemOf, useAppWithAdmin, type Session } from '../helpers/test-app.js';

/** API.md section 20: the profile's identities, `GET /api/users/profile/identities` and `DELETE /api/users/profile/identities/{id}`. */
describe("the profile's identities", () => {
  const fixture = useAppWithAdmin();
  const list = (session: Session) => fixture.app.inject({ method: 'GET', url: '/api/users/profile/identities', headers: session.auth });
  const unlink = (session: Session, id: string) => fixture.app.inject({ method: 'DELETE', url: `/api/users/profile/identities/${id}`, headers: session.auth });
  /** A provider as a save leaves it; these tests need no live discovery document. */
  const provider = async (name: string) => {
    const id = randomUUID();
    const now = new Date();
    await fixture.db
      .insertInto('identity_providers')
      .values({ id, name, issuer: `https://${name.toLowerCase()}.example.com`, client_id: 'shop', client_secret: 'plain:secret', scopes: ['openid'], button_label: `Sign in with ${name}`, discovery: '{}', discovered_at: now, discovery_attempted_at: now })
      .execute();
    return id;
  };
  const link = (userId: string, providerId: string, subject: string, email: string | null, usedNow = true) =>
    inTransaction(fixture.db, (trx) => linkIdentity(trx, { userId, providerId, subject, email, usedNow }, SERVICE_CONTEXT));
  const eventsOf = (userId: string, type: string) => fixture.db.selectFrom('events').selectAll().where('subject_id', '=', userId).where('type', '=', type).execute();

  it("lists the caller's own identities, oldest first, with the provider's name and never the subject", async () => {
    const [google, apple] = [await provider('Google'), await provider('Apple')];
    const owner = await createUser(fixture.app);
    const stranger = await createUser(fixture.app);
    const first = await link(owner.id, google, 'google-sub-1', owner.email);
    const second = await link(owner.id, apple, 'apple-sub-1', null, false);
    await link(stranger.id, google, 'google-sub-2', stranger.email);
    const listed = await list(owner);
    assert.equal(listed.statusCode, 200, listed.body);
    assert.deepEqual(listed.json(), {
      items: [
        { id: first.id, provider_id: google, provider_name: 'Google', email: owner.email, linked_at: first.linked_at.toISOString(), last_used_at: first.linked_at.toISOString() },
        { id: second.id, provider_id: apple, provider_name: 'Apple', email: null, linked_at: second.linked_at.toISOString(), last_used_at: null },
      ],
    });
    assert.ok(!listed.body.includes('google-sub-1'));
    assert.deepEqual((await list(await createUser(fixture.app))).json(), { items: [] });
    const [linked] = await eventsOf(owner.id, 'user.identity_linked');
    assert.deepEqual(linked?.data, { provider_id: google, identity_id: first.id });
    assert.equal((await fixture.app.inject({ method: 'GET', url: '/api/users/profile/identities' })).statusCode, 401);

    // An admin reads the same list of any user (the console's page of a user); others may not; an unknown user is 404.
    const asAdmin = await fixture.app.inject({ method: 'GET', url: `/api/users/${owner.id}/identities`, headers: fixture.admin.auth });
    assert.equal(asAdmin.statusCode, 200, asAdmin.body);
    assert.deepEqual(asAdmin.json(), listed.json());
    assert.equal((await fixture.app.inject({ method: 'GET', url: `/api/users/${owner.id}/identities`, headers: stranger.auth })).statusCode, 403);
    assert.equal(problemOf(await fixture.app.inject({ method: 'GET', url: `/api/users/${randomUUID()}/identities`, headers: fixture.admin.auth })).code, 'not_found');
  });

  it('unlinks one of the caller\'s identities (204, user.identity_unlinked); another user\'s or an unknown one is 404 and stays', async () => {
    const google = await provider('Google');
    const owner = await createUser(fixture.app, { role: 'manager' });
    const stranger = await createUser(fixture.app);
    const own = await link(owner.id, google, `own-${randomUUID()}`, owner.email);
    const theirs = await link(stranger.id, google, `theirs-${randomUUID()}`, stranger.email);

    const refused = await unlink(owner, theirs.id);
    assert.equal(refused.statusCode, 404);
    assert.equal(problemOf(refused).code, 'not_found');
    assert.equal((await unlink(owner, randomUUID())).statusCode, 404);
    assert.equal(problemOf(await unlink(owner, 'not-a-uuid')).code, 'invalid_parameter');
    assert.equal((await list(stranger)).json().items.length, 1, "the other user's identity stays");

    const unlinked = await unlink(owner, own.id.toUpperCase());
    assert.equal(unlinked.statusCode, 204, unlinked.body);
    assert.equal(unlinked.body, '');
    assert.deepEqual((await list(owner)).json().items, []);
    assert.equal((await unlink(owner, own.id)).statusCode, 404, 'gone');
    const events = await eventsOf(owner.id, 'user.identity_unlinked');
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]!.data, { provider_id: google, identity_id: own.id });
    assert.equal(events[0]!.actor_id, owner.id);
    assert.equal((await eventsOf(stranger.id, 'user.identity_unlinked')).length, 0);
  });

  it('keeps one identity to one user: the same provider and subject cannot be linked twice', async () => {
    const google = await provider('Google');
    const [first, second] = [await createUser(fixture.app), await createUser(fixture.app)];
    await link(first.id, google, 'the-same-sub', null);
    await assert.rejects(link(second.id, google, 'the-same-sub', null), /user_identities_subject_unique/);
    assert.equal((await list(second)).json().items.length, 0);
  });

  it("removes the user's identities when the user is erased", async () => {
    const google = await provider('Google');
    const person = await createUser(fixture.app);
    await link(person.id, google, `erased-${randomUUID()}`, person.email);
    const erased = await fixture.app.inject({ method: 'POST', url: `/api/users/${person.id}/erase`, headers: fixture.admin.auth, payload: { reason: 'Erasure request' } });
    assert.equal(erased.statusCode, 204, erased.body);
    assert.deepEqual(await fixture.db.selectFrom('user_identities').select('id').where('user_id', '=', person.id).execute(), []);
  });
});
