import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { StockMovementSchema } from './stock-schemas.js';
import { stockRoutes } from './stock-routes.js';

/** Inventory: stock movements and multi-line adjustments. */
export const inventoryPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.addSchema(StockMovementSchema);
    await app.register(
      async (inventory) => {
        inventory.addHook('onRequest', app.authenticate);
        await inventory.register(stockRoutes);
      },
      { prefix: '/api' },
    );
  },
  { name: 'inventory', dependencies: ['variants', 'sessions'] },
);
