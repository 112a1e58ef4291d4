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

export const RefreshTokenBody = Type.Object(
  { refresh_token: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false, examples: [{ refresh_token: 'q3V0aGVudGljYXRlZC1yZWZyZXNoLXRva2VuLWV4YW1wbGU' }] },
);
