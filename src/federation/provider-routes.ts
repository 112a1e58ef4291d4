import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { IdentityProviderRow } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { IfMatchHeaders, setEtag } from '../http/preconditions.js';
import { notModifiedReply, problemResponses, resourceReply } from '../http/problem-schema.js';
import { ADMIN } from '../sessions/access-rule.js';
import type { SecretsAtRest } from '../sessions/secrets-at-rest.js';
import { providerById, providersByName } from './provider-repository.js';
import { toIdentityProviderResponse } from './provider-response.js';
import { CreateIdentityProviderBody, IdentityProviderListSchema, IdentityProviderSchema, PatchIdentityProviderBody } from './provider-schemas.js';
import { createProvider, patchProvider, prepareNewProvider, prepareProviderPatch, removeProvider } from './provider-service.js';

/** API.md section 20: the providers are an admin's, users only (never an API client's); each change needs a fresh second factor. */
const ADMINS = { roles: ADMIN, directSignInOnly: true } as const;
const ADMINS_STEPPED_UP = { roles: ADMIN, stepUp: true, directSignInOnly: true } as const;
const ProviderReply = Type.Ref(IdentityProviderSchema);
const DISCOVERY_CHECK =
  "The provider's discovery document is read when `issuer` is saved, after the caller is admitted and before anything is written (up to 10 s): " +
  '400 `invalid_provider` names what failed (unreachable, not JSON, an `issuer` that differs, no authorization code flow).';

export const providerRoutes: FastifyPluginAsyncTypebox<{ secrets: SecretsAtRest }> = async (app, { secrets }) => {
  const providerReply = (reply: FastifyReply, row: IdentityProviderRow) => {
    setEtag(reply, row.version);
    return toIdentityProviderResponse(row);
  };

  app.get(
    '',
    {
      config: { access: ADMINS },
      schema: {
        operationId: 'listIdentityProviders',
        tags: ['identity-providers'],
        summary: 'Every identity provider, by name (admin)',
        description: 'Not paged: a shop connects few providers, so `items` holds them all. No secret is shown.',
        response: { 200: IdentityProviderListSchema, ...problemResponses(401, 403) },
      },
    },
    async (request) => ({ items: (await request.access.read(providersByName)).map(toIdentityProviderResponse) }),
  );

  app.post(
    '',
    {
      config: { access: ADMINS_STEPPED_UP },
      schema: {
        operationId: 'createIdentityProvider',
        tags: ['identity-providers'],
        summary: 'Connect an OpenID provider users may sign in with (admin)',
        description:
          `${DISCOVERY_CHECK} Defaults: \`scopes\` \`["openid", "email", "profile"]\`, \`link_by_verified_email\` false, \`enabled\` true. ` +
          'The credential (`client_secret`, or Apple\'s key) is kept encrypted and never shown. Records `identity_provider.created`.',
        body: CreateIdentityProviderBody,
        response: { 201: resourceReply(ProviderReply, 'Created.', { location: true }), ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      // The caller is admitted first: nobody unadmitted makes the service fetch a URL.
      await access.admit();
      const read = await prepareNewProvider(request.body);
      const provider = await access.transaction((trx) => createProvider(trx, request.body, read, secrets, contextOf(request)));
      reply.header('location', `/api/identity-providers/${provider.id}`);
      return reply.code(201).send(providerReply(reply, provider));
    },
  );

  app.get(
    '/:id',
    {
      config: { access: ADMINS },
      schema: {
        operationId: 'getIdentityProvider',
        tags: ['identity-providers'],
        summary: 'One identity provider (admin)',
        description: 'With `ETag: "<version>"`; `If-None-Match` with it answers 304. No secret is shown.',
        params: IdParams,
        response: { 200: resourceReply(ProviderReply, 'The provider.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const [provider] = await request.access.read(providerById, request.params.id);
      if (!provider) throw notFound('identity provider');
      return providerReply(reply, provider);
    },
  );

  app.patch(
    '/:id',
    {
      config: { access: ADMINS_STEPPED_UP },
      schema: {
        operationId: 'patchIdentityProvider',
        tags: ['identity-providers'],
        summary: 'Change an identity provider: its settings, credential, or whether it is enabled (admin)',
        description:
          'A JSON merge patch (`application/merge-patch+json` or `application/json`); honours If-Match (412 when stale). ' +
          `${DISCOVERY_CHECK} Disabling a provider keeps the identities linked through it. ` +
          'Records `identity_provider.updated` (a credential written shows as `credentials_changed: true`, never its value).',
        params: IdParams,
        headers: IfMatchHeaders,
        body: PatchIdentityProviderBody,
        response: { 200: resourceReply(ProviderReply, 'The provider after the change.'), ...problemResponses(400, 401, 403, 404, 412, 413, 415) },
      },
    },
    async (request, reply) => {
      const { access, body } = request;
      await access.admit();
      const read = await prepareProviderPatch(body, body.client_id);
      const provider = await access.transaction((trx) => patchProvider(trx, request.params.id, request.headers['if-match'], body, read, secrets, contextOf(request)));
      return providerReply(reply, provider);
    },
  );

  app.delete(
    '/:id',
    {
      config: { access: ADMINS_STEPPED_UP },
      schema: {
        operationId: 'deleteIdentityProvider',
        tags: ['identity-providers'],
        summary: 'Delete an identity provider and every identity linked through it (admin)',
        description:
          'Every identity linked through it is removed with it (its users keep their accounts and their other ways of signing in). Honours If-Match. ' +
          'Records `identity_provider.deleted` with the number of identities removed. No body.',
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 412) },
      },
    },
    async (request, reply) => {
      await request.access.transaction((trx) => removeProvider(trx, request.params.id, request.headers['if-match'], contextOf(request)));
      return reply.code(204).send(null);
    },
  );
};
