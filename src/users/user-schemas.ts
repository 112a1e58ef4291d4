import { Type, type Static } from '@sinclair/typebox';
import { Reason, StringEnum, Timestamp, TrimmedText } from '../http/common-schemas.js';

export const Email = Type.String({
  format: 'email',
  minLength: 3,
  maxLength: 254,
  description: 'An email address, 3 to 254 characters; unique among accounts without regard to case.',
  examples: ['ada@example.com'],
});
export const Password = Type.String({ minLength: 8, maxLength: 128, description: '8 to 128 characters.', examples: ['correct-horse-battery'] });
export const PersonName = TrimmedText(100, { description: 'The name', examples: ['Ada Lovelace'] });
const PhoneNumber = Type.String({
  maxLength: 32,
  pattern: '^[0-9 +().-]*[0-9][0-9 +().-]*$',
  'x-pattern-message': 'must be digits, spaces and + - ( ) . with at least one digit',
  description: 'Up to 32 characters of digits, spaces and `+-().`, with at least one digit.',
  examples: ['+44 20 7946 0958'],
});
export const Phone = Type.Union([PhoneNumber, Type.Null()]);
export const RoleSchema = StringEnum(['user', 'manager', 'admin'], { description: 'What the account may do.' });
export const StatusSchema = StringEnum(['active', 'suspended'], { description: 'A suspended account can neither sign in nor use its tokens.' });

export const UserSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    email_verified: Type.Boolean({ description: 'Whether the owner followed the link sent to this address (or signed in with a code sent to it).' }),
    has_password: Type.Boolean({
      description: 'False for an account without a password (made by an email code): it signs in by email code, and sets a password through a password reset.',
    }),
    name: Type.String(),
    phone: Type.Union([Type.String(), Type.Null()]),
    role: RoleSchema,
    status: StatusSchema,
    balance: Type.Integer({ description: 'Store credit in minor units (cents).' }),
    currency: Type.String({ description: 'ISO 4217 code of the deployment currency.' }),
    version: Type.Integer({ description: 'Grows by one on each write; the ETag carries it.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    $id: 'User',
    title: 'User',
    examples: [
      {
        id: '3f0c4e1a-8d5b-4c2e-9a71-2b6d0e5f4a13',
        email: 'ada@example.com',
        email_verified: true,
        has_password: true,
        name: 'Ada Lovelace',
        phone: null,
        role: 'user',
        status: 'active',
        balance: 1250,
        currency: 'USD',
        version: 3,
        created_at: '2026-11-21T20:25:00.000Z',
        updated_at: '2026-11-22T08:00:00.000Z',
      },
    ],
  },
);
export type UserResponse = Static<typeof UserSchema>;

const CurrentPassword = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: 'The caller\'s password: required when `email` changes; when sent, it must be right (403 `wrong_password`).',
});
/** What an account without a password sends where the others send their password (API.md section 19). */
const EmailCodeProof = Type.String({
  minLength: 1,
  maxLength: 64,
  description:
    'Only for an account without a password (`has_password` false), in place of the password: a code the caller asked for at ' +
    'POST /api/auth/email-code for its own email. A wrong one is 400 `invalid_email_code` and counts as a wrong password; an account ' +
    'with a password sending it gets a 400 naming it.',
});

export const ProfileBody = Type.Object(
  { name: PersonName, email: Email, phone: Type.Optional(Phone), current_password: Type.Optional(CurrentPassword), email_code: Type.Optional(EmailCodeProof) },
  {
    additionalProperties: false,
    description: 'Replaces the three fields; a missing `phone` becomes null. A new `email` needs `current_password`.',
    examples: [{ name: 'Ada Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0958' }],
  },
);

export const ProfilePatchBody = Type.Object(
  {
    name: Type.Optional(PersonName),
    email: Type.Optional(Email),
    phone: Type.Optional(Phone),
    current_password: Type.Optional(CurrentPassword),
    email_code: Type.Optional(EmailCodeProof),
  },
  {
    additionalProperties: false,
    description:
      'JSON merge patch (RFC 7396): fields left out stay; `phone: null` clears the phone. `{}` changes nothing. A new `email` needs `current_password`.',
    examples: [{ phone: null }, { email: 'ada.lovelace@example.com', current_password: 'correct-horse-battery' }],
  },
);

export const ChangePasswordBody = Type.Object(
  {
    current_password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Required for an account with a password.' })),
    email_code: Type.Optional(EmailCodeProof),
    new_password: Password,
  },
  {
    additionalProperties: false,
    description: '`new_password` must differ from the current one. An account without a password sends `email_code` instead of `current_password`, and gets its first password.',
    examples: [{ current_password: 'correct-horse-battery', new_password: 'another-long-passphrase' }],
  },
);

export const ListUsersQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'Case-insensitive substring of email or name.' })),
    role: Type.Optional(RoleSchema),
    status: Type.Optional(StatusSchema),
    email_verified: Type.Optional(Type.Boolean({ description: 'Only users whose address is (or is not) verified.' })),
  },
  { additionalProperties: false },
);

export const RoleBody = Type.Object(
  { role: RoleSchema, reason: Type.Optional(Reason) },
  { additionalProperties: false, examples: [{ role: 'manager', reason: 'Runs the spring catalogue' }] },
);
export const StatusBody = Type.Object(
  { status: StatusSchema, reason: Type.Optional(Reason) },
  { additionalProperties: false, examples: [{ status: 'suspended', reason: 'Chargeback under review' }] },
);
export const DeleteProfileBody = Type.Object(
  {
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "The caller's current password: required for an account with a password." })),
    email_code: Type.Optional(EmailCodeProof),
  },
  { additionalProperties: false, examples: [{ password: 'correct-horse-battery' }] },
);

export const DeleteUserQuery = Type.Object({ reason: Type.Optional(Reason) }, { additionalProperties: false });

export const EmailBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 254 }) }, { additionalProperties: false, examples: [{ email: 'ada@example.com' }] });
/** Any string within the body limit: one that is not a live token of the link's kind is an unknown token, never a schema error. */
const OneTimeToken = Type.String({ description: 'The token from the emailed link. Any other string is an unknown token (400 naming it), not a validation error.' });
export const ResetConfirmBody = Type.Object(
  { token: OneTimeToken, new_password: Password },
  { additionalProperties: false, examples: [{ token: 'vG1h3kC0Yb3mXw6JzQ2a8N5sE7tR9uP4dL1fK0jH2gA', new_password: 'another-long-passphrase' }] },
);
export const VerifyEmailBody = Type.Object({ token: OneTimeToken }, { additionalProperties: false, examples: [{ token: 'vG1h3kC0Yb3mXw6JzQ2a8N5sE7tR9uP4dL1fK0jH2gA' }] });

/** The reply to a request that may send an email: the same whether or not one is sent. */
export const MailAcceptedSchema = Type.Object({ status: Type.Literal('accepted') }, { description: 'Accepted; an email follows when there is one to send.' });
