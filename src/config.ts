import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import dotenv from 'dotenv';
import { envSchema } from 'env-schema';
import type { PoolMode } from './db/database.js';
import type { Role } from './db/tables.js';

/** An issuer browsers and apps may trust with codes: https, or plain http on the developer's own machine (RFC 8252). */
function servesAuthorization(issuer: string): boolean {
  try {
    const url = new URL(issuer);
    // The loopback hosts of http/loopback-hosts.ts, which config (ground below http) cannot import.
    return url.protocol === 'https:' || (url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname));
  } catch {
    return false;
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export const EnvironmentSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  DATABASE_STATEMENT_TIMEOUT: Type.Integer({ minimum: 100, maximum: 600000, default: 5000 }),
  DATABASE_POOL_MODE: Type.String({ enum: ['session', 'transaction'], default: 'session' }),
  REQUEST_TIMEOUT: Type.Integer({ minimum: 100, maximum: 3600000, default: 30000 }),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  JWT_ISSUER: Type.Optional(Type.String({ minLength: 1 })),
  JWT_AUDIENCE: Type.String({ minLength: 1, default: 'shop-accounts-api' }),
  ACCESS_TOKEN_TTL: Type.Integer({ minimum: 1, maximum: 86400, default: 900 }),
  REFRESH_TOKEN_TTL: Type.Integer({ minimum: 60, maximum: 31536000, default: 2592000 }),
  REFRESH_REUSE_INTERVAL: Type.Integer({ minimum: 0, maximum: 300, default: 10 }),
  SIGNING_KEY_ROTATION_DAYS: Type.Integer({ minimum: 0, maximum: 3650, default: 90 }),
  ADMIN_EMAIL: Type.Optional(Type.String({ pattern: '^[^\\s@]+@[^\\s@]+$', minLength: 3, maxLength: 254 })),
  ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 8, maxLength: 128 })),
  ALLOW_REGISTRATION: Type.Boolean({ default: true }),
  CURRENCY: Type.String({ pattern: '^[A-Z]{3}$', default: 'USD' }),
  LOGIN_RATE_LIMIT: Type.Integer({ minimum: 1, default: 10 }),
  API_RATE_LIMIT: Type.Integer({ minimum: 1, default: 1000 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  CORS_ORIGINS: Type.Optional(Type.String({ minLength: 1 })),
  WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  LOG_LEVEL: Type.String({ enum: LOG_LEVELS, default: 'info' }),
  WEBHOOK_ALLOW_HTTP: Type.Boolean({ default: false }),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Type.Boolean({ default: false }),
  EVENT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36500, default: 365 }),
  DELETED_USER_RETENTION_DAYS: Type.Integer({ minimum: 0, maximum: 36500, default: 30 }),
  SESSION_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36500, default: 90 }),
  IMPORT_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 1073741824, default: 52428800 }),
  IMPORT_MAX_ACTIVE: Type.Integer({ minimum: 1, maximum: 1000, default: 4 }),
  IMPORT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36500, default: 30 }),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  MAIL_FROM: Type.String({ minLength: 3, default: 'no-reply@localhost' }),
  PASSWORD_RESET_URL: Type.Optional(Type.String({ pattern: '\\{token\\}' })),
  EMAIL_VERIFICATION_URL: Type.Optional(Type.String({ pattern: '\\{token\\}' })),
  PASSWORD_RESET_TTL: Type.Integer({ minimum: 60, maximum: 604800, default: 3600 }),
  EMAIL_VERIFICATION_TTL: Type.Integer({ minimum: 60, maximum: 2592000, default: 86400 }),
  EMAIL_CODE_TTL: Type.Integer({ minimum: 60, maximum: 3600, default: 600 }),
  EMAIL_CODE_SIGNUP: Type.Boolean({ default: true }),
  LOGIN_ACCOUNT_FAILURE_LIMIT: Type.Integer({ minimum: 1, maximum: 1000000, default: 20 }),
  SIGNING_KEY_ENCRYPTION_KEY: Type.Optional(Type.String({ minLength: 1 })),
  MFA_REQUIRED_ROLES: Type.Optional(Type.String({ pattern: '^\\s*(user|manager|admin)\\s*(,\\s*(user|manager|admin)\\s*)*$' })),
  MFA_STEP_UP_MAX_AGE: Type.Integer({ minimum: 1, maximum: 86400, default: 900 }),
  MFA_FAILURE_LIMIT: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  WEBAUTHN_RP_ID: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9.-]+$', maxLength: 253 })),
  MFA_ISSUER: Type.String({ minLength: 1, maxLength: 64, default: 'Shop' }),
  SIGNIN_SESSION_TTL: Type.Integer({ minimum: 60, maximum: 31536000, default: 2592000 }),
  SIGNIN_BRAND_NAME: Type.String({ minLength: 1, maxLength: 64, default: 'Shop' }),
  SIGNIN_LOGO_URL: Type.Optional(Type.String({ pattern: '^https://[^\\s]+$', maxLength: 2000 })),
  SIGNIN_DEFAULT_LOCALE: Type.String({ enum: ['en', 'de'], default: 'en' }),
});

type Environment = Static<typeof EnvironmentSchema>;

export interface Config {
  port: number;
  host: string;
  /** How clients reach the service: the OpenAPI `servers` entry and the base of links in emails. */
  publicUrl: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  databaseStatementTimeoutMs: number;
  /** `transaction`: behind a pooler in transaction mode, nothing is kept on a connection (API.md section 17). */
  databasePoolMode: PoolMode;
  requestTimeoutMs: number;
  /** Whose X-Forwarded-For to believe: none (false), all (true), a hop count, or addresses/CIDRs. */
  trustProxy: boolean | number | string;
  dataDir: string;
  /** Set: HS256 with this secret. Unset: Ed25519 keys kept in the database. */
  jwtSecret: string | undefined;
  signingKeyRotationDays: number;
  jwtIssuer: string;
  /**
   * Whether the authorization server of API.md section 18 answers (`/oauth/…`, the code and
   * refresh grants, OpenID discovery): only for an `https` issuer, or `http` on a loopback host.
   */
  authorizationServer: boolean;
  jwtAudience: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  refreshReuseIntervalSeconds: number;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  allowRegistration: boolean;
  currency: string;
  loginRateLimit: number;
  apiRateLimit: number;
  redisUrl: string | undefined;
  /** Set: GET /metrics needs `Authorization: Bearer <it>`. */
  metricsToken: string | undefined;
  corsOrigins: string[] | undefined;
  workers: number;
  logLevel: string;
  /** Webhook URLs may be http:// (else only https://). */
  webhookAllowHttp: boolean;
  /** Webhook hosts may resolve to loopback, private, link-local or unspecified addresses. */
  webhookAllowPrivateNetworks: boolean;
  eventRetentionDays: number;
  /** Deleted users are erased this many days after their deletion; 0: never. */
  deletedUserRetentionDays: number;
  /** Ended and expired sessions are purged this many days after they end. */
  sessionRetentionDays: number;
  /** The largest import upload, in bytes. */
  importMaxBytes: number;
  /** Imports pending or running at a time, across every instance; another upload gets 429. */
  importMaxActive: number;
  /** Finished imports and their failed rows are purged this many days after they finish. */
  importRetentionDays: number;
  smtpUrl: string | undefined;
  mailFrom: string;
  /** Link templates with `{token}`. */
  passwordResetUrl: string;
  emailVerificationUrl: string;
  passwordResetTtlSeconds: number;
  emailVerificationTtlSeconds: number;
  /** Seconds an email sign-in code lives (API.md section 19). */
  emailCodeTtlSeconds: number;
  /** An email code for an address no account has creates one (when registration is open too). */
  emailCodeSignup: boolean;
  /** Failed logins an hour per account, from any address, before its logins get 429. */
  loginAccountFailureLimit: number;
  /** Set: private signing keys, live verification links and TOTP secrets are stored sealed with it (AES-256-GCM). */
  signingKeyEncryptionKey: Buffer | undefined;
  /** Roles that must have a second factor (until they do, only enrolment is open to them). */
  mfaRequiredRoles: Role[];
  /** How recently a session's second factor must have been verified for a step-up action. */
  mfaStepUpMaxAgeSeconds: number;
  /** Wrong second-factor codes in a row (logins and step-ups alike) that lock a user's second-factor checks. */
  mfaFailureLimit: number;
  /** The WebAuthn relying party: its id (a host name) and the origin passkeys are used from. */
  webauthnRpId: string;
  webauthnOrigin: string;
  /** The name authenticator apps and passkey prompts show for the service. */
  mfaIssuer: string;
  /** Seconds a hosted pages' sign-in session lives from the last sign-in (API.md section 18). */
  signinSessionTtlSeconds: number;
  /** The name and (an https URL) the logo the hosted pages show. */
  signinBrandName: string;
  signinLogoUrl: string | undefined;
  /** The hosted pages' language when neither ui_locales nor Accept-Language names one they are written in. */
  signinDefaultLocale: 'en' | 'de';
}

export class ConfigError extends Error {}

/** Validates the environment; throws a ConfigError whose message names the variable at fault. */
export function parseEnvironment(environment: Record<string, string | undefined>): Environment {
  const defined = Object.fromEntries(
    Object.entries(environment).filter(([, value]) => value !== undefined && value !== ''),
  );
  try {
    return envSchema<Environment>({ schema: EnvironmentSchema, data: defined, env: false, dotenv: false });
  } catch (error) {
    const message = (error as Error).message.replace(/env\//g, '');
    const allowed = /^LOG_LEVEL must be equal to one of the allowed values/.test(message)
      ? `LOG_LEVEL must be one of: ${LOG_LEVELS.join(', ')}`
      : message;
    throw new ConfigError(`invalid configuration: ${allowed}`);
  }
}

function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

/** Builds the runtime configuration from the validated environment. */
export function buildConfig(environment: Environment): Config {
  const dataDir = path.resolve(environment.DATA_DIR);
  const jwtSecret = environment.JWT_SECRET;
  const host = environment.HOST.includes(':') ? `[${environment.HOST}]` : environment.HOST;
  const publicUrl = (environment.PUBLIC_URL ?? `http://${host}:${environment.PORT}`).replace(/\/+$/, '');
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret) < 32) {
    throw new ConfigError('invalid configuration: JWT_SECRET must be at least 32 bytes');
  }
  if (environment.SIGNIN_LOGO_URL !== undefined && !URL.canParse(environment.SIGNIN_LOGO_URL)) {
    throw new ConfigError('invalid configuration: SIGNIN_LOGO_URL must be an https URL');
  }
  const encryptionKey = environment.SIGNING_KEY_ENCRYPTION_KEY;
  const signingKeyEncryptionKey = encryptionKey === undefined ? undefined : Buffer.from(encryptionKey, 'base64');
  if (encryptionKey !== undefined && (!/^[A-Za-z0-9+/]+={0,2}$/.test(encryptionKey) || signingKeyEncryptionKey!.length !== 32)) {
    throw new ConfigError('invalid configuration: SIGNING_KEY_ENCRYPTION_KEY must be the base64 of 32 bytes (openssl rand -base64 32)');
  }
  return {
    port: environment.PORT,
    host: environment.HOST,
    publicUrl,
    databaseUrl: environment.DATABASE_URL,
    databasePoolSize: environment.DATABASE_POOL_SIZE,
    databaseStatementTimeoutMs: environment.DATABASE_STATEMENT_TIMEOUT,
    databasePoolMode: environment.DATABASE_POOL_MODE as PoolMode,
    requestTimeoutMs: environment.REQUEST_TIMEOUT,
    trustProxy: parseTrustProxy(environment.TRUST_PROXY),
    dataDir,
    jwtSecret,
    signingKeyRotationDays: environment.SIGNING_KEY_ROTATION_DAYS,
    // v4: the issuer of the authorization server is where it is reached (OpenID Connect Discovery
    // requires the two to match), so by default it is PUBLIC_URL.
    jwtIssuer: environment.JWT_ISSUER ?? publicUrl,
    authorizationServer: servesAuthorization(environment.JWT_ISSUER ?? publicUrl),
    jwtAudience: environment.JWT_AUDIENCE,
    accessTokenTtlSeconds: environment.ACCESS_TOKEN_TTL,
    refreshTokenTtlSeconds: environment.REFRESH_TOKEN_TTL,
    refreshReuseIntervalSeconds: environment.REFRESH_REUSE_INTERVAL,
    adminEmail: environment.ADMIN_EMAIL,
    adminPassword: environment.ADMIN_PASSWORD,
    allowRegistration: environment.ALLOW_REGISTRATION,
    currency: environment.CURRENCY,
    loginRateLimit: environment.LOGIN_RATE_LIMIT,
    apiRateLimit: environment.API_RATE_LIMIT,
    redisUrl: environment.REDIS_URL,
    metricsToken: environment.METRICS_TOKEN,
    corsOrigins: environment.CORS_ORIGINS?.split(',').map((origin) => origin.trim()).filter(Boolean),
    workers: environment.WORKERS,
    logLevel: environment.LOG_LEVEL,
    webhookAllowHttp: environment.WEBHOOK_ALLOW_HTTP,
    webhookAllowPrivateNetworks: environment.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    eventRetentionDays: environment.EVENT_RETENTION_DAYS,
    deletedUserRetentionDays: environment.DELETED_USER_RETENTION_DAYS,
    sessionRetentionDays: environment.SESSION_RETENTION_DAYS,
    importMaxBytes: environment.IMPORT_MAX_BYTES,
    importMaxActive: environment.IMPORT_MAX_ACTIVE,
    importRetentionDays: environment.IMPORT_RETENTION_DAYS,
    smtpUrl: environment.SMTP_URL,
    mailFrom: environment.MAIL_FROM,
    passwordResetUrl: environment.PASSWORD_RESET_URL ?? `${publicUrl}/admin/#/reset-password?token={token}`,
    emailVerificationUrl: environment.EMAIL_VERIFICATION_URL ?? `${publicUrl}/admin/#/verify-email?token={token}`,
    passwordResetTtlSeconds: environment.PASSWORD_RESET_TTL,
    emailVerificationTtlSeconds: environment.EMAIL_VERIFICATION_TTL,
    emailCodeTtlSeconds: environment.EMAIL_CODE_TTL,
    emailCodeSignup: environment.EMAIL_CODE_SIGNUP,
    loginAccountFailureLimit: environment.LOGIN_ACCOUNT_FAILURE_LIMIT,
    signingKeyEncryptionKey,
    mfaRequiredRoles: [...new Set((environment.MFA_REQUIRED_ROLES ?? '').split(',').map((role) => role.trim()).filter(Boolean))] as Role[],
    mfaStepUpMaxAgeSeconds: environment.MFA_STEP_UP_MAX_AGE,
    mfaFailureLimit: environment.MFA_FAILURE_LIMIT,
    webauthnRpId: environment.WEBAUTHN_RP_ID ?? new URL(publicUrl).hostname.replace(/^\[|\]$/g, ''),
    webauthnOrigin: new URL(publicUrl).origin,
    mfaIssuer: environment.MFA_ISSUER,
    signinSessionTtlSeconds: environment.SIGNIN_SESSION_TTL,
    signinBrandName: environment.SIGNIN_BRAND_NAME,
    signinLogoUrl: environment.SIGNIN_LOGO_URL,
    signinDefaultLocale: environment.SIGNIN_DEFAULT_LOCALE as 'en' | 'de',
  };
}

/** Reads `.env` when present (real environment variables win), then validates. */
export function loadConfig(environment: Record<string, string | undefined> = process.env): Config {
  dotenv.config({ quiet: true });
  return buildConfig(parseEnvironment(environment));
}
