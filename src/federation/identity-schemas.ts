import { Type } from '@sinclair/typebox';
import { Timestamp } from '../http/common-schemas.js';

export const IdentitySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  provider_id: Type.String({ format: 'uuid' }),
  provider_name: Type.String({ description: "The provider's name." }),
  email: Type.Union([Type.String(), Type.Null()], { description: 'The email the provider gave when the identity was linked, or null when it gave none.' }),
  linked_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'When it last signed the user in, or null when it never has.' }),
});

export const IdentityListSchema = Type.Object(
  { items: Type.Array(IdentitySchema, { description: 'Oldest link first; not paged (one per provider and account there).' }) },
  {
    examples: [
      {
        items: [
          {
            id: '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
            provider_id: '0b6f2c1e-5d4a-4e3b-9c8d-7a6b5c4d3e2f',
            provider_name: 'Google',
            email: 'ada@example.com',
            linked_at: '2026-11-29T08:00:00.000Z',
            last_used_at: '2026-11-29T09:30:00.000Z',
          },
        ],
      },
    ],
  },
);
