import { Type } from '@sinclair/typebox';

export const TokenPairSchema = Type.Object(
  {
    access_token: Type.String({ description: 'JWT (typ at+jwt): `sub`, `sid`, `amr` (RFC 8176) and `auth_time`, kept across refreshes.' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds until the access token expires.' }),
    refresh_token: Type.String({ description: 'Opaque; single use, rotated on every refresh.' }),
  },
  { $id: 'TokenPair', title: 'Token pair' },
);

export const SessionSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    created_at: Type.String({ format: 'date-time', description: 'The login that started it.' }),
    last_used_at: Type.String({ format: 'date-time', description: 'Its last request or refresh, to the minute.' }),
    expires_at: Type.String({ format: 'date-time', description: 'When its refresh token runs out, unless refreshed.' }),
    user_agent: Type.Union([Type.String(), Type.Null()]),
    ip: Type.Union([Type.String(), Type.Null()]),
    current: Type.Boolean({ description: 'The session of the token making this request.' }),
    mfa_verified_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When a second factor was last verified in it (at login, by step-up, or by confirming a factor); null if never.',
    }),
  },
  {
    $id: 'Session',
    title: 'Session',
    examples: [
      {
        id: '1e2d3c4b-5a69-4788-9a0b-1c2d3e4f5a6b',
        created_at: '2026-11-22T08:00:00.000Z',
        last_used_at: '2026-11-22T09:12:00.000Z',
        expires_at: '2026-12-22T09:12:00.000Z',
        user_agent: 'Mozilla/5.0',
        ip: '203.0.113.7',
        current: true,
        mfa_verified_at: '2026-11-22T08:00:05.000Z',
      },
    ],
  },
);

export const SessionListSchema = Type.Object({ items: Type.Array(Type.Ref(SessionSchema)) });
