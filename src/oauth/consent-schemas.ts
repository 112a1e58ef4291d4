import { Type } from '@sinclair/typebox';
import { IdParams, Timestamp } from '../http/common-schemas.js';

export const ConsentSchema = Type.Object({
  client_id: Type.String({ format: 'uuid', description: 'The app.' }),
  name: Type.String({ description: "The app's name." }),
  logo_uri: Type.Union([Type.String(), Type.Null()], { description: "The app's logo (https), or null." }),
  scopes: Type.Array(Type.String(), { description: 'The scopes as granted, `openid` included.' }),
  granted_at: Timestamp,
});

export const ConsentListSchema = Type.Object(
  { items: Type.Array(ConsentSchema, { description: 'Newest grant first; apps since deleted are left out.' }) },
  {
    examples: [
      { items: [{ client_id: '5d1c2b3a-0f9e-4d8c-b7a6-1e2f3a4b5c6d', name: 'Partner shop', logo_uri: 'https://partner.example.com/logo.png', scopes: ['openid', 'email', 'offline_access'], granted_at: '2026-11-21T20:25:00.000Z' }] },
    ],
  },
);

export const ConsentParams = Type.Object({ client_id: IdParams.properties.id });
