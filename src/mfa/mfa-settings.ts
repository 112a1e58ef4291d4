import type { Config } from '../config.js';
import type { Role } from '../db/tables.js';
import type { SecretsAtRest } from '../sessions/secrets-at-rest.js';
import type { RelyingParty } from './passkeys.js';

/** What the second factors need of the configuration, built once by the plugin. */
export interface MfaSettings {
  /** WEBAUTHN_RP_ID, PUBLIC_URL's origin, MFA_ISSUER. */
  party: RelyingParty;
  /** The TOTP secrets, sealed with SIGNING_KEY_ENCRYPTION_KEY when it is set. */
  secrets: SecretsAtRest;
  /** MFA_REQUIRED_ROLES. */
  requiredRoles: readonly Role[];
  /** MFA_FAILURE_LIMIT: wrong second-factor codes in a row that lock the user's checks. */
  failureLimit: number;
}

/** The settings from the configuration and the service's sealing of secrets (the mfa plugin's, and the hosted pages' second step). */
export const mfaSettingsOf = (config: Config, secrets: SecretsAtRest): MfaSettings => ({
  party: { id: config.webauthnRpId, origin: config.webauthnOrigin, name: config.mfaIssuer },
  secrets,
  requiredRoles: config.mfaRequiredRoles,
  failureLimit: config.mfaFailureLimit,
});
