import { Type } from '@sinclair/typebox';

export const TokenPairSchema = Type.Object(
  {
    access_token: Type.String({ description: 'JWT (typ at+jwt), HS256.' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds until the access token expires.' }),
    refresh_token: Type.String({ description: 'Opaque; single use, rotated on every refresh.' }),
  },
  { $id: 'TokenPair', title: 'Token pair' },
);
