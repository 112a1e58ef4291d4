import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database, IdentityProviderRow } from '../db/tables.js';
import { changedFields, record, type EventContext } from '../events/event-recorder.js';
import type { EventType } from '../events/event-types.js';
import { AppError, type FieldProblem } from '../http/errors.js';
import { lockForWrite } from '../http/preconditions.js';
import type { SecretsAtRest } from '../sessions/secrets-at-rest.js';
import { credentialProblems, withOpenid } from './provider-credentials.js';
import { readDiscovery } from './provider-discovery.js';
import { claimProviderDueForDiscovery, deleteProvider, insertProvider, lockProvider, storeRereadDiscovery, updateProvider } from './provider-repository.js';
import { DEFAULT_PROVIDER_SCOPES, type CreateIdentityProviderInput, type IdentityProviderPatch } from './provider-schemas.js';
import { countIdentitiesOfProvider } from './identity-repository.js';

const FIELDS = ['name', 'issuer', 'client_id', 'scopes', 'button_label', 'link_by_verified_email', 'enabled', 'apple_team_id', 'apple_key_id'] as const;
type Settings = Pick<IdentityProviderRow, (typeof FIELDS)[number]>;

/** A provider as its events show it: never a secret (client_secret, apple_private_key) nor the discovery document. */
const settingsOf = (provider: Settings): Settings => Object.fromEntries(FIELDS.map((field) => [field, provider[field]])) as Settings;
const providerEvent = (type: EventType, id: string, data: Record<string, unknown>) => ({ type, subjectType: 'identity_provider' as const, subjectId: id, data });
const refused = (problems: FieldProblem[]) => new AppError('validation_failed', 'The request does not match the schema.', problems);

/** The discovery document of an issuer as a save read it (provider-discovery.ts), before the save's transaction. */
export interface ReadDocument {
  document: Record<string, unknown>;
  readAt: Date;
}

/**
 * The checks of a new provider that need no row (the credential rule, the Apple key), then its
 * discovery document: what a create does before its transaction, which never waits on the
 * provider. 400 `validation_failed` or `invalid_provider`.
 */
export async function prepareNewProvider(input: CreateIdentityProviderInput): Promise<ReadDocument> {
  const problems = credentialProblems(
    { client_secret: input.client_secret !== undefined, apple_team_id: input.apple_team_id !== undefined, apple_key_id: input.apple_key_id !== undefined, apple_private_key: input.apple_private_key !== undefined },
    input.apple_private_key,
  );
  if (problems.length > 0) throw refused(problems);
  return { document: await readDiscovery(input.issuer, input.client_id), readAt: new Date() };
}

/** A patch's `issuer`, read again whenever it is sent; undefined when the patch leaves it out. */
export async function prepareProviderPatch(patch: IdentityProviderPatch, clientIdSent: string | undefined): Promise<ReadDocument | undefined> {
  if (patch.apple_private_key) {
    const problems = credentialProblems({ client_secret: false, apple_team_id: true, apple_key_id: true, apple_private_key: true }, patch.apple_private_key);
    if (problems.length > 0) throw refused(problems);
  }
  if (patch.issuer === undefined) return undefined;
  // The client id only names the client of openid-client's configuration; discovery sends it nowhere.
  return { document: await readDiscovery(patch.issuer, clientIdSent ?? 'discovery'), readAt: new Date() };
}

/** A new provider, its secrets sealed; records `identity_provider.created` (without them). */
export async function createProvider(trx: Transaction<Database>, input: CreateIdentityProviderInput, read: ReadDocument, secrets: SecretsAtRest, context: EventContext): Promise<IdentityProviderRow> {
  const now = new Date();
  const provider = await insertProvider(trx, {
    id: randomUUID(),
    name: input.name,
    issuer: input.issuer,
    client_id: input.client_id,
    client_secret: input.client_secret === undefined ? null : secrets.seal(input.client_secret),
    scopes: withOpenid(input.scopes ?? DEFAULT_PROVIDER_SCOPES),
    button_label: input.button_label,
    link_by_verified_email: input.link_by_verified_email ?? false,
    enabled: input.enabled ?? true,
    apple_team_id: input.apple_team_id ?? null,
    apple_key_id: input.apple_key_id ?? null,
    apple_private_key: input.apple_private_key === undefined ? null : secrets.seal(input.apple_private_key),
    discovery: JSON.stringify(read.document),
    discovered_at: read.readAt,
    discovery_attempted_at: read.readAt,
    created_at: now,
    updated_at: now,
  });
  await record(trx, providerEvent('identity_provider.created', provider.id, { after: settingsOf(provider) }), context);
  return provider;
}

/**
 * A merge patch of a provider. After it the credential rule must hold (provider-credentials.ts).
 * A secret sent is a write even when it is the same one (a rotation): `version` moves and the
 * event says `credentials_changed` without saying what. A patch that changes nothing writes
 * nothing, but an `issuer` sent keeps the document its save read.
 */
export async function patchProvider(
  trx: Transaction<Database>,
  id: string,
  ifMatch: string | undefined,
  patch: IdentityProviderPatch,
  read: ReadDocument | undefined,
  secrets: SecretsAtRest,
  context: EventContext,
): Promise<IdentityProviderRow> {
  const current = await lockForWrite(() => lockProvider(trx, id), ifMatch, 'identity provider');
  const holds = (field: 'client_secret' | 'apple_team_id' | 'apple_key_id' | 'apple_private_key') => (patch[field] === undefined ? current[field] !== null : patch[field] !== null);
  const problems = credentialProblems(
    { client_secret: holds('client_secret'), apple_team_id: holds('apple_team_id'), apple_key_id: holds('apple_key_id'), apple_private_key: holds('apple_private_key') },
    undefined,
  );
  if (problems.length > 0) throw refused(problems);
  const next: Settings = {
    ...settingsOf(current),
    ...Object.fromEntries(FIELDS.filter((field) => patch[field] !== undefined).map((field) => [field, patch[field]])),
    ...(patch.scopes ? { scopes: withOpenid(patch.scopes) } : {}),
  };
  const changed = changedFields(settingsOf(current), next, [...FIELDS]);
  const credentialsChanged = patch.client_secret !== undefined || patch.apple_private_key !== undefined;
  const discovery = read ? { discovery: JSON.stringify(read.document), discovered_at: read.readAt, discovery_attempted_at: read.readAt } : {};
  if (Object.keys(changed.after).length === 0 && !credentialsChanged) {
    if (read) await storeRereadDiscovery(trx, id, current.issuer, read.document);
    return current;
  }
  const sealedOrNull = (value: string | null | undefined) => (value === undefined ? undefined : value === null ? null : secrets.seal(value));
  const updated = await updateProvider(trx, id, {
    ...changed.after,
    ...(patch.client_secret !== undefined ? { client_secret: sealedOrNull(patch.client_secret) } : {}),
    ...(patch.apple_private_key !== undefined ? { apple_private_key: sealedOrNull(patch.apple_private_key) } : {}),
    ...discovery,
  });
  await record(trx, providerEvent('identity_provider.updated', id, { ...changed, credentials_changed: credentialsChanged }), context);
  return updated;
}

/** Deletes a provider; its identities go with it (the foreign key's cascade), counted in its event. */
export async function removeProvider(trx: Transaction<Database>, id: string, ifMatch: string | undefined, context: EventContext): Promise<void> {
  const current = await lockForWrite(() => lockProvider(trx, id), ifMatch, 'identity provider');
  const identities = await countIdentitiesOfProvider(trx, id);
  await deleteProvider(trx, id);
  await record(trx, providerEvent('identity_provider.deleted', id, { before: settingsOf(current), identities_removed: identities }), context);
}

/** How often each enabled provider's discovery document is read again (API.md section 20: at most once an hour). */
export const DISCOVERY_REREAD_MS = 60 * 60 * 1000;

/**
 * One pass of the hourly re-read: each enabled provider not tried within the hour is claimed
 * (provider-repository.ts: one instance of many per provider) and its document read again,
 * outside any transaction. A document read is kept; a failure keeps the last one and is logged
 * as a warning (it names the provider and what failed, never a secret). The number read.
 */
export async function rereadDueDiscoveries(db: Kysely<Database>, log: { warn(object: object, message: string): void }): Promise<number> {
  let read = 0;
  for (;;) {
    const due = await claimProviderDueForDiscovery(db, new Date(Date.now() - DISCOVERY_REREAD_MS));
    if (!due) return read;
    try {
      await storeRereadDiscovery(db, due.id, due.issuer, await readDiscovery(due.issuer, due.client_id));
      read += 1;
    } catch (error) {
      const detail = error instanceof AppError ? (error.errors?.[0]?.message ?? error.detail) : 'the document could not be read';
      log.warn({ provider_id: due.id, issuer: due.issuer, problem: detail }, "an identity provider's discovery document could not be read again; the last one is kept");
    }
  }
}
