import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { createUser, problemOf, useAppWithAdmin } from '../helpers/test-app.js';

const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
const uniqueCode = (prefix = 'loc') => `${prefix}-${randomUUID().slice(0, 8)}`;

/** API.md section 21, its first slice: the locations and their admin API. */
describe('locations', () => {
  const fixture = useAppWithAdmin();
  const inject = (request: InjectOptions) => fixture.app.inject(request);
  const asAdmin = (request: InjectOptions) => inject({ ...request, headers: { ...fixture.admin.auth, ...request.headers } });
  const create = async (body: Record<string, unknown>) => {
    const created = await asAdmin({ method: 'POST', url: '/api/locations', payload: body });
    assert.equal(created.statusCode, 201, created.body);
    return created.json() as { id: string; code: string; version: number; is_default: boolean };
  };
  const stored = (id: string) => fixture.db.selectFrom('locations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const defaults = () => fixture.db.selectFrom('locations').select(['id', 'code']).where('is_default', '=', true).execute();
  const eventsOf = (id: string) => fixture.db.selectFrom('events').selectAll().where('subject_id', '=', id).orderBy('created_at').orderBy('id').execute();

  it('has the default location the upgrade created, with ETag and If-None-Match', async () => {
    const [theDefault] = await defaults();
    assert.equal(theDefault?.code, 'default');
    const listed = await asAdmin({ method: 'GET', url: '/api/locations' });
    assert.equal(listed.statusCode, 200);
    const item = listed.json().items.find((location: { is_default: boolean }) => location.is_default);
    assert.deepEqual({ ...item, created_at: undefined, updated_at: undefined }, {
      id: theDefault!.id,
      code: 'default',
      name: 'Default',
      priority: 100,
      status: 'active',
      is_default: true,
      version: 1,
      created_at: undefined,
      updated_at: undefined,
    });
    const url = `/api/locations/${theDefault!.id.toUpperCase()}`;
    const read = await asAdmin({ method: 'GET', url });
    assert.equal(read.statusCode, 200);
    assert.equal(read.headers.etag, '"1"');
    const unchanged = await asAdmin({ method: 'GET', url, headers: { 'if-none-match': '"1"' } });
    assert.equal(unchanged.statusCode, 304);
    assert.equal(unchanged.headers.etag, '"1"');
    assert.equal(unchanged.body, '');
    assert.equal((await asAdmin({ method: 'GET', url, headers: { 'if-none-match': '"7"' } })).statusCode, 200);
    assert.equal(problemOf(await asAdmin({ method: 'GET', url: `/api/locations/${randomUUID()}` })).code, 'not_found');
    assert.equal(problemOf(await asAdmin({ method: 'GET', url: '/api/locations/not-a-uuid' })).code, 'invalid_parameter');
  });

  it('creates a location (201, Location, ETag), trims its name, takes the defaults and records location.created', async () => {
    const code = uniqueCode('Berlin');
    const created = await asAdmin({ method: 'POST', url: '/api/locations', payload: { code, name: '  Berlin warehouse  ' } });
    assert.equal(created.statusCode, 201, created.body);
    const location = created.json();
    assert.equal(created.headers.location, `/api/locations/${location.id}`);
    assert.equal(created.headers.etag, '"1"');
    assert.deepEqual(
      { code: location.code, name: location.name, priority: location.priority, status: location.status, is_default: location.is_default, version: location.version },
      { code, name: 'Berlin warehouse', priority: 100, status: 'active', is_default: false, version: 1 },
    );
    const row = await stored(location.id);
    assert.equal(row.code, code, 'stored as sent');
    const [event] = await eventsOf(location.id);
    assert.equal(event?.type, 'location.created');
    assert.equal(event?.subject_type, 'location');
    assert.equal(event?.actor_id, fixture.admin.id);
    assert.deepEqual(event?.data, { after: { code, name: 'Berlin warehouse', priority: 100, status: 'active', is_default: false } });
  });

  it('refuses a code taken in any case (409 location_code_taken), and bodies that break the rules (400, every problem listed)', async () => {
    const code = uniqueCode('Hamburg');
    await create({ code, name: 'Hamburg' });
    const taken = await asAdmin({ method: 'POST', url: '/api/locations', payload: { code: code.toLowerCase(), name: 'Other' } });
    assert.equal(problemOf(taken).code, 'location_code_taken');
    assert.equal(taken.statusCode, 409);
    assert.equal(problemOf(await asAdmin({ method: 'POST', url: '/api/locations', payload: { code: 'DEFAULT', name: 'Twin' } })).code, 'location_code_taken');
    const broken = await asAdmin({ method: 'POST', url: '/api/locations', payload: { code: 'has space', name: '   ', priority: 1001, status: 'closed', is_default: true } });
    const problem = problemOf(broken);
    assert.equal(problem.code, 'validation_failed');
    assert.deepEqual(problem.errors!.map((error) => error.path).sort(), ['/code', '/is_default', '/name', '/priority', '/status']);
    assert.equal(problem.errors!.find((error) => error.path === '/code')?.message, 'must be 1 to 32 characters of letters, digits, _ and -');
    assert.equal(problemOf(await asAdmin({ method: 'POST', url: '/api/locations', payload: { code: 'x'.repeat(33), name: 'Long' } })).code, 'validation_failed');
    assert.equal(await fixture.db.selectFrom('locations').select('id').where(sql`lower(code)`, '=', code.toLowerCase()).execute().then((rows) => rows.length), 1);
  });

  it('lists every location by priority, then code in any case', async () => {
    const tag = randomUUID().slice(0, 6);
    await create({ code: `b-${tag}`, name: 'B', priority: 5 });
    await create({ code: `A-${tag}`, name: 'A', priority: 5 });
    await create({ code: `c-${tag}`, name: 'C', priority: 0 });
    const items: { code: string; priority: number }[] = (await asAdmin({ method: 'GET', url: '/api/locations' })).json().items;
    const mine = items.filter((item) => item.code.endsWith(tag)).map((item) => item.code);
    assert.deepEqual(mine, [`c-${tag}`, `A-${tag}`, `b-${tag}`]);
    const sorted = [...items].sort((left, right) => left.priority - right.priority || left.code.toLowerCase().localeCompare(right.code.toLowerCase()));
    assert.deepEqual(items.map((item) => item.code), sorted.map((item) => item.code));
  });

  it('patches by merge: If-Match, {} changes nothing, null and is_default false are 400, a taken code 409', async () => {
    const location = await create({ code: uniqueCode('munich'), name: 'Munich' });
    const url = `/api/locations/${location.id}`;
    const stale = await asAdmin({ method: 'PATCH', url, headers: { ...MERGE_PATCH, 'if-match': '"9"' }, payload: { name: 'Stale' } });
    assert.equal(stale.statusCode, 412);
    assert.equal(problemOf(stale).code, 'precondition_failed');
    assert.equal((await stored(location.id)).name, 'Munich');
    assert.equal(problemOf(await asAdmin({ method: 'PATCH', url, headers: { 'if-match': '1' }, payload: { name: 'Unquoted' } })).code, 'validation_failed');

    const nothing = await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: {} });
    assert.equal(nothing.statusCode, 200);
    assert.equal(nothing.json().version, 1);
    const same = await asAdmin({ method: 'PATCH', url, payload: { name: 'Munich', priority: 100 } });
    assert.equal(same.json().version, 1, 'the values it has: no change');

    const renamed = await asAdmin({ method: 'PATCH', url, headers: { ...MERGE_PATCH, 'if-match': '"1"' }, payload: { name: ' Munich south ', priority: 7 } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.headers.etag, '"2"');
    assert.deepEqual({ name: renamed.json().name, priority: renamed.json().priority, version: renamed.json().version }, { name: 'Munich south', priority: 7, version: 2 });
    const events = await eventsOf(location.id);
    assert.deepEqual(events.map((event) => event.type), ['location.created', 'location.updated']);
    assert.deepEqual(events[1]!.data, { before: { name: 'Munich', priority: 100 }, after: { name: 'Munich south', priority: 7 } });

    const refused = problemOf(await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: { is_default: false, name: null, colour: 'red' } }));
    assert.equal(refused.code, 'validation_failed');
    assert.deepEqual(refused.errors!.map((error) => error.path).sort(), ['/colour', '/is_default', '/name']);
    assert.equal(problemOf(await asAdmin({ method: 'PATCH', url, payload: { code: 'Default' } })).code, 'location_code_taken');
    assert.equal((await stored(location.id)).version, 2);
  });

  it('moves the default mark with is_default true: both locations change, each records location.updated', async () => {
    const [before] = await defaults();
    const beforeRow = await stored(before!.id);
    const location = await create({ code: uniqueCode('next'), name: 'Next default' });
    const moved = await asAdmin({ method: 'PATCH', url: `/api/locations/${location.id}`, payload: { is_default: true } });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().is_default, true);
    assert.deepEqual((await defaults()).map((row) => row.id), [location.id]);
    const previous = await stored(before!.id);
    assert.equal(previous.is_default, false);
    assert.equal(previous.version, beforeRow.version + 1, "the previous default's ETag moves too");
    const [lastOfPrevious] = (await eventsOf(before!.id)).slice(-1);
    assert.equal(lastOfPrevious?.type, 'location.updated');
    assert.deepEqual(lastOfPrevious?.data, { before: { is_default: true }, after: { is_default: false } });
    assert.deepEqual((await eventsOf(location.id)).slice(-1)[0]?.data, { before: { is_default: false }, after: { is_default: true } });

    const again = await asAdmin({ method: 'PATCH', url: `/api/locations/${location.id}`, payload: { is_default: true } });
    assert.equal(again.json().version, moved.json().version, 'already the default: no change');
    // Back, so the other tests find the upgrade's default where it was.
    assert.equal((await asAdmin({ method: 'PATCH', url: `/api/locations/${before!.id}`, payload: { is_default: true } })).statusCode, 200);
  });

  it('keeps the default active and undeletable (409 default_location); an inactive location becomes the default only made active', async () => {
    const [theDefault] = await defaults();
    const inactivating = await asAdmin({ method: 'PATCH', url: `/api/locations/${theDefault!.id}`, payload: { status: 'inactive' } });
    assert.equal(inactivating.statusCode, 409);
    assert.equal(problemOf(inactivating).code, 'default_location');
    assert.equal(problemOf(await asAdmin({ method: 'DELETE', url: `/api/locations/${theDefault!.id}` })).code, 'default_location');
    assert.equal((await stored(theDefault!.id)).status, 'active');

    const inactive = await create({ code: uniqueCode('closed'), name: 'Closed', status: 'inactive' });
    const url = `/api/locations/${inactive.id}`;
    assert.equal(problemOf(await asAdmin({ method: 'PATCH', url, payload: { is_default: true } })).code, 'default_location');
    assert.deepEqual((await defaults()).map((row) => row.id), [theDefault!.id], 'nothing moved');
    const both = await asAdmin({ method: 'PATCH', url, payload: { is_default: true, status: 'active' } });
    assert.equal(both.statusCode, 200, both.body);
    assert.deepEqual((await defaults()).map((row) => row.id), [inactive.id]);
    assert.equal((await asAdmin({ method: 'PATCH', url: `/api/locations/${theDefault!.id}`, payload: { is_default: true } })).statusCode, 200);
  });

  it('deletes a location that is not the default (204, If-Match honoured), recording location.deleted', async () => {
    const location = await create({ code: uniqueCode('gone'), name: 'Gone' });
    const url = `/api/locations/${location.id}`;
    assert.equal((await asAdmin({ method: 'DELETE', url, headers: { 'if-match': '"2"' } })).statusCode, 412);
    const deleted = await asAdmin({ method: 'DELETE', url, headers: { 'if-match': '"1"' } });
    assert.equal(deleted.statusCode, 204);
    assert.equal(await fixture.db.selectFrom('locations').select('id').where('id', '=', location.id).executeTakeFirst(), undefined);
    assert.equal((await asAdmin({ method: 'GET', url })).statusCode, 404);
    assert.equal(problemOf(await asAdmin({ method: 'DELETE', url })).code, 'not_found');
    const [, event] = await eventsOf(location.id);
    assert.equal(event?.type, 'location.deleted');
    assert.deepEqual(event?.data, { before: { code: location.code, name: 'Gone', priority: 100, status: 'active', is_default: false } });
  });

  it('lets staff read and only admins change; API clients by inventory:read and inventory:write', async () => {
    const { app, admin } = fixture;
    const manager = await createUser(app, { role: 'manager', admin });
    const customer = await createUser(app, { admin });
    const location = await create({ code: uniqueCode('who'), name: 'Who' });
    const url = `/api/locations/${location.id}`;
    assert.equal((await inject({ method: 'GET', url: '/api/locations', headers: manager.auth })).statusCode, 200);
    assert.equal((await inject({ method: 'GET', url, headers: manager.auth })).statusCode, 200);
    for (const request of [
      { method: 'POST', url: '/api/locations', payload: { code: uniqueCode(), name: 'No' } },
      { method: 'PATCH', url, payload: { name: 'No' } },
      { method: 'DELETE', url },
    ] as InjectOptions[]) {
      assert.equal(problemOf(await inject({ ...request, headers: manager.auth })).code, 'forbidden', `${request.method} by a manager`);
    }
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/locations', headers: customer.auth })).code, 'forbidden');
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/locations' })).code, 'unauthenticated');

    const client = async (scopes: string[]) => {
      const created = await inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: 'ERP', scopes } });
      assert.equal(created.statusCode, 201, created.body);
      return created.json() as { id: string; secret: string };
    };
    const reader = await client(['inventory:read']);
    assert.equal((await inject({ method: 'GET', url, headers: bearer(reader.secret) })).statusCode, 200);
    const refused = await inject({ method: 'POST', url: '/api/locations', headers: bearer(reader.secret), payload: { code: uniqueCode(), name: 'No' } });
    assert.equal(problemOf(refused).code, 'insufficient_scope');
    assert.equal(refused.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="inventory:write"');
    const variantsOnly = await client(['variants:read']);
    const unscoped = await inject({ method: 'GET', url: '/api/locations', headers: bearer(variantsOnly.secret) });
    assert.equal(unscoped.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="inventory:read"');
    const writer = await client(['inventory:write']);
    const renamed = await inject({ method: 'PATCH', url, headers: bearer(writer.secret), payload: { name: 'Renamed by the ERP' } });
    assert.equal(renamed.statusCode, 200, renamed.body);
    const [last] = (await eventsOf(location.id)).slice(-1);
    assert.deepEqual({ actor_id: last?.actor_id, actor_type: last?.actor_type }, { actor_id: writer.id, actor_type: 'client' });
  });

  it('lets concurrent moves of the default end with exactly one default, and one of concurrent creations of a code', async () => {
    const locations = await Promise.all(Array.from({ length: 6 }, (_, index) => create({ code: uniqueCode(`race${index}`), name: `Race ${index}` })));
    const [original] = await defaults();
    /** How many location.updated events gave a location the mark, and took it from one. */
    const markChanges = async () => {
      const rows = await fixture.db.selectFrom('events').select('data').where('type', '=', 'location.updated').execute();
      const marked = (value: boolean) => rows.filter((row) => (row.data as { after?: { is_default?: boolean } }).after?.is_default === value).length;
      return { gained: marked(true), lost: marked(false) };
    };
    const before = await markChanges();
    const moves = await Promise.all(locations.map((location) => asAdmin({ method: 'PATCH', url: `/api/locations/${location.id}`, payload: { is_default: true } })));
    assert.deepEqual(moves.map((move) => move.statusCode), locations.map(() => 200), moves.map((move) => move.body).join('\n'));
    const after = await defaults();
    assert.equal(after.length, 1);
    assert.ok(locations.some((location) => location.id === after[0]!.id));
    const marks = await markChanges();
    assert.deepEqual({ gained: marks.gained - before.gained, lost: marks.lost - before.lost }, { gained: 6, lost: 6 }, 'every move took the mark from the one that held it');
    assert.equal((await asAdmin({ method: 'PATCH', url: `/api/locations/${original!.id}`, payload: { is_default: true } })).statusCode, 200);

    const code = uniqueCode('Twin');
    const creations = await Promise.all(
      Array.from({ length: 8 }, (_, index) => asAdmin({ method: 'POST', url: '/api/locations', payload: { code: index % 2 ? code.toUpperCase() : code.toLowerCase(), name: 'Twin' } })),
    );
    const statuses = creations.map((creation) => creation.statusCode);
    assert.equal(statuses.filter((status) => status === 201).length, 1, String(statuses));
    assert.ok(creations.filter((creation) => creation.statusCode !== 201).every((creation) => creation.statusCode === 409 && creation.json().code === 'location_code_taken'));
    assert.equal(await fixture.db.selectFrom('locations').select('id').where(sql`lower(code)`, '=', code.toLowerCase()).execute().then((rows) => rows.length), 1);
  });

  it('holds the rules in the database too: one default, an active default, codes unique in any case', async () => {
    const insert = (values: string) => sql.raw(`insert into locations (id, code, name, is_default, status) values ${values}`).execute(fixture.db);
    await assert.rejects(insert(`('${randomUUID()}', '${uniqueCode()}', 'Second default', true, 'active')`), { code: '23505' });
    await assert.rejects(insert(`('${randomUUID()}', 'DeFault', 'Twin', false, 'active')`), { code: '23505' });
    await assert.rejects(sql`update locations set status = 'inactive' where is_default`.execute(fixture.db), { code: '23514' });
  });
});
