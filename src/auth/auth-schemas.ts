import { Type } from '@sinclair/typebox';
import { Email, Password, PersonName, Phone } from '../users/user-schemas.js';

export const RegisterBody = Type.Object(
  { email: Email, password: Password, name: PersonName, phone: Type.Optional(Phone) },
  { additionalProperties: false, examples: [{ email: 'ada@example.com', password: 'correct-horse-battery', name: 'Ada Lovelace' }] },
);

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false, examples: [{ email: 'ada@example.com', password: 'correct-horse-battery' }] },
);

export const EmailCodeRequestBody = Type.Object(
  { email: Email },
  { additionalProperties: false, examples: [{ email: 'ada@example.com' }] },
);

export const EmailCodeLoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    code: Type.String({ minLength: 1, maxLength: 64, description: 'The 6 digits of the email; spaces are ignored. Any other string is a wrong code (400 `invalid_email_code`).' }),
  },
  { additionalProperties: false, examples: [{ email: 'ada@example.com', code: '042917' }] },
);

/**
 * Any string within the body limit: one that is not a live refresh token of the service (an
 * access token, an empty or a very long string included) is answered as an unknown token, never
 * as a schema error (API.md section 17).
 */
export const RefreshTokenBody = Type.Object(
  {
    refresh_token: Type.String({
      description: 'The opaque refresh token of a login or refresh. Any other string (an access token included) is an unknown token, not a validation error.',
    }),
  },
  { additionalProperties: false, examples: [{ refresh_token: 'q3V0aGVudGljYXRlZC1yZWZyZXNoLXRva2VuLWV4YW1wbGU' }] },
);
