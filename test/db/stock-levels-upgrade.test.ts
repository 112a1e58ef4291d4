import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { inTransaction } from '../../src/db/transaction.js';
import { SERVICE_CONTEXT } from '../../src/events/event-recorder.js';
import { finishReservation } from '../../src/inventory/reservation-service.js';
import { createScratchDatabase, onPostgres, poolMode } from '../helpers/test-app.js';

const MIGRATIONS = readdirSync(path.join(import.meta.dirname, '../../src/db/migrations'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.replace(/\.ts$/, ''))
  .sort();
/** The migration a database stood at before per-location stock came (whatever number it has). */
const BEFORE_LEVELS = MIGRATIONS[MIGRATIONS.indexOf('0035-stock-levels') - 1]!;

/** API.md section 21: the upgrade puts every variant's stock, every movement and every open reservation at the default location. */
describe('the upgrade to stock per location', () => {
  it('loses nothing: levels equal the variants, movements and lines are at the default, and an open reservation still releases', async () => {
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    const database = await openDatabase({ databaseUrl: scratch?.url, dataDir: 'memory://', poolMode });
    const { db } = database;
    try {
      await migrateUpTo(db, BEFORE_LEVELS);
      const [stocked, reservedToo, empty] = [randomUUID(), randomUUID(), randomUUID()];
      await sql`
        insert into variants (id, product_id, sku, name, price, stock, reserved) values
          (${stocked}, 'p-1', 'UP-1', 'One', 100, 10, 0),
          (${reservedToo}, 'p-3', 'UP-2', 'Two', 100, 7, 5),
          (${empty}, 'p-2', 'UP-3', 'Three', 100, 0, 0)`.execute(db);
      const moved = (variantId: string, delta: number, stockAfter: number, minutesAgo: number) =>
        sql`(${randomUUID()}, ${variantId}, ${delta}, ${stockAfter}, 'count', null, null, now() - make_interval(mins => ${minutesAgo}))`;
      await sql`
        insert into stock_movements (id, variant_id, delta, stock_after, reason, reference, actor_id, created_at) values
          ${moved(stocked, 12, 12, 30)}, ${moved(stocked, -2, 10, 20)}, ${moved(reservedToo, 9, 9, 30)}, ${moved(reservedToo, -2, 7, 10)}`.execute(db);
      const [open, openToo, committed] = [randomUUID(), randomUUID(), randomUUID()];
      await sql`
        insert into reservations (id, status, reference, expires_at, created_at, updated_at) values
          (${open}, 'active', 'ORD-1', now() + interval '10 minutes', now(), now()),
          (${openToo}, 'active', 'ORD-2', now() + interval '10 minutes', now(), now()),
          (${committed}, 'committed', 'ORD-0', now(), now(), now())`.execute(db);
      await sql`
        insert into reservation_lines (reservation_id, position, variant_id, quantity, active) values
          (${open}, 0, ${reservedToo}, 3, true), (${openToo}, 0, ${reservedToo}, 2, true), (${committed}, 0, ${stocked}, 2, false)`.execute(db);

      await migrateToLatest(db);

      const atDefault = (await db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow()).id;
      const levels = await db.selectFrom('stock_levels').selectAll().orderBy('stock', 'desc').execute();
      assert.deepEqual(
        levels.map((level) => [level.variant_id, level.location_id, level.stock, level.reserved]),
        [
          [stocked, atDefault, 10, 0],
          [reservedToo, atDefault, 7, 5],
          [empty, atDefault, 0, 0],
        ],
      );
      const variants = await db.selectFrom('variants').select(['id', 'stock', 'reserved', 'version']).orderBy('stock', 'desc').execute();
      assert.deepEqual(variants.map((variant) => [variant.id, variant.stock, variant.reserved, variant.version]), [
        [stocked, 10, 0, 1],
        [reservedToo, 7, 5, 1],
        [empty, 0, 0, 1],
      ]);
      const movements = await db.selectFrom('stock_movements').select(['variant_id', 'location_id', 'delta']).execute();
      assert.equal(movements.length, 4);
      assert.ok(movements.every((movement) => movement.location_id === atDefault));
      for (const level of levels) {
        const sum = movements.filter((movement) => movement.variant_id === level.variant_id).reduce((total, movement) => total + movement.delta, 0);
        assert.equal(sum, level.stock, 'the stock at a location is the sum of its movements there');
      }
      const allocations = await db.selectFrom('reservation_allocations').selectAll().orderBy('quantity', 'desc').execute();
      assert.deepEqual(
        allocations.map((allocation) => [allocation.reservation_id, allocation.position, allocation.location_id, allocation.quantity]),
        [
          [open, 0, atDefault, 3],
          [openToo, 0, atDefault, 2],
          [committed, 0, atDefault, 2],
        ],
      );

      // The open reservations act on the level they were put at.
      await inTransaction(db, (trx) => finishReservation(trx, open, 'released', SERVICE_CONTEXT));
      await inTransaction(db, (trx) => finishReservation(trx, openToo, 'committed', SERVICE_CONTEXT));
      const level = await db.selectFrom('stock_levels').selectAll().where('variant_id', '=', reservedToo).executeTakeFirstOrThrow();
      const variant = await db.selectFrom('variants').selectAll().where('id', '=', reservedToo).executeTakeFirstOrThrow();
      assert.deepEqual([level.stock, level.reserved, variant.stock, variant.reserved], [5, 0, 5, 0]);
      const commitMovement = await db.selectFrom('stock_movements').selectAll().where('variant_id', '=', reservedToo).where('reason', '=', 'reservation committed').executeTakeFirstOrThrow();
      assert.deepEqual([commitMovement.location_id, commitMovement.delta, commitMovement.stock_after], [atDefault, -2, 5]);
    } finally {
      await database.close();
      await scratch?.drop();
    }
  });
});
