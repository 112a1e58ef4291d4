import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { PUBLIC } from './access-rule.js';
import type { KeyRing } from './key-ring.js';

const JwksSchema = Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.String())) }, { description: 'RFC 7517 JSON Web Key Set.' });

/** The public keys that verify access tokens and ID tokens, for everyone (ID tokens' only, with JWT_SECRET). */
export function jwksRoutes(ring: KeyRing): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/.well-known/jwks.json',
      {
        config: { access: PUBLIC },
        schema: {
          operationId: 'getJwks',
          tags: ['auth'],
          security: [],
          summary: 'The public keys that verify access tokens and ID tokens',
          description:
            'Cacheable for 5 minutes. The Ed25519 keys (`kty: OKP`, `alg: EdDSA`) verify access tokens and ID tokens; the RSA keys (`kty: RSA`, `alg: RS256`) verify ID tokens only. Each algorithm has its active key, and the retiring ones stay until their last token has expired. When the deployment signs access tokens with JWT_SECRET (HS256), the keys here verify ID tokens only.',
          response: { 200: { ...JwksSchema, headers: { 'cache-control': { type: 'string', description: 'public, max-age=300' } } } },
        },
      },
      async (_request, reply) => {
        reply.header('cache-control', 'public, max-age=300');
        return ring.jwks();
      },
    );
  };
}
