import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { PUBLIC } from './access-rule.js';
import type { KeyRing } from './key-ring.js';

const JwksSchema = Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.String())) }, { description: 'RFC 7517 JSON Web Key Set.' });

/** The public keys that verify access tokens, for everyone (empty with JWT_SECRET). */
export function jwksRoutes(ring: KeyRing | undefined): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/.well-known/jwks.json',
      {
        config: { access: PUBLIC },
        schema: {
          operationId: 'getJwks',
          tags: ['auth'],
          security: [],
          summary: 'The public keys that verify access tokens',
          description: 'Cacheable for 5 minutes. Empty when the deployment signs with JWT_SECRET (HS256).',
          response: { 200: { ...JwksSchema, headers: { 'cache-control': { type: 'string', description: 'public, max-age=300' } } } },
        },
      },
      async (_request, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        return ring ? ring.jwks() : { keys: [] };
      },
    );
  };
}
