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
  password_hash: string;
  /** Bumped on password change and deletion; access tokens carry it and die when it moves. */
  session_version: ColumnType<number, number | undefined, number>;
  email_verified: ColumnType<boolean, boolean | undefined, boolean>;
  version: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Date | null;
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
}

export interface SigningKeysTable {
  kid: string;
  alg: 'EdDSA';
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
  created_at: Timestamp;
  sent_at: Date | null;
}

export interface StockMovementsTable {
  id: string;
  variant_id: string;
  delta: number;
  stock_after: number;
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
  stock: number;
  reserved: ColumnType<number, number | undefined, number>;
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
  request_id: string | null;
  subject_type: string;
  subject_id: string;
  data: ColumnType<Record<string, unknown>, string, string>;
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
  created_at: Timestamp;
  delivered_at: Date | null;
}

export interface Database {
  users: UsersTable;
  refresh_tokens: RefreshTokensTable;
  sessions: SessionsTable;
  signing_keys: SigningKeysTable;
  one_time_tokens: OneTimeTokensTable;
  email_outbox: EmailOutboxTable;
  stock_movements: StockMovementsTable;
  reservations: ReservationsTable;
  reservation_lines: ReservationLinesTable;
  balance_ledger: BalanceLedgerTable;
  idempotency_keys: IdempotencyKeysTable;
  variants: VariantsTable;
  events: EventsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type VariantRow = Selectable<VariantsTable>;
export type LedgerRow = Selectable<BalanceLedgerTable>;
export type RefreshTokenRow = Selectable<RefreshTokensTable>;
export type EventRow = Selectable<EventsTable>;
export type WebhookRow = Selectable<WebhooksTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type SessionRow = Selectable<SessionsTable>;
export type SigningKeyRow = Selectable<SigningKeysTable>;
export type OneTimeTokenRow = Selectable<OneTimeTokensTable>;
export type EmailRow = Selectable<EmailOutboxTable>;
export type ReservationRow = Selectable<ReservationsTable>;
export type ReservationLineRow = Selectable<ReservationLinesTable>;
export type StockMovementRow = Selectable<StockMovementsTable>;
