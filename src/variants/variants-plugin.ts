import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { variantRoutes } from './variant-routes.js';
import { VariantSchema } from './variant-schemas.js';

/** The catalogue's variants: SKU, price, stock, attributes. */
export const variantsPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.addSchema(VariantSchema);
    await app.register(
      async (variants) => {
        variants.addHook('onRequest', app.authenticate);
        await variants.register(variantRoutes);
      },
      { prefix: '/api/variants' },
    );
    app.reserveLiteralSegments(['/api/variants/product', '/api/variants/sku', '/api/variants/batch']);
  },
  { name: 'variants', dependencies: ['sessions', 'http-frame', 'method-not-allowed'] },
);
