import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { isBlockedAddress, isRefusedAddress } from '../../src/events/webhook-url-guard.js';
import { eventually } from '../helpers/eventually.js';
import { buildTestApp, createUser, loginAdmin, problemOf, type Session, type TestApp } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
// @ts-expect-error: the guide's example is plain JavaScript, run as a user would copy it.
import { verifyByHand, verifyWithLibrary } from '../../docs/examples/verify-webhook.mjs';

const WEBHOOK_ENVIRONMENT = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };

describe('webhook delivery: slow peers, ping, retry, what events say of URLs', () => {
  let testApp: TestApp;
  let admin: Session;
  const receivers: WebhookReceiver[] = [];
  before(async () => {
    testApp = await buildTestApp({ environment: WEBHOOK_ENVIRONMENT });
    admin = await loginAdmin(testApp.app);
  });
  after(async () => {
    for (const receiver of receivers) await receiver.stop();
    await testApp.close();
  });
  const inject = (request: InjectOptions) => testApp.app.inject(request);
  const receiver = async (answer: WebhookReceiver['answer'] = () => 204) => {
    const created = new WebhookReceiver();
    created.answer = answer;
    receivers.push(created);
    return { receiver: created, url: await created.start() };
  };
  const subscribe = async (url: string, events: string[]) => {
    const created = await inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url, events } });
    assert.equal(created.statusCode, 201, created.body);
    return created.json() as { id: string; secret: string };
  };
  const setEnabled = async (id: string, url: string, events: string[], enabled: boolean) =>
    inject({ method: 'PUT', url: `/api/webhooks/${id}`, headers: admin.auth, payload: { url, events, enabled } });

  it('lets no hanging endpoint hold up another webhook’s deliveries', async () => {
    const hanging = await receiver(() => 'hang');
    const healthy = await receiver();
    const slow = await subscribe(hanging.url, ['user.role_changed']);
    const quick = await subscribe(healthy.url, ['user.registered']);
    try {
      const user = await createUser(testApp.app);
      // 30 deliveries due to the hanging endpoint, queued before the healthy one's.
      for (let change = 0; change < 15; change++) {
        for (const role of ['manager', 'user']) await inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: admin.auth, payload: { role } });
      }
      await createUser(testApp.app);
      void testApp.jobs.runNow("deliver-webhooks");
      await eventually(() => (healthy.receiver.received.length > 0 ? true : undefined), 'the healthy delivery while the other endpoint hangs', 5000);
      await eventually(() => (hanging.receiver.received.length > 0 ? true : undefined), 'a send to the hanging endpoint', 5000);
      const inFlight = await testApp.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', slow.id).where('claimed_until', '>', new Date()).execute();
      assert.ok(inFlight.length <= 2, `at most 2 sends in flight to the hanging endpoint, saw ${inFlight.length} claimed`);
      assert.ok(hanging.receiver.received.length <= 2, `at most 2 sends reached the hanging endpoint, saw ${hanging.receiver.received.length}`);
    } finally {
      await setEnabled(slow.id, hanging.url, ['user.role_changed'], false);
      await setEnabled(quick.id, healthy.url, ['user.registered'], false);
      hanging.receiver.answer = () => 204;
    }
  });

  it('pings one webhook with a signed webhook.ping, whatever it subscribes to, kept out of the audit log', async () => {
    const target = await receiver();
    const other = await receiver();
    const pinged = await subscribe(target.url, ['variant.deleted']);
    const bystander = await subscribe(other.url, ['*']);
    const reply = await inject({ method: 'POST', url: `/api/webhooks/${pinged.id}/ping`, headers: admin.auth });
    assert.equal(reply.statusCode, 202);
    assert.equal(reply.json().event_type, 'webhook.ping');
    assert.equal(reply.json().status, 'pending');
    await testApp.jobs.runNow('deliver-webhooks');
    const delivery = await eventually(() => target.receiver.received.find((item) => JSON.parse(item.body).type === 'webhook.ping'), 'the ping');
    const event = new Webhook(pinged.secret).verify(delivery.body, delivery.headers as Record<string, string>) as { id: string; subject_id: string; subject_type: string };
    assert.equal(event.subject_id, pinged.id);
    assert.equal(event.subject_type, 'webhook');
    // docs/examples/verify-webhook.mjs, as the guide shows it: the library and the hand-written check agree.
    const headers = delivery.headers as Record<string, string>;
    assert.deepEqual(verifyWithLibrary(pinged.secret, delivery.body, headers), event);
    assert.deepEqual(verifyByHand(pinged.secret, delivery.body, headers), event);
    assert.throws(() => verifyByHand(pinged.secret, `${delivery.body} `, headers), /bad signature/);
    assert.throws(() => verifyByHand(pinged.secret, delivery.body, headers, Date.now() + 600_000), /timestamp/);
    const keyAsText = `whsec_${Buffer.from(pinged.secret.slice('whsec_'.length)).toString('base64')}`;
    assert.throws(() => verifyByHand(keyAsText, delivery.body, headers), /bad signature/, 'the key is the decoded bytes, not the text');
    assert.equal(other.receiver.received.some((item) => JSON.parse(item.body).type === 'webhook.ping'), false, 'no other webhook gets it');
    assert.equal((await inject({ method: 'GET', url: `/api/events/${event.id}`, headers: admin.auth })).statusCode, 404);
    const listed = await inject({ method: 'GET', url: `/api/events?subject_id=${pinged.id}`, headers: admin.auth });
    assert.ok(listed.json().items.every((item: { type: string }) => item.type !== 'webhook.ping'));
    const deliveries = await inject({ method: 'GET', url: `/api/webhooks/${pinged.id}/deliveries`, headers: admin.auth });
    assert.equal(deliveries.json().items[0].status, 'succeeded');
    assert.equal((await inject({ method: 'POST', url: '/api/webhooks/00000000-0000-4000-8000-000000000000/ping', headers: admin.auth })).statusCode, 404);
    const customer = await createUser(testApp.app);
    assert.equal((await inject({ method: 'POST', url: `/api/webhooks/${pinged.id}/ping`, headers: customer.auth })).statusCode, 403);
    await setEnabled(bystander.id, other.url, ['*'], false);
  });

  it('retries a delivery at once, its attempts counting on; 409 webhook_disabled for a disabled webhook', async () => {
    const flaky = await receiver(() => 500);
    const hook = await subscribe(flaky.url, ['user.registered']);
    await createUser(testApp.app);
    await testApp.jobs.runNow('deliver-webhooks');
    const [failed] = (await inject({ method: 'GET', url: `/api/webhooks/${hook.id}/deliveries`, headers: admin.auth })).json().items;
    assert.equal(failed.attempts, 1);
    assert.equal(failed.last_status_code, 500);
    flaky.receiver.answer = () => 204;
    const retried = await inject({ method: 'POST', url: `/api/webhooks/${hook.id}/deliveries/${failed.id}/retry`, headers: admin.auth });
    assert.equal(retried.statusCode, 202);
    assert.equal(retried.json().id, failed.id);
    await testApp.jobs.runNow('deliver-webhooks');
    const after = (await inject({ method: 'GET', url: `/api/webhooks/${hook.id}/deliveries`, headers: admin.auth })).json().items[0];
    assert.equal(after.status, 'succeeded');
    assert.equal(after.attempts, 2);
    assert.equal(flaky.receiver.received.length, 2);
    const unknown = await inject({ method: 'POST', url: `/api/webhooks/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`, headers: admin.auth });
    assert.equal(unknown.statusCode, 404);
    await setEnabled(hook.id, flaky.url, ['user.registered'], false);
    const disabled = await inject({ method: 'POST', url: `/api/webhooks/${hook.id}/deliveries/${failed.id}/retry`, headers: admin.auth });
    assert.equal(disabled.statusCode, 409);
    assert.equal(problemOf(disabled).code, 'webhook_disabled');
  });

  it('shows only a URL’s origin in events about webhooks, never its path, query or credentials', async () => {
    const watcher = await receiver();
    await subscribe(watcher.url, ['*']);
    const secretPath = `${(await receiver()).url}/token-in-path?key=subscriber-secret`;
    const hook = await subscribe(secretPath, ['user.deleted']);
    await setEnabled(hook.id, secretPath, ['user.deleted', 'user.registered'], true);
    const events = await testApp.db.selectFrom('events').select(['type', 'data']).where('subject_id', '=', hook.id).orderBy('created_at').execute();
    assert.deepEqual(events.map((event) => event.type), ['webhook.created', 'webhook.updated']);
    const origin = new URL(secretPath).origin;
    assert.equal((events[0]!.data as { after: { url: string } }).after.url, origin);
    await testApp.jobs.runNow('deliver-webhooks');
    const seen = watcher.receiver.received.map((item) => item.body).join('\n');
    assert.ok(seen.includes('webhook.created'));
    assert.ok(!seen.includes('subscriber-secret') && !seen.includes('token-in-path'), 'no other subscriber reads the path or query');
  });
});

describe('webhook URLs: global unicast only (API.md section 10)', () => {
  it('judges IPv6 forms by the IPv4 address they embed, and refuses reserved ranges', () => {
    for (const address of [
      '::127.0.0.1', '::7f00:1', '64:ff9b::7f00:1', '64:ff9b::10.0.0.1', '2002:7f00:1::', '2002:a00:1::1', '::ffff:169.254.169.254',
      '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '100.64.0.1', '192.0.0.8', '192.0.2.1', '198.18.0.1', '198.51.100.7', '203.0.113.9',
      '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255', 'fc00::1', 'fec0::1', 'ff02::1', '2001:db8::1',
    ]) {
      assert.equal(isBlockedAddress(address), true, address);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) {
      assert.equal(isBlockedAddress(address), false, address);
    }
  });

  /**
   * IANA's IPv4 and IPv6 special-purpose address registries (RFC 6890 and its updates), row by
   * row: [address, refused by default, refused with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true].
   */
  const SPECIAL_PURPOSE: [string, boolean, boolean][] = [
    // IPv4: every range marked not globally reachable.
    ['0.1.2.3', true, true], // "this network" 0/8
    ['0.0.0.0', true, false], // this host (unspecified)
    ['10.200.0.1', true, false],
    ['100.127.255.254', true, false], // shared address space 100.64/10
    ['127.8.8.8', true, false],
    ['169.254.0.1', true, false],
    ['172.31.255.255', true, false],
    ['192.0.0.0', true, true], // IETF protocol assignments 192.0.0/24 (service continuity /29, dummy .8, NAT64 discovery .170/.171)
    ['192.0.0.8', true, true],
    ['192.0.0.170', true, true],
    ['192.0.2.200', true, true], // TEST-NET-1
    ['192.88.99.1', true, true], // 6to4 relay anycast, deprecated (RFC 7526)
    ['192.88.99.255', true, true],
    ['192.168.255.1', true, false],
    ['198.19.255.255', true, true], // benchmarking 198.18/15
    ['198.51.100.1', true, true], // TEST-NET-2
    ['203.0.113.254', true, true], // TEST-NET-3
    ['224.0.0.251', true, true], // multicast
    ['240.1.2.3', true, true], // reserved
    ['255.255.255.255', true, true], // limited broadcast
    // IPv6: outside 2000::/3, whatever the range.
    ['::1', true, false],
    ['::', true, false],
    ['64:ff9b:1::1', true, true], // local-use NAT64 (RFC 8215), even for a public IPv4 address
    ['64:ff9b:1::808:808', true, true],
    ['100::1', true, true], // discard-only
    ['100:0:0:1::1', true, true], // dummy prefix (RFC 9780)
    ['::ffff:0:808:808', true, true], // IPv4-translated (SIIT), not mapped
    ['1::1', true, true],
    ['4000::1', true, true],
    ['8000::1', true, true],
    ['c000::1', true, true],
    ['e000::1', true, true],
    ['fc00::1', true, false],
    ['fdff::1', true, false],
    ['fe00::1', true, true],
    ['fe80::1', true, false],
    ['febf::1', true, false],
    ['fec0::1', true, true],
    ['ff0e::1', true, true],
    // IPv6: inside 2000::/3 but not globally reachable.
    ['2001::1', true, true], // Teredo 2001::/32
    ['2001:1::1', true, true], // IETF protocol assignments 2001::/23
    ['2001:2::1', true, true], // benchmarking
    ['2001:10::1', true, true], // ORCHID, deprecated
    ['2001:1f:ffff::1', true, true],
    ['2001:20::1', true, true], // ORCHIDv2
    ['2001:2f::1', true, true],
    ['2001:1ff:ffff::1', true, true], // the end of 2001::/23
    ['2001:db8::1', true, true], // documentation
    ['2001:db8:ffff::1', true, true],
    ['3fff::1', true, true], // documentation (RFC 9637)
    ['3fff:fff::1', true, true],
    ['5f00::1', true, true], // segment routing SIDs (RFC 9602)
    // IPv4 inside IPv6: judged by the IPv4 address they embed.
    ['::ffff:192.88.99.1', true, true],
    ['::ffff:198.18.0.1', true, true],
    ['::ffff:10.0.0.1', true, false],
    ['::ffff:8.8.8.8', false, false],
    ['::c058:6301', true, true], // IPv4-compatible
    ['64:ff9b::c058:6301', true, true], // NAT64 of 192.88.99.1
    ['64:ff9b::c000:201', true, true],
    ['64:ff9b::a00:1', true, false],
    ['64:ff9b::808:808', false, false],
    ['2002:c058:6301::1', true, true], // 6to4 of 192.88.99.1
    ['2002:c000:201::1', true, true],
    ['2002:a9fe:a9fe::1', true, false],
    ['2002:808:808::1', false, false],
    // Global unicast, next to the refused ranges.
    ['8.8.8.8', false, false],
    ['192.88.98.255', false, false],
    ['192.88.100.0', false, false],
    ['192.0.1.1', false, false],
    ['198.20.0.1', false, false],
    ['2001:200::1', false, false], // just past 2001::/23
    ['2001:4860:4860::8888', false, false],
    ['2001:db9::1', false, false],
    ['2606:4700:4700::1111', false, false],
    ['3ffe:ffff::1', false, false],
    ['2c0f:fb50::1', false, false],
  ];

  it("refuses every range IANA's special-purpose registries mark not globally reachable, and IPv6 outside 2000::/3 (API.md section 17)", () => {
    const wrong = SPECIAL_PURPOSE.filter(([address, byDefault, withPrivate]) => isBlockedAddress(address) !== byDefault || isRefusedAddress(address, true) !== withPrivate);
    assert.deepEqual(wrong.map(([address]) => address), []);
  });

  it('refuses those ranges as a URL host, at creation and again at delivery', async () => {
    const lenient = await buildTestApp({ environment: WEBHOOK_ENVIRONMENT });
    try {
      const admin = await loginAdmin(lenient.app);
      const hosts = ['[64:ff9b:1::808:808]', '[2001:10::1]', '[2001:20::1]', '[2001:db8::1]', '192.88.99.1', '[4000::1]', '[2002:c058:6301::1]'];
      for (const host of hosts) {
        const response = await lenient.app.inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: `https://${host}/hook`, events: ['*'] } });
        assert.equal(response.statusCode, 400, host);
        assert.equal(problemOf(response).errors?.[0]?.path, '/url', host);
      }
      const allowed = await lenient.app.inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: 'https://[2606:4700:4700::1111]/hook', events: ['user.deleted'] } });
      assert.equal(allowed.statusCode, 201, allowed.body);

      // Stored before these rules: every delivery to them is refused before a connection is tried.
      const now = new Date();
      const ids: string[] = hosts.map(() => randomUUID());
      await lenient.db
        .insertInto('webhooks')
        .values(hosts.map((host, index) => ({ id: ids[index]!, url: `http://${host}/hook`, events: ['user.registered'], description: null, enabled: true, secret: 'whsec_c2VjcmV0', created_at: now, updated_at: now })))
        .execute();
      await createUser(lenient.app);
      await lenient.jobs.runNow('deliver-webhooks');
      const attempts = await eventually(async () => {
        const rows = await lenient.db.selectFrom('webhook_deliveries').select(['webhook_id', 'last_error']).where('webhook_id', 'in', ids).where('attempts', '>', 0).execute();
        return rows.length === hosts.length ? rows : undefined;
      }, 'an attempt to each');
      for (const row of attempts) {
        assert.match(String(row.last_error), /not global unicast/, hosts[ids.indexOf(row.webhook_id)]);
      }
    } finally {
      await lenient.close();
    }
  });

  it('lets WEBHOOK_ALLOW_PRIVATE_NETWORKS lift only loopback, private, link-local and unspecified addresses', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', 'fd00::1', 'fe80::1', '::1', '::', '::ffff:10.0.0.1', '64:ff9b::a00:1']) {
      assert.equal(isRefusedAddress(address, true), false, address);
    }
    for (const address of ['192.0.2.1', '224.0.0.1', '240.0.0.1', 'ff02::1', 'fec0::1', '2001::1', '198.18.0.1']) {
      assert.equal(isRefusedAddress(address, true), true, address);
    }
  });
});
