import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { sql } from 'kysely';
import { eventually } from '../helpers/eventually.js';
import { useAppWithAdmin } from '../helpers/test-app.js';

// A full collection before each reading, so a reading is what is held, not what is yet to be collected.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;
const MIB = 1024 * 1024;

/** What the process holds in JavaScript objects and buffers, after a full collection. */
function heldBytes(): number {
  collectGarbage();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

const DOWNLOADS = 12;
const ROWS = 10_000;
/** Each failed row's cells: about 3 KiB, so the report is about 30 MiB. */
const NAME = 'n'.repeat(3000);

/**
 * API.md section 17: "Downloading error reports, any number at once, keeps memory within a few
 * MiB each." Twelve downloads of one 30 MiB report over real HTTP, each reader stopped after the
 * first bytes: the service may hold what the sockets take and a page or two each, not the report.
 */
describe('error report downloads: memory', () => {
  const fixture = useAppWithAdmin();

  it(`holds a few MiB for each of ${DOWNLOADS} downloads of a 30 MiB report whose readers do not read`, { timeout: 120_000 }, async (t) => {
    const { app, db, admin } = fixture;
    const id = randomUUID();
    await sql`
      insert into variant_imports (id, upload_id, status, format, mode, on_error, dry_run, byte_size, rows_total, rows_processed, failed, created_by, actor_type, created_at, next_attempt_at, finished_at)
      values (${id}, ${randomUUID()}, 'succeeded', 'csv', 'upsert', 'skip_failed', false, 0, ${ROWS}, ${ROWS}, ${ROWS}, ${admin.id}, 'user', now(), now(), now())`.execute(db);
    await sql`
      insert into variant_import_errors (import_id, line, error, fields)
      select ${id}, line, 'price must be a whole number', jsonb_build_object('sku', 'S-' || line, 'name', ${NAME}::text, 'price', 'ten')
      from generate_series(2, ${ROWS + 1}) as line`.execute(db);

    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const served: ServerResponse[] = [];
    app.server.on('request', (_request: IncomingMessage, response: ServerResponse) => served.push(response));
    const before = heldBytes();
    const readers: IncomingMessage[] = [];
    try {
      await Promise.all(
        Array.from(
          { length: DOWNLOADS },
          () =>
            new Promise<void>((resolve, reject) => {
              http.get({ host: '127.0.0.1', port, path: `/api/variants/imports/${id}/errors`, headers: admin.auth, agent: false }, (response) => {
                response.pause();
                readers.push(response);
                resolve();
              }).on('error', reject);
            }),
        ),
      );
      assert.deepEqual(readers.map((reader) => reader.statusCode), Array(DOWNLOADS).fill(200));
      // Every reply is stalled on its reader: its socket takes no more.
      await eventually(() => (served.length === DOWNLOADS && served.every((response) => response.writableNeedDrain) ? true : undefined), 'every download waiting on its reader');
      // What the service then reads ahead settles: the reading taken once two in a row agree within 1 MiB.
      let held = heldBytes();
      await eventually(() => {
        const previous = held;
        held = heldBytes();
        return Math.abs(held - previous) < MIB ? true : undefined;
      }, 'the memory held to settle');
      const growth = held - before;
      const rss = Math.round(process.memoryUsage().rss / MIB);
      t.diagnostic(`${DOWNLOADS} stalled downloads: ${(growth / MIB).toFixed(1)} MiB more held; RSS ${rss} MiB`);
      assert.ok(growth < DOWNLOADS * 2 * MIB, `${DOWNLOADS} stalled downloads hold ${(growth / MIB).toFixed(1)} MiB more (RSS now ${rss} MiB); at most 2 MiB each`);

      // The report is whole for a reader who reads it.
      const [first, ...others] = readers;
      for (const other of others) other.destroy();
      let lines = 0;
      let bytes = 0;
      first!.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines += 1;
      });
      first!.resume();
      await new Promise((resolve) => first!.on('end', resolve));
      assert.equal(lines, ROWS + 1, 'a header and every failed row');
      assert.ok(bytes > 30 * 1000 * 1000, `${bytes} bytes`);
    } finally {
      // A reader left open would keep the server, and the test's end, waiting.
      for (const reader of readers) reader.destroy();
    }
  });
});
