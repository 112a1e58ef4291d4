import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import { LocationSchema } from './location-schemas.js';
import { locationRoutes } from './location-routes.js';
import { reconcileReserved } from './reconciliation-service.js';
import { overdueReservationStats } from './reservation-repository.js';
import { ReservationSchema } from './reservation-schemas.js';
import { reservationRoutes } from './reservation-routes.js';
import { expireLapsedReservations } from './reservation-service.js';
import { StockMovementSchema, VariantStockSchema } from './stock-schemas.js';
import type { JobRunner } from '../jobs/job-runner.js';

/** The expiry runs every second on every instance, so a lapsed reservation is closed well within 10 s. */
const EXPIRY_EVERY_MS = 1000;
/** The reconciliation of `reserved` reads every variant holding units and every open line: once a minute. */
const RECONCILE_EVERY_MS = 60_000;

/**
 * Inventory, the one owner of stock: the locations it is kept at, movements, adjustments and reservations (the variants
 * area calls it for a variant's stock), the expiry of lapsed reservations and the reconciliation
 * of `reserved` with the open reservation lines.
 */
export const inventoryPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle; jobs: JobRunner }) => {
    const { db } = options.database;
    app.addSchema(StockMovementSchema);
    app.addSchema(VariantStockSchema);
    app.addSchema(ReservationSchema);
    app.addSchema(LocationSchema);
    await app.register(reservationRoutes, { prefix: '/api' });
    await app.register(locationRoutes, { prefix: '/api/locations' });
    const expired = app.metrics.counter({ name: 'reservations_expired_total', help: 'Reservations closed by the expiry job.' });
    app.metrics.queue('reservations_overdue', 'Active reservations past their expires_at, not yet expired', () => overdueReservationStats(db));
    options.jobs.add({ name: 'expire-reservations', everyMs: EXPIRY_EVERY_MS, run: async () => expired.inc(await expireLapsedReservations(db)) });
    const mismatches = app.metrics.gauge({
      name: 'inventory_reserved_mismatches',
      help: 'Variants whose reserved differed from their open reservation lines at the last reconciliation (up to 100); anything but 0 is a defect.',
      aggregator: 'max',
    });
    const levelMismatches = app.metrics.gauge({
      name: 'inventory_level_mismatches',
      help: "Levels whose reserved or stock differed from their open allocations or movements, or variants whose units at inactive locations differed from those levels, at the last reconciliation (up to 100); anything but 0 is a defect.",
      aggregator: 'max',
    });
    const repairs = app.metrics.counter({ name: 'inventory_reserved_repairs_total', help: 'Variants whose reserved the reconciliation set back to their open reservation lines.' });
    options.jobs.add({
      name: 'reconcile-reserved',
      everyMs: RECONCILE_EVERY_MS,
      run: async () => {
        const pass = await reconcileReserved(db, app.log);
        if (pass.found !== undefined) mismatches.set(pass.found);
        if (pass.levelsFound !== undefined) levelMismatches.set(pass.levelsFound);
        repairs.inc(pass.repaired);
      },
    });
  },
  { name: 'inventory', dependencies: ['sessions', 'metrics'] },
);
