import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { PUBLIC } from '../sessions/access-rule.js';
import { authorizationServerMetadata } from './discovery-metadata.js';
import { AuthorizationServerMetadataSchema } from './discovery-schemas.js';

// Metadata changes only with the configuration: caches may keep it a while.
const CACHE_CONTROL = 'public, max-age=300';

/** The authorization server's metadata documents (RFC 8414, OpenID Connect Discovery 1.0). */
export const discoveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app;
  const metadata = authorizationServerMetadata(config);

  app.get(
    '/.well-known/oauth-authorization-server',
    {
      config: { access: PUBLIC },
      schema: {
        operationId: 'oauthMetadata',
        tags: ['clients'],
        security: [],
        summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
        description:
          'The same document as /.well-known/openid-configuration while the authorization server of customer sign-in is on; ' +
          'while it is off (JWT_ISSUER neither https nor http on a loopback host), section 11\'s document of the client ' +
          'credentials grant alone.',
        response: { 200: AuthorizationServerMetadataSchema },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', CACHE_CONTROL);
      return metadata;
    },
  );

  app.get(
    '/.well-known/openid-configuration',
    {
      config: { access: PUBLIC },
      schema: {
        operationId: 'openidConfiguration',
        tags: ['clients'],
        security: [],
        summary: 'OpenID Connect Discovery 1.0 metadata',
        description:
          "The endpoints, grants, scopes, claims and algorithms of the authorization server of customer sign-in. 404 while it is off " +
          '(JWT_ISSUER neither https nor http on a loopback host).',
        response: { 200: AuthorizationServerMetadataSchema, ...problemResponses(404) },
      },
    },
    async (_request, reply) => {
      if (!config.authorizationServer) throw notFound('OpenID Connect discovery: the authorization server is off');
      reply.header('cache-control', CACHE_CONTROL);
      return metadata;
    },
  );
};
