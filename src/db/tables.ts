import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

export type Role = 'user' | 'manager' | 'admin';
export type UserStatus = 'active' | 'suspended';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  phone: string | null;
  role: Role;
  status: UserStatus;
  balance: ColumnType<number, number | undefined, number>;
  /** argon2id; null for an account without a password (API.md section 19: made by an email code). */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * Moves on every change that must end the user's sessions (password change or reset,
   * suspension, deletion): a login that read the user before such a change commits finds it
   * moved and starts no session (API.md section 10, "Credentials change atomically").
   */
  session_version: ColumnType<number, number | undefined, number>;
  email_verified: ColumnType<boolean, boolean | undefined, boolean>;
  version: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Date | null;
  /** When what identified the person was removed (API.md section 13); null until then. */
  erased_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface RefreshTokensTable {
  id: string;
  user_id: string;
  family_id: string;
  token_hash: string;
  expires_at: Date;
  created_at: Timestamp;
  used_at: Date | null;
  revoked_at: Date | null;
  /** The token this one's rotation issued, sealed with this token's own value (see refresh-rotation.ts). */
  successor_sealed: string | null;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: Timestamp;
  last_used_at: Timestamp;
  expires_at: Timestamp;
  ended_at: Date | null;
  user_agent: string | null;
  ip: string | null;
  /** How the session started (RFC 8176): `pwd`, then `otp`/`hwk` and `mfa` after a second factor. */
  amr: ColumnType<string[], string[] | undefined, string[]>;
  /** When the user authenticated to start it; kept across refreshes. */
  auth_time: Timestamp;
  /** When a second factor was last verified in it (login, step-up, a confirmed factor). */
  mfa_verified_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The app that started it for the user (API.md section 18); null for a direct sign-in. */
  client_id: ColumnType<string | null, string | null | undefined, never>;
  /** The scopes granted to that app; null for a direct sign-in. */
  scopes: ColumnType<string[] | null, string[] | null | undefined, never>;
  /** A sign-in session of the hosted pages: SHA-256 of the secret its browser cookie carries; null for any other session. */
  browser_secret_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** An app's session: the hosted pages' sign-in session it came from (logging out there ends it). */
  signin_session_id: ColumnType<string | null, string | null | undefined, never>;
}

/** An authorization code of API.md section 18: single use, 60 seconds, bound to all it was issued for. */
export interface AuthorizationCodesTable {
  id: string;
  /** SHA-256 (hex) of the code's 43 characters. */
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  /** The PKCE S256 challenge. */
  code_challenge: string;
  nonce: string | null;
  scopes: string[];
  signin_session_id: string;
  auth_time: Timestamp;
  amr: string[];
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The session the code's exchange started; a second presentation ends it. */
  session_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** What a user granted a third-party app (API.md section 18, "Consent"). */
export interface AppConsentsTable {
  user_id: string;
  client_id: string;
  /** As granted, `openid` included. */
  scopes: string[];
  granted_at: Timestamp;
}

/**
 * An OpenID provider users may sign in with (API.md section 20). `client_secret` and
 * `apple_private_key` are sealed (SecretsAtRest); a provider has one or the other credential.
 */
export interface IdentityProvidersTable {
  id: string;
  name: string;
  issuer: string;
  client_id: string;
  client_secret: string | null;
  /** `openid` always included. */
  scopes: string[];
  button_label: string;
  link_by_verified_email: ColumnType<boolean, boolean | undefined, boolean>;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  apple_team_id: string | null;
  apple_key_id: string | null;
  apple_private_key: string | null;
  /** The provider's discovery document as last read (written as JSON text). */
  discovery: ColumnType<Record<string, unknown>, string, string>;
  discovered_at: Timestamp;
  /** When the document was last tried, read or not: what the hourly re-read claims. */
  discovery_attempted_at: Timestamp;
  version: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An identity at a provider (its `sub`), linked to one user. */
/** A sign-in with another identity provider under way (migration 0041): spent by its callback. */
export interface FederatedSignInsTable {
  id: string;
  provider_id: string;
  state_hash: string;
  nonce: string;
  code_verifier: string;
  browser_hash: string;
  authorization_query: string;
  linking_user_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The session that started a connection from the profile (migration 0042); the callback links only while it is live. */
  linking_session_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface UserIdentitiesTable {
  id: string;
  user_id: string;
  provider_id: string;
  subject: string;
  email: string | null;
  linked_at: Timestamp;
  last_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** Ed25519 keys sign access tokens (and ID tokens); RSA keys sign ID tokens only. */
export type SigningAlgorithm = 'EdDSA' | 'RS256';

export interface SigningKeysTable {
  kid: string;
  alg: SigningAlgorithm;
  public_jwk: ColumnType<Record<string, string>, string, string>;
  private_pem: string;
  status: 'active' | 'retiring';
  created_at: Timestamp;
  retires_at: Date | null;
}

export type TokenPurpose = 'password_reset' | 'email_verification';

export interface OneTimeTokensTable {
  id: string;
  user_id: string;
  purpose: TokenPurpose;
  token_hash: string;
  email: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: Timestamp;
  /** The token's value, sealed (secrets-at-rest.ts), while it is live: a resend sends it again. */
  sealed_token: string | null;
}

/** A 6-digit sign-in code sent by email (API.md section 19; migration 0030). */
export interface EmailCodesTable {
  id: string;
  /** The address as it was asked for; compared without regard to case. */
  email: string;
  /** The account that had the address when the code was made; null for a code that may create one. */
  user_id: string | null;
  /** SHA-256 of the row id and the code (email-code-repository.ts). */
  code_hash: string;
  failures: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** When it signed in, or was replaced or spent; null while it may still be used. */
  used_at: Date | null;
  /** The name and argon2 hash the create-account page was given, and the hash of the browser that gave them (0038); null otherwise, and once spent. */
  signup_name: ColumnType<string | null, string | null | undefined, null>;
  signup_password_hash: ColumnType<string | null, string | null | undefined, null>;
  signup_browser_hash: ColumnType<string | null, string | null | undefined, null>;
}

export type AccountAttemptKind = 'login_failure' | 'email_change' | 'verification_resend';

export interface AccountAttemptsTable {
  id: string;
  kind: AccountAttemptKind;
  /** A user id, or for failed logins the lower-cased email tried (known or not). */
  subject: string;
  created_at: Timestamp;
}

export interface EmailOutboxTable {
  id: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  status: 'pending' | 'sent' | 'failed';
  attempts: ColumnType<number, number | undefined, number>;
  last_error: string | null;
  next_attempt_at: Timestamp;
  claimed_until: Date | null;
  claim_token: string | null;
  created_at: Timestamp;
  sent_at: Date | null;
}

export interface StockMovementsTable {
  id: string;
  variant_id: string;
  delta: number;
  stock_after: number;
  /** Where the stock moved; `stock_after` is the stock there. */
  location_id: string;
  reason: string;
  reference: string | null;
  actor_id: string | null;
  created_at: Timestamp;
}

export interface ReservationsTable {
  id: string;
  status: 'active' | 'committed' | 'released' | 'expired';
  reference: string | null;
  expires_at: Date;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ReservationLinesTable {
  reservation_id: string;
  position: number;
  variant_id: string;
  quantity: number;
  active: ColumnType<boolean, boolean | undefined, boolean>;
}

/** A variant's stock at one location; no row is zero of both. */
export interface StockLevelsTable {
  variant_id: string;
  location_id: string;
  stock: ColumnType<number, number | undefined, number>;
  reserved: ColumnType<number, number | undefined, number>;
}

/** Where a reservation line holds its units. */
export interface ReservationAllocationsTable {
  reservation_id: string;
  position: number;
  location_id: string;
  quantity: number;
}

export interface BalanceLedgerTable {
  id: string;
  user_id: string;
  delta: number;
  balance_after: number;
  currency: string;
  reason: string;
  actor_id: string;
  created_at: Timestamp;
}

export interface IdempotencyKeysTable {
  owner_id: string;
  key: string;
  request_fingerprint: string;
  state: 'in_progress' | 'done';
  response_status: number | null;
  response_body: unknown;
  response_headers: ColumnType<Record<string, string> | null, string | null, string | null>;
  locked_until: Date;
  expires_at: Date;
  created_at: Timestamp;
}

export interface VariantsTable {
  id: string;
  product_id: string;
  sku: string;
  name: string;
  price: number;
  /** inventory/'s, as `reserved`: a new row starts at 0 (the column's default), and inventory opens it. */
  stock: ColumnType<number, number | undefined, number>;
  reserved: ColumnType<number, number | undefined, number>;
  /** The units available (stock − reserved) at the variant's inactive locations, kept by 0036's trigger and inventory/'s location changes: `available` leaves them out. */
  available_at_inactive_locations: ColumnType<number, never, never>;
  attributes: ColumnType<Record<string, string>, string, string>;
  version: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EventsTable {
  id: string;
  type: string;
  created_at: Timestamp;
  actor_id: string | null;
  /** Whose change: a user's or an API client's; null (with a null actor_id) for the service's own. */
  actor_type: 'user' | 'client' | null;
  request_id: string | null;
  subject_type: string;
  subject_id: string;
  data: ColumnType<Record<string, unknown>, string, string>;
  /** The `traceparent` of the request that recorded it (tracing on); null otherwise. */
  trace_parent: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface WebhooksTable {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  secret: string;
  version: ColumnType<number, number | undefined, number>;
  failing_since: Date | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type LocationStatus = 'active' | 'inactive';

/** A place stock is kept (API.md section 21); exactly one is the default. */
export interface LocationsTable {
  id: string;
  code: string;
  name: string;
  priority: ColumnType<number, number | undefined, number>;
  status: ColumnType<LocationStatus, LocationStatus | undefined, LocationStatus>;
  is_default: ColumnType<boolean, boolean | undefined, boolean>;
  version: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  status: DeliveryStatus;
  attempts: ColumnType<number, number | undefined, number>;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Timestamp;
  claimed_until: Date | null;
  claim_token: string | null;
  created_at: Timestamp;
  delivered_at: Date | null;
}

export interface ApiClientsTable {
  id: string;
  name: string;
  description: string | null;
  scopes: string[];
  status: 'active' | 'disabled';
  rate_limit: number | null;
  version: ColumnType<number, number | undefined, number>;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_used_at: Date | null;
  /** Moves on when the client is disabled: its tokens count only while they carry the current one. */
  token_generation: ColumnType<number, number | undefined, number>;
  deleted_at: Date | null;
  /** Set at creation only: `service` (client credentials) or an app that signs users in. */
  type: ColumnType<ClientType, ClientType | undefined, never>;
  /** An app's (1..10); a service client's are always empty. */
  redirect_uris: ColumnType<string[], string[] | undefined, string[]>;
  post_logout_redirect_uris: ColumnType<string[], string[] | undefined, string[]>;
  /** A first-party app never asks the user's consent; a service client's is false. */
  first_party: ColumnType<boolean, boolean | undefined, boolean>;
  logo_uri: ColumnType<string | null, string | null | undefined, string | null>;
  /** How an app's ID tokens are signed; null for a service client, which gets none. */
  id_token_signed_response_alg: ColumnType<IdTokenAlgorithm | null, IdTokenAlgorithm | null | undefined, IdTokenAlgorithm | null>;
}

export type ClientType = 'service' | 'confidential' | 'public';
export type IdTokenAlgorithm = 'RS256' | 'EdDSA';

export interface ApiClientSecretsTable {
  id: string;
  client_id: string;
  /** SHA-256 of the secret: 256 random bits need no slow hash. */
  secret_hash: string;
  /** The secret's first 12 characters, to recognise it. */
  prefix: string;
  created_at: Timestamp;
  expires_at: Date | null;
  last_used_at: Date | null;
  deleted_at: Date | null;
}

export type FactorType = 'totp' | 'webauthn';

export interface MfaFactorsTable {
  id: string;
  user_id: string;
  type: FactorType;
  name: string;
  /** The TOTP secret (base32), sealed with SIGNING_KEY_ENCRYPTION_KEY when it is set. */
  totp_secret: string | null;
  /** The last 30-second step whose code was accepted: a code is good once. */
  totp_last_step: ColumnType<number | null, number | null | undefined, number | null>;
  /** A passkey's credential id (base64url). */
  credential_id: string | null;
  /** A passkey's COSE public key. */
  public_key: Uint8Array | null;
  sign_count: ColumnType<number, number | undefined, number>;
  transports: string[] | null;
  /** Null until confirmed; only confirmed factors count. */
  confirmed_at: Date | null;
  created_at: Timestamp;
  last_used_at: Date | null;
}

export interface MfaRecoveryCodesTable {
  id: string;
  user_id: string;
  /** SHA-256 of the code as typed without dashes, in lower case. */
  code_hash: string;
  created_at: Timestamp;
  used_at: Date | null;
}

/** What a login's first step proved (RFC 8176): a password, or a passkey without user verification. */
/** How a login's first step was proved (RFC 8176): a password, a passkey without user verification, or a code sent by email. */
export type FirstFactor = 'pwd' | 'hwk' | 'email' | 'fed';

export interface MfaLoginTokensTable {
  id: string;
  /** SHA-256 of the `mfa_token` a login answered with. */
  token_hash: string;
  user_id: string;
  /** The user's session_version when the password was found right: a change since voids the token. */
  session_version: number;
  /** The factor the login's first step proved: `pwd` a password, `hwk` a passkey without user verification, `email` an email code. */
  first_factor: ColumnType<FirstFactor, FirstFactor | undefined, FirstFactor>;
  failures: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Date | null;
}

/** A user's wrong second-factor codes in a row and its locks (API.md section 17; migration 0021). */
export interface MfaFailureLocksTable {
  user_id: string;
  /** Wrong codes since the last right one or the last lock. */
  failures: ColumnType<number, number | undefined, number>;
  /** Locks so far: each lasts twice the one before, 15 minutes to 24 hours. */
  locks: ColumnType<number, number | undefined, number>;
  /** While in the future, every second-factor check of the user is 429. */
  locked_until: Date | null;
  updated_at: Timestamp;
}

export interface WebauthnChallengesTable {
  challenge: string;
  /** `sign_in`: a passkey sign-in's, with no user and no owner (the passkey answering it names the user). */
  purpose: 'registration' | 'authentication' | 'sign_in';
  user_id: string | null;
  /** The login (its mfa_token's row) or the session the challenge belongs to. */
  login_token_id: string | null;
  session_id: string | null;
  expires_at: Timestamp;
}

export interface ImportUploadsTable {
  upload_id: string;
  position: number;
  data: Uint8Array;
  created_at: Timestamp;
}

export type ImportStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export type ImportFormat = 'csv' | 'jsonl';

/** An import of variants (API.md section 14), and its row of the work queue. */
export interface VariantImportsTable {
  id: string;
  upload_id: string;
  status: ImportStatus;
  format: ImportFormat;
  mode: 'upsert' | 'create';
  on_error: 'reject_all' | 'skip_failed';
  dry_run: boolean;
  byte_size: number;
  rows_total: number | null;
  rows_processed: ColumnType<number, number | undefined, number>;
  created: ColumnType<number, number | undefined, number>;
  updated: ColumnType<number, number | undefined, number>;
  unchanged: ColumnType<number, number | undefined, number>;
  failed: ColumnType<number, number | undefined, number>;
  first_errors: ColumnType<{ line: number; message: string }[], string | undefined, string>;
  created_by: string;
  actor_type: 'user' | 'client';
  created_at: Timestamp;
  started_at: Date | null;
  finished_at: Date | null;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  claimed_until: Date | null;
  claim_token: string | null;
  last_error: string | null;
}

export interface VariantImportErrorsTable {
  import_id: string;
  line: number;
  error: string;
  /** The row as the file had it: CSV cells by column, or the JSON line's object (or its text). */
  fields: ColumnType<unknown, string, string>;
}

export interface Database {
  users: UsersTable;
  refresh_tokens: RefreshTokensTable;
  sessions: SessionsTable;
  signing_keys: SigningKeysTable;
  one_time_tokens: OneTimeTokensTable;
  account_attempts: AccountAttemptsTable;
  email_codes: EmailCodesTable;
  email_outbox: EmailOutboxTable;
  stock_movements: StockMovementsTable;
  reservations: ReservationsTable;
  reservation_lines: ReservationLinesTable;
  stock_levels: StockLevelsTable;
  reservation_allocations: ReservationAllocationsTable;
  balance_ledger: BalanceLedgerTable;
  idempotency_keys: IdempotencyKeysTable;
  variants: VariantsTable;
  events: EventsTable;
  webhooks: WebhooksTable;
  locations: LocationsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  api_clients: ApiClientsTable;
  mfa_factors: MfaFactorsTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_login_tokens: MfaLoginTokensTable;
  webauthn_challenges: WebauthnChallengesTable;
  mfa_failure_locks: MfaFailureLocksTable;
  api_client_secrets: ApiClientSecretsTable;
  import_uploads: ImportUploadsTable;
  variant_imports: VariantImportsTable;
  variant_import_errors: VariantImportErrorsTable;
  authorization_codes: AuthorizationCodesTable;
  app_consents: AppConsentsTable;
  identity_providers: IdentityProvidersTable;
  user_identities: UserIdentitiesTable;
  federated_sign_ins: FederatedSignInsTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type VariantRow = Selectable<VariantsTable>;
export type LedgerRow = Selectable<BalanceLedgerTable>;
export type RefreshTokenRow = Selectable<RefreshTokensTable>;
export type EventRow = Selectable<EventsTable>;
export type WebhookRow = Selectable<WebhooksTable>;
export type LocationRow = Selectable<LocationsTable>;
export type IdentityProviderRow = Selectable<IdentityProvidersTable>;
export type UserIdentityRow = Selectable<UserIdentitiesTable>;
export type FederatedSignInRow = Selectable<FederatedSignInsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type SessionRow = Selectable<SessionsTable>;
export type AuthorizationCodeRow = Selectable<AuthorizationCodesTable>;
export type AppConsentRow = Selectable<AppConsentsTable>;
export type SigningKeyRow = Selectable<SigningKeysTable>;
export type OneTimeTokenRow = Selectable<OneTimeTokensTable>;
export type EmailCodeRow = Selectable<EmailCodesTable>;
export type EmailRow = Selectable<EmailOutboxTable>;
export type ReservationRow = Selectable<ReservationsTable>;
export type ReservationLineRow = Selectable<ReservationLinesTable>;
export type StockLevelRow = Selectable<StockLevelsTable>;
export type ReservationAllocationRow = Selectable<ReservationAllocationsTable>;
export type StockMovementRow = Selectable<StockMovementsTable>;
export type ApiClientRow = Selectable<ApiClientsTable>;
export type ApiClientSecretRow = Selectable<ApiClientSecretsTable>;
export type MfaFactorRow = Selectable<MfaFactorsTable>;
export type MfaLoginTokenRow = Selectable<MfaLoginTokensTable>;
export type VariantImportRow = Selectable<VariantImportsTable>;
