import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import { createUser, useAppWithAdmin } from '../helpers/test-app.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const HISTORY = 100_000;
const PATTERN = '"reason":"loyalty point';

/** API.md section 13 and issue: a user with 100,000 ledger entries and events exports in flat memory. */
describe('a data export of a long history', () => {
  const fixture = useAppWithAdmin();

  // Timestamps to the millisecond, as the service writes them (a JavaScript Date): keyset pages compare them exactly.
  it('streams 100,000 ledger entries and 100,000 events while holding a small part of the document at any time', async () => {
    const { app, db, admin } = fixture;
    const user = await createUser(app);
    await sql`
      insert into balance_ledger (id, user_id, delta, balance_after, currency, reason, actor_id, created_at)
      select gen_random_uuid(), ${user.id}, 1, n, 'USD', 'loyalty point ' || n, ${admin.id}, date_trunc('milliseconds', now()) - make_interval(secs => ${HISTORY} - n)
      from generate_series(1, ${HISTORY}) as n`.execute(db);
    await sql`
      insert into events (id, type, created_at, actor_id, actor_type, request_id, subject_type, subject_id, data)
      select gen_random_uuid(), 'user.balance_changed', date_trunc('milliseconds', now()) - make_interval(secs => ${HISTORY} - n), ${admin.id}, 'user', null, 'user', ${user.id},
        jsonb_build_object('delta', 1, 'balance_after', n, 'currency', 'USD', 'reason', 'loyalty point ' || n)
      from generate_series(1, ${HISTORY}) as n`.execute(db);

    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    collectGarbage();
    const baseline = process.memoryUsage().heapUsed;
    const response = await fetch(`http://127.0.0.1:${port}/api/users/${user.id}/export`, { headers: admin.auth });
    assert.equal(response.status, 200);
    let bytes = 0;
    let peak = 0;
    let nextSample = 0;
    let tail = '';
    let ledgerEntries = 0;
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) {
      bytes += chunk.byteLength;
      const text = tail + decoder.decode(chunk, { stream: true });
      // A match cannot lie wholly in the kept tail, which is one character shorter than the pattern.
      ledgerEntries += text.split(PATTERN).length - 1;
      tail = text.slice(-(PATTERN.length - 1));
      if (bytes >= nextSample) {
        collectGarbage();
        peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
        nextSample += 2 * 1024 * 1024;
      }
    }
    assert.equal(ledgerEntries, 2 * HISTORY, 'every ledger entry and every event, each with its reason');
    assert.ok(bytes > 30 * 1024 * 1024, `a document of ${bytes} bytes`);
    // A document built whole would hold all of it (and more, as objects); a stream holds a page.
    assert.ok(peak < bytes / 5, `held at most ${peak} bytes more than before, for a document of ${bytes}`);
  });
});
