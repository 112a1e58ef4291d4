import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Timestamp, TrimmedText } from '../http/common-schemas.js';

const FactorType = StringEnum(['totp', 'webauthn'], { description: '`totp`: an authenticator app (RFC 6238); `webauthn`: a passkey.' });
const RecoveryCodes = Type.Array(Type.String({ examples: ['k7mq-2xrp-9ajd-h4wt'] }), {
  description: '10 single-use recovery codes, shown this once (the service keeps their hashes). Typed in any case, with or without dashes.',
});
const base64url = (maxLength: number, description?: string) => Type.String({ pattern: '^[A-Za-z0-9_-]*={0,2}$', maxLength, ...(description ? { description } : {}) });
/** WebAuthn JSON objects may carry members newer than this list (API.md section 12). */
const OPEN = { additionalProperties: true } as const;

export const FactorName = TrimmedText(100, { description: 'A name to tell the factor by', examples: ['Phone'] });

export const MfaFactorSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    type: FactorType,
    name: Type.String(),
    created_at: Timestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'Its last accepted code or assertion.' }),
  },
  { $id: 'MfaFactor', title: 'Second factor', additionalProperties: false },
);

export const MfaStatusSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'The caller has a confirmed factor: logins ask for it.' }),
    required: Type.Boolean({ description: "The caller's role is in MFA_REQUIRED_ROLES." }),
    factors: Type.Array(Type.Ref(MfaFactorSchema), { description: 'Confirmed factors, oldest first.' }),
    recovery_codes_left: Type.Integer({ minimum: 0 }),
  },
  {
    examples: [
      {
        enabled: true,
        required: true,
        factors: [{ id: '0b7c6f7e-3f0e-4d2a-9a41-6f1de0a7c3b2', type: 'totp', name: 'Phone', created_at: '2026-11-21T20:25:00.000Z', last_used_at: '2026-11-22T08:00:00.000Z' }],
        recovery_codes_left: 9,
      },
    ],
  },
);

export const NewTotpBody = Type.Object({ name: Type.Optional(FactorName) }, { additionalProperties: false, examples: [{ name: 'Phone' }] });

export const NewTotpSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  type: Type.Literal('totp'),
  name: Type.String(),
  secret: Type.String({ description: 'Base32 of 20 random bytes: type it into an authenticator app, or scan otpauth_url as a QR code.', examples: ['JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'] }),
  otpauth_url: Type.String({ description: 'The key URI authenticator apps read (SHA-1, 6 digits, 30 seconds).', examples: ['otpauth://totp/Shop:ada%40example.com?issuer=Shop&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30'] }),
});

const TotpCode = Type.String({ minLength: 1, maxLength: 16, description: 'The 6 digits the authenticator app shows (spaces ignored).', examples: ['492039'] });
const RecoveryCode = Type.String({ minLength: 1, maxLength: 64, description: 'One of the recovery codes.', examples: ['k7mq-2xrp-9ajd-h4wt'] });

export const ConfirmTotpBody = Type.Object({ code: TotpCode }, { additionalProperties: false, examples: [{ code: '492039' }] });

export const ConfirmedFactorSchema = Type.Object({
  ...MfaFactorSchema.properties,
  recovery_codes: Type.Optional(RecoveryCodes),
});

export const RecoveryCodesSchema = Type.Object({ recovery_codes: RecoveryCodes });

const PublicKeyCredentialDescriptor = Type.Object({ id: base64url(1366), type: Type.String({ examples: ['public-key'] }), transports: Type.Optional(Type.Array(Type.String())) }, OPEN);

export const CreationOptionsSchema = Type.Object(
  {
    rp: Type.Object({ id: Type.Optional(Type.String()), name: Type.String() }, OPEN),
    user: Type.Object({ id: base64url(128), name: Type.String(), displayName: Type.String() }, OPEN),
    challenge: base64url(128, 'Valid 5 minutes, for one registration.'),
    pubKeyCredParams: Type.Array(Type.Object({ type: Type.String({ examples: ['public-key'] }), alg: Type.Integer() }, OPEN)),
    timeout: Type.Optional(Type.Integer()),
    excludeCredentials: Type.Optional(Type.Array(PublicKeyCredentialDescriptor, { description: "The caller's passkeys: an authenticator does not register twice." })),
    authenticatorSelection: Type.Optional(Type.Object({}, OPEN)),
    attestation: Type.Optional(Type.String()),
    extensions: Type.Optional(Type.Object({}, OPEN)),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  { ...OPEN, title: 'PublicKeyCredentialCreationOptionsJSON', description: 'Give it to navigator.credentials.create() (or @simplewebauthn/browser startRegistration).' },
);

export const RequestOptionsSchema = Type.Object(
  {
    challenge: base64url(128, 'Valid 5 minutes, for one assertion, good or bad.'),
    timeout: Type.Optional(Type.Integer()),
    rpId: Type.Optional(Type.String()),
    allowCredentials: Type.Optional(Type.Array(PublicKeyCredentialDescriptor, { description: "The user's passkeys." })),
    userVerification: Type.Optional(Type.String()),
    extensions: Type.Optional(Type.Object({}, OPEN)),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  { ...OPEN, title: 'PublicKeyCredentialRequestOptionsJSON', description: 'Give it to navigator.credentials.get() (or @simplewebauthn/browser startAuthentication).' },
);

const CLIENT_DATA_EXAMPLE = 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiNGRyRjRxN0NPT3RlQjF2Y0x5bkQ3ZyIsIm9yaWdpbiI6Imh0dHBzOi8vc2hvcC5leGFtcGxlLmNvbSJ9';
const ASSERTION_EXAMPLE = {
  id: 'Aw3sV2fy0uQ4lN8m6x1kYQ',
  rawId: 'Aw3sV2fy0uQ4lN8m6x1kYQ',
  type: 'public-key',
  response: { clientDataJSON: CLIENT_DATA_EXAMPLE, authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ', signature: 'MEUCIQDx1s0', userHandle: 'lT2fEx1iQyCPf1n6dU5QfA' },
  clientExtensionResults: {},
};

const ClientExtensionResults = Type.Object({}, { ...OPEN, description: 'As the browser gave them.' });
const Attachment = Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()]));

export const RegistrationResponse = Type.Object(
  {
    id: base64url(1366),
    rawId: base64url(1366),
    response: Type.Object(
      {
        clientDataJSON: base64url(4096),
        attestationObject: base64url(16384),
        authenticatorData: Type.Optional(base64url(8192)),
        transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })),
        publicKeyAlgorithm: Type.Optional(Type.Integer()),
        publicKey: Type.Optional(base64url(1024)),
      },
      OPEN,
    ),
    authenticatorAttachment: Attachment,
    clientExtensionResults: ClientExtensionResults,
    type: Type.Literal('public-key'),
  },
  { ...OPEN, title: 'RegistrationResponseJSON', description: 'What navigator.credentials.create() gave, as JSON (PublicKeyCredential.toJSON()).' },
);

export const AuthenticationResponse = Type.Object(
  {
    id: base64url(1366),
    rawId: base64url(1366),
    response: Type.Object(
      {
        clientDataJSON: base64url(4096),
        authenticatorData: base64url(8192),
        signature: base64url(1024),
        userHandle: Type.Optional(Type.Union([base64url(128), Type.Null()])),
      },
      OPEN,
    ),
    authenticatorAttachment: Attachment,
    clientExtensionResults: ClientExtensionResults,
    type: Type.Literal('public-key'),
  },
  { ...OPEN, title: 'AuthenticationResponseJSON', description: 'What navigator.credentials.get() gave, as JSON (PublicKeyCredential.toJSON()).' },
);

export const NewPasskeyBody = Type.Object(
  { name: Type.Optional(FactorName), response: RegistrationResponse },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Laptop',
        response: {
          id: 'Aw3sV2fy0uQ4lN8m6x1kYQ',
          rawId: 'Aw3sV2fy0uQ4lN8m6x1kYQ',
          type: 'public-key',
          response: { clientDataJSON: CLIENT_DATA_EXAMPLE, attestationObject: 'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjE', transports: ['internal'] },
          authenticatorAttachment: 'platform',
          clientExtensionResults: {},
        },
      },
    ],
  },
);

/** Any string within the body limit: one that is not a live mfa_token is 401 `invalid_mfa_token`, never a schema error. */
const MfaToken = Type.String({ description: 'The `mfa_token` of the login’s 403 `mfa_required` reply. Any other string is 401 `invalid_mfa_token`.' });

/** Exactly one proof of a second factor. */
const proofs = {
  code: Type.Object({ code: TotpCode }, { additionalProperties: false }),
  recovery_code: Type.Object({ recovery_code: RecoveryCode }, { additionalProperties: false }),
  webauthn: Type.Object({ webauthn: AuthenticationResponse }, { additionalProperties: false }),
};

export const VerifyBody = Type.Union([proofs.code, proofs.recovery_code, proofs.webauthn], {
  description: 'One of: `{code}` (TOTP), `{recovery_code}`, `{webauthn}` (an assertion answering a challenge of POST /api/auth/mfa/webauthn/authentication-options).',
  examples: [{ code: '492039' }, { recovery_code: 'k7mq-2xrp-9ajd-h4wt' }, { webauthn: ASSERTION_EXAMPLE }],
});

export const LoginSecondStepBody = Type.Union(
  [
    Type.Object({ mfa_token: MfaToken, code: TotpCode }, { additionalProperties: false }),
    Type.Object({ mfa_token: MfaToken, recovery_code: RecoveryCode }, { additionalProperties: false }),
    Type.Object({ mfa_token: MfaToken, webauthn: AuthenticationResponse }, { additionalProperties: false }),
  ],
  {
    description: 'The `mfa_token` and one of: `code` (TOTP), `recovery_code`, `webauthn` (an assertion answering a challenge tied to this mfa_token).',
    examples: [
      { mfa_token: 'q3Zt0a6mJx2vH1dB8cK5rN4eW7yL9pS0uF2gT6hI1oA', code: '492039' },
      { mfa_token: 'q3Zt0a6mJx2vH1dB8cK5rN4eW7yL9pS0uF2gT6hI1oA', recovery_code: 'k7mq-2xrp-9ajd-h4wt' },
    ],
  },
);

export const AuthenticationOptionsBody = Type.Object(
  { mfa_token: Type.Optional(MfaToken) },
  {
    additionalProperties: false,
    description: 'With `mfa_token`: for a login’s second step, no access token needed. Without: for step-up, with an access token.',
    examples: [{ mfa_token: 'q3Zt0a6mJx2vH1dB8cK5rN4eW7yL9pS0uF2gT6hI1oA' }, {}],
  },
);

export const PasskeySignInBody = Type.Object(
  { response: AuthenticationResponse },
  {
    additionalProperties: false,
    description: 'The assertion of a discoverable passkey answering a challenge of POST /api/auth/passkey/options.',
    examples: [{ response: ASSERTION_EXAMPLE }],
  },
);

export const VerifiedSchema = Type.Object({ verified_at: Timestamp });

export type VerifyInput = Static<typeof VerifyBody>;
export type LoginSecondStepInput = Static<typeof LoginSecondStepBody>;
