import { Type } from '@sinclair/typebox';

/** OpenID Connect Core §5.3.2: `sub`, and the claims of the scopes the app's token carries. */
export const UserInfoSchema = Type.Object(
  {
    sub: Type.String({ format: 'uuid', description: "The user's id (the `sub` of the ID token)." }),
    email: Type.Optional(Type.String({ description: 'With the scope `email`.' })),
    email_verified: Type.Optional(Type.Boolean({ description: 'With the scope `email`.' })),
    name: Type.Optional(Type.String({ description: 'With the scope `profile`.' })),
    updated_at: Type.Optional(Type.Integer({ description: 'With the scope `profile`: when the profile last changed, in seconds since the epoch (OpenID Connect), not RFC 3339 text.' })),
    phone_number: Type.Optional(Type.String({ description: 'With the scope `phone`, when the user has a phone number.' })),
  },
  { examples: [{ sub: '0b6f7d1e-5c1a-4a39-9d8e-3f0c2a5b6e71', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace', updated_at: 1795781100 }] },
);
