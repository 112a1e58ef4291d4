import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { overdueReservationStats } from './reservation-repository.js';
import { ReservationSchema } from './reservation-schemas.js';
import { reservationRoutes } from './reservation-routes.js';
import { expireLapsedReservations } from './reservation-service.js';
import { StockMovementSchema } from './stock-schemas.js';
import { stockRoutes } from './stock-routes.js';

/** The expiry runs every second on every instance, so a lapsed reservation is closed well within 10 s. */
const EXPIRY_EVERY_MS = 1000;

/** Inventory: stock movements, multi-line adjustments and reservations. */
export const inventoryPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.addSchema(StockMovementSchema);
    app.addSchema(ReservationSchema);
    await app.register(
      async (inventory) => {
        inventory.addHook('onRequest', app.authenticate);
        await inventory.register(stockRoutes);
        await inventory.register(reservationRoutes);
      },
      { prefix: '/api' },
    );
    const expired = app.metrics.counter({ name: 'reservations_expired_total', help: 'Reservations closed by the expiry job.' });
    app.metrics.queue('reservations_overdue', 'Active reservations past their expires_at, not yet expired', () => overdueReservationStats(app.db));
    app.jobs.add({ name: 'expire-reservations', everyMs: EXPIRY_EVERY_MS, run: async () => expired.inc(await expireLapsedReservations(app.db)) });
  },
  { name: 'inventory', dependencies: ['variants', 'sessions', 'jobs', 'metrics'] },
);
