import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { LocationRow } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { IfMatchHeaders, setEtag } from '../http/preconditions.js';
import { notModifiedReply, problemResponses, resourceReply } from '../http/problem-schema.js';
import { ADMIN, STAFF } from '../sessions/access-rule.js';
import { locationById, locationsByPriority } from './location-repository.js';
import { toLocationResponse } from './location-response.js';
import { CreateLocationBody, LocationListSchema, LocationSchema, PatchLocationBody } from './location-schemas.js';
import { createLocation, patchLocation, removeLocation } from './location-service.js';

/** API.md section 21: staff read the locations, admins change them; API clients by the inventory scopes. */
const READERS = { roles: STAFF, scope: 'inventory:read' } as const;
const WRITERS = { roles: ADMIN, scope: 'inventory:write' } as const;
const LocationReply = Type.Ref(LocationSchema);

export const locationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const locationReply = (reply: FastifyReply, row: LocationRow) => {
    setEtag(reply, row.version);
    return toLocationResponse(row);
  };

  app.get(
    '',
    {
      config: { access: READERS },
      schema: {
        operationId: 'listLocations',
        tags: ['locations'],
        summary: 'Every location, by priority, then code (manager, admin)',
        description:
          'Not paged: a shop has few locations, so `items` holds them all (no `next_cursor`); the order is `priority` (lower first), ' +
          'then `code` without regard to letter case.',
        response: { 200: LocationListSchema, ...problemResponses(401, 403) },
      },
    },
    async (request) => ({ items: (await request.access.read(locationsByPriority)).map(toLocationResponse) }),
  );

  app.post(
    '',
    {
      config: { access: WRITERS },
      schema: {
        operationId: 'createLocation',
        tags: ['locations'],
        summary: 'Create a location (admin)',
        description:
          'A new location is never the default (PATCH `is_default: true` moves the mark to it) and holds no stock. `code` is ' +
          'stored as sent and unique without regard to case: 409 `location_code_taken`. Records `location.created`.',
        body: CreateLocationBody,
        response: { 201: resourceReply(LocationReply, 'Created.', { location: true }), ...problemResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const location = await request.access.transaction((trx) => createLocation(trx, request.body, contextOf(request)));
      reply.header('location', `/api/locations/${location.id}`);
      return reply.code(201).send(locationReply(reply, location));
    },
  );

  app.get(
    '/:id',
    {
      config: { access: READERS },
      schema: {
        operationId: 'getLocation',
        tags: ['locations'],
        summary: 'One location (manager, admin)',
        params: IdParams,
        response: { 200: resourceReply(LocationReply, 'The location.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const [location] = await request.access.read(locationById, request.params.id);
      if (!location) throw notFound('location');
      return locationReply(reply, location);
    },
  );

  app.patch(
    '/:id',
    {
      config: { access: WRITERS },
      schema: {
        operationId: 'patchLocation',
        tags: ['locations'],
        summary: "Change a location's code, name, priority or status, or make it the default (admin)",
        description:
          'A JSON merge patch (`application/merge-patch+json` or `application/json`). `is_default` takes only `true` (`false` is ' +
          '400 `validation_failed`): the location becomes the default and the one that was loses the mark in the same ' +
          'transaction, each recording its `location.updated` and moving its `version`; concurrent moves end with exactly one ' +
          'default. The default is always active: making it inactive, or making an inactive location the default without ' +
          '`status: active` in the same patch, is 409 `default_location`. A code another location has in any case is 409 ' +
          '`location_code_taken`. `{}` (or a patch to the values it has) changes nothing and keeps `version`.',
        params: IdParams,
        headers: IfMatchHeaders,
        body: PatchLocationBody,
        response: { 200: resourceReply(LocationReply, 'The location after the change.'), ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) =>
      locationReply(reply, await request.access.transaction((trx) => patchLocation(trx, request.params.id, request.headers['if-match'], request.body, contextOf(request)))),
  );

  app.delete(
    '/:id',
    {
      config: { access: WRITERS },
      schema: {
        operationId: 'deleteLocation',
        tags: ['locations'],
        summary: 'Delete a location (admin)',
        description:
          'The default cannot be deleted: 409 `default_location` (make another the default first). A location where any variant ' +
          'has stock or an open allocation will be 409 `location_not_empty` once stock is kept per location; until then every ' +
          'unit is at the default. Honours If-Match. Records `location.deleted`. No body.',
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 409, 412) },
      },
    },
    async (request, reply) => {
      await request.access.transaction((trx) => removeLocation(trx, request.params.id, request.headers['if-match'], contextOf(request)));
      return reply.code(204).send(null);
    },
  );
};
