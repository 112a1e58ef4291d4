import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { StringEnum, Timestamp } from '../http/common-schemas.js';
import { problemResponses } from '../http/problem-schema.js';
import type { SigningKeyRow } from '../db/tables.js';
import type { KeyRing } from './key-ring.js';
import { listLiveSigningKeys } from './signing-key-repository.js';
import { rotateSigningKey } from './signing-key-service.js';

const SigningKeySchema = Type.Object({
  kid: Type.String(),
  alg: Type.Literal('EdDSA'),
  status: StringEnum(['active', 'retiring']),
  created_at: Timestamp,
  retires_at: Type.Union([Timestamp, Type.Null()], { description: 'Null for the active key; for a retiring one, when its last token has expired (plus 5 minutes).' }),
});
const JwksSchema = Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.String())) }, { description: 'RFC 7517 JSON Web Key Set.' });

const toSigningKeyResponse = (row: SigningKeyRow) => ({
  kid: row.kid,
  alg: row.alg,
  status: row.status,
  created_at: row.created_at.toISOString(),
  retires_at: row.retires_at ? row.retires_at.toISOString() : null,
});

/** The public keys for everyone; listing and rotating them for admins. */
export function signingKeyRoutes(ring: KeyRing | undefined): { jwks: FastifyPluginAsyncTypebox; admin: FastifyPluginAsyncTypebox } {
  return {
    jwks: async (app) => {
      app.get(
        '/.well-known/jwks.json',
        {
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
    },
    admin: async (app) => {
      app.get(
        '',
        {
          config: { roles: ['admin'], checksCallerWithData: true },
          schema: {
            operationId: 'listSigningKeys',
            tags: ['auth'],
            summary: 'The signing keys (admin); never a private key',
            response: { 200: Type.Object({ items: Type.Array(SigningKeySchema) }), ...problemResponses(401, 403) },
          },
        },
        async (request) => ({ items: (await listLiveSigningKeys(request.db)).map(toSigningKeyResponse) }),
      );
      app.post(
        '/rotate',
        {
          config: { roles: ['admin'], checksCallerWithData: true },
          schema: {
            operationId: 'rotateSigningKey',
            tags: ['auth'],
            summary: 'Rotate the signing key (admin)',
            description: 'The new key signs from now on; the old one stays published and accepted until its tokens have expired.',
            response: { 200: SigningKeySchema, ...problemResponses(401, 403) },
          },
        },
        async (request) => {
          const key = await rotateSigningKey(request.db, app.config.accessTokenTtlSeconds, contextOf(request));
          await ring?.reload();
          return toSigningKeyResponse(key);
        },
      );
    },
  };
}
