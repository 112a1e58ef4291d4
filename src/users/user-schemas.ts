import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../http/common-schemas.js';

export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
export const Password = Type.String({ minLength: 8, maxLength: 128, description: '8 to 128 characters.' });
export const PersonName = Type.String({ minLength: 1, maxLength: 100 });
export const Phone = Type.Union([Type.String({ maxLength: 32 }), Type.Null()]);
const RoleSchema = Type.Union([Type.Literal('user'), Type.Literal('manager'), Type.Literal('admin')]);
const StatusSchema = Type.Union([Type.Literal('active'), Type.Literal('suspended')]);

export const UserSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    name: Type.String(),
    phone: Phone,
    role: RoleSchema,
    status: StatusSchema,
    balance: Type.Integer({ description: 'Store credit in minor units (cents).' }),
    currency: Type.String({ description: 'ISO 4217 code of the deployment currency.' }),
    version: Type.Integer({ description: 'Grows by one on each write; the ETag carries it.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'User', title: 'User' },
);
export type UserResponse = Static<typeof UserSchema>;

export const ProfileBody = Type.Object(
  { name: PersonName, email: Email, phone: Type.Optional(Phone) },
  { additionalProperties: false, description: 'Replaces the three fields; a missing `phone` becomes null.' },
);

export const ChangePasswordBody = Type.Object(
  { current_password: Type.String({ minLength: 1, maxLength: 1024 }), new_password: Password },
  { additionalProperties: false },
);

export const ListUsersQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'Case-insensitive substring of email or name.' })),
    role: Type.Optional(RoleSchema),
    status: Type.Optional(StatusSchema),
  },
  { additionalProperties: false },
);

export const RoleBody = Type.Object({ role: RoleSchema }, { additionalProperties: false });
export const StatusBody = Type.Object({ status: StatusSchema }, { additionalProperties: false });
