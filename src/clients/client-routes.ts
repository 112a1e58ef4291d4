import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiClientRow } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { toAppError } from '../http/error-handler.js';
import { AppError, notFound, type FieldProblem } from '../http/errors.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { IfMatchHeaders, setEtag } from '../http/preconditions.js';
import { notModifiedReply, problemResponses, resourceReply } from '../http/problem-schema.js';
import { ADMIN } from '../sessions/access-rule.js';
import type { Access } from '../sessions/admission.js';
import { clientById, clientsPage, countClients, secretsOfClients } from './client-repository.js';
import { toClientResponse, toSecretResponse } from './client-response.js';
import { ClientSchema, CreateClientBody, CreatedClientSchema, CreatedSecretSchema, NewSecretBody, PatchClientBody, SecretParams, SIGN_IN_SCOPE_LIST } from './client-schemas.js';
import { creationProblems, patchProblems } from './client-type-rules.js';
import { createClient, DEFAULT_OVERLAP_SECONDS, deleteClient, deleteSecret, patchClient, rollSecret } from './client-service.js';

/** API clients are an admin's to manage, never another client's; every change needs a fresh second factor. */
const ADMINS = { roles: ADMIN, directSignInOnly: true } as const;
const ADMINS_STEPPED_UP = { roles: ADMIN, stepUp: true, directSignInOnly: true } as const;
const ClientReply = Type.Ref(ClientSchema);

/**
 * A body that broke its schema is refused with the problems of its type's rules joined to the
 * schema's, so one reply lists every problem (API.md section 1): the routes that have such rules
 * take the schema's problems as data (`attachValidation`) and refuse here, before the handler.
 */
async function refuseBrokenBody(request: FastifyRequest, ruleProblems: () => Promise<FieldProblem[]>): Promise<void> {
  const broken = request.validationError as (FastifyError & { validationContext?: string }) | undefined;
  if (!broken) return;
  const error = toAppError(broken, request.id);
  if (broken.validationContext !== 'body' || error.code !== 'validation_failed') throw error;
  throw new AppError('validation_failed', error.detail, [...(error.errors ?? []), ...(await ruleProblems())]);
}
const sentBody = (request: FastifyRequest) => (typeof request.body === 'object' && request.body !== null && !Array.isArray(request.body) ? (request.body as Record<string, unknown>) : {});

/** API.md section 11: the clients other services call the API as. */
export const clientRoutes: FastifyPluginAsyncTypebox = async (app) => {
  /** A client's reply, after a read or write of this request admitted the caller (so `admit()` costs nothing). */
  const clientReply = async (reply: FastifyReply, access: Access, row: ApiClientRow) => {
    setEtag(reply, row.version);
    return toClientResponse(row, await secretsOfClients((await access.admit()).db, [row.id]));
  };
  const existing = async (access: Access, id: string) => {
    const [client] = await access.read(clientById, id);
    if (!client) throw notFound('client');
    return client;
  };

  app.post(
    '',
    {
      config: { access: ADMINS_STEPPED_UP, noStore: true },
      attachValidation: true,
      preHandler: async (request) => refuseBrokenBody(request, async () => creationProblems(sentBody(request))),
      schema: {
        operationId: 'createClient',
        tags: ['clients'],
        summary: 'Create an API client (admin): a service, or an app that signs users in; the reply shows its first secret once',
        description:
          'The secret (`shop_sk_` and 43 base64url characters, 256 random bits) is shown in this reply only; the service ' +
          'keeps its SHA-256. A service client (`type: service`, the default) uses it as the bearer token, or to obtain access ' +
          'tokens at POST /api/oauth/token. A `confidential` app gets a secret too, to authenticate itself when it signs users ' +
          'in (never as a bearer token, nor for the client credentials grant); a `public` app gets none: no `secret` here, ' +
          '`secrets: []`.\n\n' +
          'An app must have `redirect_uris` (1 to 10) and may have `post_logout_redirect_uris` (0 to 10), each an absolute URL ' +
          'without a fragment, user name or password: `https`, `http` only on a loopback host (`127.0.0.1`, `[::1]`, `localhost`, ' +
          'any port), or a private-use scheme of a native app (a reversed domain name such as `com.example.shop:/callback`); ' +
          '`first_party` (default false), `logo_uri` (null or https) and `id_token_signed_response_alg` (`RS256` default, or ' +
          '`EdDSA`); its `scopes` may also hold ' + `${SIGN_IN_SCOPE_LIST}.\n\n` +
          'A service client may hold none of these fields nor those scopes (400 `validation_failed` at each); every reply shows ' +
          'every client in one shape, a service client with `redirect_uris: []`, `post_logout_redirect_uris: []`, `first_party: ' +
          'false`, `logo_uri: null` and `id_token_signed_response_alg: null`. Each problem of a URI is named at its place ' +
          '(`/redirect_uris/0`).',
        body: CreateClientBody,
        response: { 201: resourceReply(CreatedClientSchema, 'Created, with `secret` (none for a public client).', { location: true }), ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => {
      const { client, secret } = await request.access.transaction((trx) => createClient(trx, request.body, contextOf(request)));
      setEtag(reply, client.version);
      reply.header('location', `/api/clients/${client.id}`);
      if (!secret) return reply.code(201).send(toClientResponse(client, []));
      return reply.code(201).send({ ...toClientResponse(client, [secret.row]), secret: secret.value });
    },
  );

  app.get(
    '',
    {
      config: { access: ADMINS },
      schema: {
        operationId: 'listClients',
        tags: ['clients'],
        summary: 'The API clients, newest first (admin); never a secret',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: PageSchema(ClientReply), ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { access } = request;
      return listPage(request.query, access, {
        rows: async (page) => {
          const rows = await access.readPage((db) => clientsPage(db, page));
          const secrets = await secretsOfClients((await access.admit()).db, rows.map((row) => row.id));
          return rows.map((row) => ({ ...row, secrets }));
        },
        count: (db) => countClients(db),
        toItem: ({ secrets, ...row }) => toClientResponse(row, secrets),
      });
    },
  );

  app.get(
    '/:id',
    {
      config: { access: ADMINS },
      schema: {
        operationId: 'getClient',
        tags: ['clients'],
        summary: 'One API client (admin)',
        params: IdParams,
        response: { 200: resourceReply(ClientReply, 'The client.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => clientReply(reply, request.access, await existing(request.access, request.params.id)),
  );

  app.patch(
    '/:id',
    {
      config: { access: ADMINS_STEPPED_UP },
      attachValidation: true,
      // The client's type decides its rules: read (the caller admitted) only when the body broke its schema.
      preHandler: async (request) =>
        refuseBrokenBody(request, async () => {
          const [client] = await request.access.read(clientById, (request.params as { id: string }).id);
          return client ? patchProblems(client.type, sentBody(request)) : [];
        }),
      schema: {
        operationId: 'patchClient',
        tags: ['clients'],
        summary: "Change an API client: name, description, scopes, status, rate limit, an app's redirect URIs and settings (admin)",
        description:
          'A JSON merge patch (`application/merge-patch+json` or `application/json`). A scope taken away, or `status: ' +
          'disabled`, applies to the very next request of the client, its tokens included; tokens issued before a client was ' +
          'disabled stay refused when it is enabled again, and those issued after it is enabled again work at once. `type` is ' +
          'set at creation only: here it is 400 `validation_failed`, as any field the body may not hold. An app\'s ' +
          '`redirect_uris`, `post_logout_redirect_uris` (each list replaced whole), `first_party`, `logo_uri` and ' +
          '`id_token_signed_response_alg` follow the rules of POST /api/clients; a service client may hold none of them. A 400 lists ' +
          'every problem of the body, its schema\'s and its client type\'s together, and comes before If-Match (a stale tag is 412 ' +
          'only for a body that is right).',
        params: IdParams,
        headers: IfMatchHeaders,
        body: PatchClientBody,
        response: { 200: resourceReply(ClientReply, 'The client after the change.'), ...problemResponses(400, 401, 403, 404, 412, 413, 415) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      const client = await access.transaction((trx) => patchClient(trx, request.params.id, request.headers['if-match'], request.body, contextOf(request)));
      return clientReply(reply, access, client);
    },
  );

  app.delete(
    '/:id',
    {
      config: { access: ADMINS_STEPPED_UP },
      schema: {
        operationId: 'deleteClient',
        tags: ['clients'],
        summary: 'Delete an API client (admin)',
        description: 'Its secrets and tokens are refused from the very next request. No body.',
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 412) },
      },
    },
    async (request, reply) => {
      await request.access.transaction((trx) => deleteClient(trx, request.params.id, request.headers['if-match'], contextOf(request)));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/:id/secrets',
    {
      config: { access: ADMINS_STEPPED_UP, noStore: true, optionalBody: true },
      schema: {
        operationId: 'rollClientSecret',
        tags: ['clients'],
        summary: 'Give an API client a new secret, the others expiring after an overlap (admin)',
        description:
          'The reply shows the new secret once. Every other secret of the client that does not expire sooner now expires ' +
          '`expire_others_in` seconds from now (default 86400; 0 stops them at once): deploy the new one, then let the old ' +
          'one lapse. The body is optional. A public client has no secrets: 409 `client_type`.',
        params: IdParams,
        body: NewSecretBody,
        response: { 201: resourceReply(CreatedSecretSchema, 'The new secret, shown once; Location names it (to delete it).', { location: true, etag: false }), ...problemResponses(400, 401, 403, 404, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const expireOthersIn = request.body.expire_others_in ?? DEFAULT_OVERLAP_SECONDS;
      const secret = await request.access.transaction((trx) => rollSecret(trx, request.params.id, expireOthersIn, contextOf(request)));
      reply.header('location', `/api/clients/${request.params.id.toLowerCase()}/secrets/${secret.row.id}`);
      return reply.code(201).send({ ...toSecretResponse(secret.row), secret: secret.value });
    },
  );

  app.delete(
    '/:id/secrets/:secret_id',
    {
      config: { access: ADMINS_STEPPED_UP },
      schema: {
        operationId: 'deleteClientSecret',
        tags: ['clients'],
        summary: 'Delete one secret of an API client (admin)',
        description: 'The secret stops working at once; access tokens already obtained with it live until they expire. No body.',
        params: SecretParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await request.access.transaction((trx) => deleteSecret(trx, request.params.id, request.params.secret_id.toLowerCase(), contextOf(request)));
      return reply.code(204).send(null);
    },
  );
};
