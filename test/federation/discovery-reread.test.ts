import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { rereadDueDiscoveries } from '../../src/federation/provider-service.js';
import { useAppWithAdmin } from '../helpers/test-app.js';
import { startUpstreamProvider, type UpstreamProvider } from '../helpers/upstream-provider.js';

/** API.md section 20: each enabled provider's discovery document is read again at most once an hour; a failure keeps the last one. */
describe('the hourly re-read of discovery documents', () => {
  const logLines: string[] = [];
  const fixture = useAppWithAdmin({ logLines });
  let upstream: UpstreamProvider;
  before(async () => {
    upstream = await startUpstreamProvider({ client: { client_id: 'shop', client_secret: 'shop-secret-at-upstream', redirect_uris: ['http://127.0.0.1:3000/oauth/callback/any'] } });
  });
  after(() => upstream?.stop());

  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    const created = await fixture.app.inject({
      method: 'POST',
      url: '/api/identity-providers',
      headers: fixture.admin.auth,
      payload: { name, issuer: upstream.issuer, client_id: 'shop', client_secret: 'shop-secret-at-upstream', button_label: name, ...extra },
    });
    assert.equal(created.statusCode, 201, created.body);
    return created.json().id as string;
  };
  const stored = (id: string) => fixture.db.selectFrom('identity_providers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  /** As if its document were read, and tried, `minutes` ago, and had gone stale since. */
  const age = (id: string, minutes: number) =>
    sql`update identity_providers set discovery = '{"stale": true}', discovered_at = now() - make_interval(mins => ${minutes}), discovery_attempted_at = now() - make_interval(mins => ${minutes}) where id = ${id}`.execute(fixture.db);

  it('reads again the enabled providers not tried within the hour, once each over concurrent passes, and leaves the others and version alone', async () => {
    const [due, recent, disabled] = [await create('Due'), await create('Recent'), await create('Disabled', { enabled: false })];
    await age(due, 61);
    await age(recent, 30);
    await age(disabled, 120);
    const log = { warn: () => assert.fail('no failure expected') };
    const counts = await Promise.all([rereadDueDiscoveries(fixture.db, log), rereadDueDiscoveries(fixture.db, log)]);
    assert.equal(counts[0] + counts[1], 1, 'one read of the one provider due');
    const [afterDue, afterRecent, afterDisabled] = [await stored(due), await stored(recent), await stored(disabled)];
    assert.equal(afterDue.discovery.issuer, upstream.issuer);
    assert.ok(Date.now() - afterDue.discovered_at.getTime() < 60_000);
    assert.equal(afterDue.version, 1, 'a re-read is no write of the provider');
    assert.deepEqual(afterRecent.discovery, { stale: true });
    assert.deepEqual(afterDisabled.discovery, { stale: true });
    assert.equal(await rereadDueDiscoveries(fixture.db, log), 0, 'nothing due again within the hour');
  });

  it('runs as a job of the runner, and a failure keeps the last document and logs a warning without a secret', async () => {
    const failing = await create('Failing');
    await age(failing, 90);
    const before = await stored(failing);
    await sql`update identity_providers set issuer = ${upstream.otherIssuer} where id = ${failing}`.execute(fixture.db);
    await fixture.jobs.runNow('reread-provider-discovery');
    const after = await stored(failing);
    assert.deepEqual(after.discovery, { stale: true }, 'the last document is kept');
    assert.deepEqual(after.discovered_at, before.discovered_at);
    assert.ok(after.discovery_attempted_at > before.discovery_attempted_at, 'tried, so not again within the hour');
    const warning = logLines.map((line) => JSON.parse(line)).find((line) => line.provider_id === failing);
    assert.ok(warning, logLines.join('\n'));
    assert.equal(warning.level, 40);
    assert.match(warning.problem, /another issuer/);
    assert.ok(!logLines.join('\n').includes('shop-secret-at-upstream'));
  });
});
