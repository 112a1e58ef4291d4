import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { SigningKeyRow } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { StringEnum, Timestamp } from '../http/common-schemas.js';
import { problemResponses } from '../http/problem-schema.js';
import { ADMIN } from '../sessions/access-rule.js';
import { liveSigningKeys } from '../sessions/signing-key-repository.js';
import type { RotationSettings } from '../sessions/signing-key-service.js';
import { rotateSigningKeys } from './signing-key-rotation.js';

const SigningKeySchema = Type.Object({
  kid: Type.String(),
  alg: StringEnum(['EdDSA', 'RS256'], { description: 'EdDSA (Ed25519): signs access tokens (unless JWT_SECRET is set) and ID tokens; RS256 (RSA, 2048 bits): signs ID tokens only.' }),
  status: StringEnum(['active', 'retiring']),
  created_at: Timestamp,
  retires_at: Type.Union([Timestamp, Type.Null()], { description: 'Null for the active key; for a retiring one, when its last token has expired (plus 5 minutes).' }),
});

const toSigningKeyResponse = (row: SigningKeyRow) => ({
  kid: row.kid,
  alg: row.alg,
  status: row.status,
  created_at: row.created_at.toISOString(),
  retires_at: row.retires_at ? row.retires_at.toISOString() : null,
});

/** Listing and rotating the signing keys: admins, never an API client. */
export const signingKeyRoutes: FastifyPluginAsyncTypebox<{ rotation: RotationSettings; reloadKeys: () => Promise<void> }> = async (app, { rotation, reloadKeys }) => {
  app.get(
    '',
    {
      config: { access: { roles: ADMIN, directSignInOnly: true } },
      schema: {
        operationId: 'listSigningKeys',
        tags: ['auth'],
        summary: 'The signing keys (admin); never a private key',
        description: 'The keys the JWKS publishes: one active key of each algorithm (EdDSA and RS256) and those still retiring, newest first. With JWT_SECRET set they sign ID tokens only.',
        response: { 200: Type.Object({ items: Type.Array(SigningKeySchema) }), ...problemResponses(401, 403) },
      },
    },
    async (request) => ({ items: (await request.access.readPage((db) => liveSigningKeys(db))).map(toSigningKeyResponse) }),
  );
  app.post(
    '/rotate',
    {
      config: { access: { roles: ADMIN, stepUp: true, directSignInOnly: true } },
      schema: {
        operationId: 'rotateSigningKey',
        tags: ['auth'],
        summary: 'Rotate the signing keys (admin)',
        description:
          'Both keys rotate together, in one transaction: the Ed25519 one and the RSA one each get a new key, which signs from now on; the old ones stay published and accepted until their tokens have expired. The reply is the new Ed25519 key (the one that signs access tokens unless JWT_SECRET is set); the new RSA key is listed by GET /api/signing-keys. Each rotated key records a signing_key.rotated event. No body.',
        response: { 200: SigningKeySchema, ...problemResponses(401, 403) },
      },
    },
    async (request) => {
      const keys = await request.access.transaction((trx) => rotateSigningKeys(trx, rotation, contextOf(request)));
      await reloadKeys();
      return toSigningKeyResponse(keys.find((key) => key.alg === 'EdDSA')!);
    },
  );
};
