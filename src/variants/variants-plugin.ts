import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { variantRoutes } from './variant-routes.js';
import { VariantSchema } from './variant-schemas.js';
import { variantStockRoutes } from './variant-stock-routes.js';

/** The catalogue's variants: SKU, price, attributes, and their stock (kept by inventory). */
export const variantsPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.addSchema(VariantSchema);
    await app.register(variantRoutes, { prefix: '/api/variants' });
    await app.register(variantStockRoutes, { prefix: '/api' });
    app.reserveLiteralSegments(['/api/variants/product', '/api/variants/sku', '/api/variants/batch']);
  },
  { name: 'variants', dependencies: ['sessions', 'inventory', 'http-frame', 'method-not-allowed'] },
);
