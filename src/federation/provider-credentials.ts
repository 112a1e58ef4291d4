import type { FieldProblem } from '../http/errors.js';
import { appleSigningKey } from './apple-client-secret.js';

const APPLE_FIELDS = ['apple_team_id', 'apple_key_id', 'apple_private_key'] as const;

/** Which credential fields a provider holds (after a create, or after a patch): set or not. */
export interface CredentialFields {
  client_secret: boolean;
  apple_team_id: boolean;
  apple_key_id: boolean;
  apple_private_key: boolean;
}

/**
 * The rule of a provider's credential (API.md section 20 says Apple's three fields replace
 * `client_secret`): exactly one of `client_secret` or all three Apple fields. A provider with
 * neither could not authenticate the service at the token endpoint; one with both would leave
 * which one is used to chance. The problems, each naming its field; none when the rule holds.
 */
export function credentialProblems(fields: CredentialFields, applePrivateKey: string | undefined): FieldProblem[] {
  const appleSet = APPLE_FIELDS.filter((field) => fields[field]);
  const problems: FieldProblem[] = [];
  if (fields.client_secret && appleSet.length > 0) {
    problems.push({ path: '/client_secret', message: 'must not be given with apple_team_id, apple_key_id and apple_private_key: a provider has one credential' });
  } else if (!fields.client_secret && appleSet.length === 0) {
    problems.push({ path: '/client_secret', message: 'is required, unless apple_team_id, apple_key_id and apple_private_key are given (Apple)' });
  } else if (appleSet.length > 0 && appleSet.length < APPLE_FIELDS.length) {
    for (const field of APPLE_FIELDS.filter((candidate) => !fields[candidate])) problems.push({ path: `/${field}`, message: 'is required with the other Apple fields' });
  }
  if (applePrivateKey !== undefined && !appleSigningKey(applePrivateKey)) {
    problems.push({ path: '/apple_private_key', message: 'must be the PEM of a P-256 private key (the .p8 file Apple gives)' });
  }
  return problems;
}

/** `openid` first (always asked for), then the others as given, each once. */
export const withOpenid = (scopes: readonly string[]): string[] => [...new Set(['openid', ...scopes])];
