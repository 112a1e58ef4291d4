import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import { overdueReservationStats } from './reservation-repository.js';
import { ReservationSchema } from './reservation-schemas.js';
import { reservationRoutes } from './reservation-routes.js';
import { expireLapsedReservations } from './reservation-service.js';
import { StockMovementSchema } from './stock-schemas.js';

/** The expiry runs every second on every instance, so a lapsed reservation is closed well within 10 s. */
const EXPIRY_EVERY_MS = 1000;

/**
 * Inventory, the one owner of stock: movements, adjustments and reservations (the variants
 * area calls it for a variant's stock), and the expiry of lapsed reservations.
 */
export const inventoryPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle }) => {
    const { db } = options.database;
    app.addSchema(StockMovementSchema);
    app.addSchema(ReservationSchema);
    await app.register(reservationRoutes, { prefix: '/api' });
    const expired = app.metrics.counter({ name: 'reservations_expired_total', help: 'Reservations closed by the expiry job.' });
    app.metrics.queue('reservations_overdue', 'Active reservations past their expires_at, not yet expired', () => overdueReservationStats(db));
    app.jobs.add({ name: 'expire-reservations', everyMs: EXPIRY_EVERY_MS, run: async () => expired.inc(await expireLapsedReservations(db)) });
  },
  { name: 'inventory', dependencies: ['sessions', 'jobs', 'metrics'] },
);
