import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { SigningKeyRow } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { StringEnum, Timestamp } from '../http/common-schemas.js';
import { problemResponses } from '../http/problem-schema.js';
import { ADMIN } from '../sessions/access-rule.js';
import { liveSigningKeys } from '../sessions/signing-key-repository.js';
import type { RotationSettings } from '../sessions/signing-key-service.js';
import { rotateSigningKey } from './signing-key-rotation.js';

const SigningKeySchema = Type.Object({
  kid: Type.String(),
  alg: Type.Literal('EdDSA'),
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
        summary: 'Rotate the signing key (admin)',
        description: 'The new key signs from now on; the old one stays published and accepted until its tokens have expired. No body.',
        response: { 200: SigningKeySchema, ...problemResponses(401, 403) },
      },
    },
    async (request) => {
      const key = await request.access.transaction((trx) => rotateSigningKey(trx, rotation, contextOf(request)));
      await reloadKeys();
      return toSigningKeyResponse(key);
    },
  );
};
