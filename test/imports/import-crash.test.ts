import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { eventually } from '../helpers/eventually.js';
import { freePort, postJson, startService } from '../helpers/service-process.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, createScratchDatabase, JWT_SECRET, onPostgres, useTwoInstancesWithAdmin } from '../helpers/test-app.js';

const ROWS = 12_000;

/**
 * API.md section 14: "an instance that dies mid-import leaves it to be resumed or failed by
 * another, never applied twice". A real service process runs each import until part of it is
 * done, is killed with SIGKILL, and an instance over the same database takes the import over
 * once its lease has run out (moved by updating the row, never by sleeping).
 */
describe('an import whose instance is killed mid-run (PostgreSQL)', { skip: !onPostgres && 'a second instance needs PostgreSQL' }, () => {
  it('is resumed by another instance: skip_failed from its checkpoint, reject_all from the start; every row applied once', async () => {
    const scratch = await createScratchDatabase();
    const environment = { DATABASE_URL: scratch.url, JWT_SECRET, ADMIN_EMAIL, ADMIN_PASSWORD };
    let survivor: Awaited<ReturnType<typeof buildTestApp>> | undefined;
    let doomed: Awaited<ReturnType<typeof startService>> | undefined;
    try {
      for (const policy of ['skip_failed', 'reject_all']) {
        doomed = await startService({ ...environment, PORT: await freePort() });
        const { baseUrl } = doomed;
        const login = await postJson(`${baseUrl}/api/auth/login`, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
        const auth = { authorization: `Bearer ${login.body?.access_token}` };
        const tag = `kill-${policy}-${randomUUID().slice(0, 6)}`;
        const rows = Array.from({ length: ROWS }, (_, index) => `${tag}-${index},${tag},Item ${index},${100 + index},${1 + (index % 5)},${index}`).join('\n');
        const reply = await fetch(`${baseUrl}/api/variants/imports?on_error=${policy}`, { method: 'POST', headers: { ...auth, 'content-type': 'text/csv' }, body: `sku,product_id,name,price,stock,attributes.n\n${rows}\n` });
        assert.equal(reply.status, 202);
        const { id } = (await reply.json()) as { id: string };
        await eventually(async () => {
          const progress = (await (await fetch(`${baseUrl}/api/variants/imports/${id}`, { headers: auth })).json()) as { rows_processed: number };
          return progress.rows_processed >= 1000 ? progress : undefined;
        }, `part of the ${policy} import done`);
        doomed.child.kill('SIGKILL');
        await doomed.exited;

        survivor ??= await buildTestApp({ databaseUrl: scratch.url });
        const { db } = survivor;
        const killed = await db.selectFrom('variant_imports').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        assert.equal(killed.status, 'running', policy);
        const storedBefore = Number((await sql<{ count: string }>`select count(*) as count from variants where product_id = ${tag}`.execute(db)).rows[0]!.count);
        if (policy === 'skip_failed') assert.equal(storedBefore, killed.rows_processed, 'the batches that committed, and their checkpoint');
        else assert.equal(storedBefore, 0, 'all or nothing: nothing before the end');
        // The lease of the dead instance runs out.
        await sql`update variant_imports set claimed_until = now() where id = ${id}`.execute(db);
        await survivor.jobs.runNow('run-imports');
        const resumed = await db.selectFrom('variant_imports').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        assert.equal(resumed.status, 'succeeded', `${policy}: ${resumed.last_error}`);
        assert.deepEqual([resumed.rows_processed, resumed.created, resumed.failed], [ROWS, ROWS, 0], policy);
        const counts = await sql<{ variants: string; created: string; movements: string }>`
          select (select count(*) from variants where product_id = ${tag}) as variants,
                 (select count(*) from events where type = 'variant.created' and data->>'import_id' = ${id}) as created,
                 (select count(*) from stock_movements where reason = ${`import ${id}`}) as movements`.execute(db);
        assert.deepEqual(
          [counts.rows[0]!.variants, counts.rows[0]!.created, counts.rows[0]!.movements].map(Number),
          [ROWS, ROWS, ROWS],
          `${policy}: one variant, one variant.created and one movement per row`,
        );
      }
    } finally {
      if (doomed && doomed.child.exitCode === null) doomed.child.kill('SIGKILL');
      await survivor?.app.close();
      await scratch.drop();
    }
  });
});

describe('an import claimed by two instances at once (PostgreSQL)', { skip: !onPostgres && 'two instances need PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();

  it('runs on one of them: every row applied once, one import.finished', async () => {
    const { first, second, admin } = fixture;
    const tag = `twice-${randomUUID().slice(0, 6)}`;
    const rows = Array.from({ length: 2000 }, (_, index) => `${tag}-${index},${tag},Item,1,1,${index}`).join('\n');
    const reply = await first.app.inject({ method: 'POST', url: '/api/variants/imports?on_error=skip_failed', headers: { ...admin.auth, 'content-type': 'text/csv' }, payload: `sku,product_id,name,price,stock,attributes.n\n${rows}\n` });
    assert.equal(reply.statusCode, 202);
    const id = reply.json().id as string;
    await Promise.all([first.jobs.runNow('run-imports'), second.jobs.runNow('run-imports'), second.jobs.runNow('run-imports')]);
    await eventually(async () => {
      const row = await first.db.selectFrom('variant_imports').select('status').where('id', '=', id).executeTakeFirstOrThrow();
      return row.status === 'succeeded' ? row : undefined;
    }, 'the import finished');
    const counts = await sql<{ variants: string; finished: string; movements: string }>`
      select (select count(*) from variants where product_id = ${tag}) as variants,
             (select count(*) from events where type = 'import.finished' and subject_id = ${id}) as finished,
             (select count(*) from stock_movements where reason = ${`import ${id}`}) as movements`.execute(first.db);
    assert.deepEqual([counts.rows[0]!.variants, counts.rows[0]!.finished, counts.rows[0]!.movements].map(Number), [2000, 1, 2000]);
  });
});
