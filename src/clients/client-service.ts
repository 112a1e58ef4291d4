import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { ApiClientRow, ApiClientSecretRow, Database } from '../db/tables.js';
import { changedFields, record, type EventContext } from '../events/event-recorder.js';
import type { EventType } from '../events/event-types.js';
import { AppError, notFound } from '../http/errors.js';
import { mergePatch } from '../http/merge-patch.js';
import { lockForWrite } from '../http/preconditions.js';
import { hashClientSecret, newClientSecret, PREFIX_LENGTH } from '../sessions/client-secrets.js';
import { endSessionsOfApp } from '../sessions/session-service.js';
import { clientById, deleteSecrets, expireOtherSecrets, insertClient, insertSecret, lockClient, updateClient } from './client-repository.js';
import { APP_FIELDS, type ClientPatch, type CreateClientInput } from './client-schemas.js';
import { assertCreatable, assertPatchable } from './client-type-rules.js';

/** For the composition root, which hands it to the sessions plugin: the admission notes a client's use. */
export { noteClientUsed } from './client-repository.js';
/** For the authorization server's client authentication (oauth/client-authentication.ts): a secret's client, a public app by id. */
export { findUndeletedClient, findUsableSecret } from './client-repository.js';

/** A client that is not deleted, by id, for a request with no caller of its own (the authorization endpoint names its app). */
export async function findClient(db: Kysely<Database>, id: string): Promise<ApiClientRow | undefined> {
  return (await clientById.alone(db, [id]))[0];
}

/** Roll a secret: the others keep working for a day unless said otherwise. */
export const DEFAULT_OVERLAP_SECONDS = 86_400;

/** The settings every client has (as in v3), then an app's. */
const FIELDS = ['name', 'description', 'scopes', 'status', 'rate_limit', ...APP_FIELDS] as const;
/** What a client's events show of it: every setting (a service client's app fields at their empty values), never a secret. */
const settingsOf = (client: ApiClientRow) => ({
  name: client.name,
  description: client.description,
  type: client.type,
  scopes: client.scopes,
  status: client.status,
  rate_limit: client.rate_limit,
  redirect_uris: client.redirect_uris,
  post_logout_redirect_uris: client.post_logout_redirect_uris,
  first_party: client.first_party,
  logo_uri: client.logo_uri,
  id_token_signed_response_alg: client.id_token_signed_response_alg,
});
const clientEvent = (type: EventType, id: string, data: Record<string, unknown>) => ({ type, subjectType: 'client' as const, subjectId: id, data });

/** A new secret for a client; its value is returned once, only its hash kept. */
async function addSecret(trx: Transaction<Database>, clientId: string): Promise<{ row: ApiClientSecretRow; value: string }> {
  const value = newClientSecret();
  const row = await insertSecret(trx, clientId, { hash: hashClientSecret(value), prefix: value.slice(0, PREFIX_LENGTH) });
  return { row, value };
}

/**
 * A new client and its first secret (part of `client.created`: no event of its own). A public
 * client has no secret: it could not keep one (a single-page or mobile app).
 */
export async function createClient(trx: Transaction<Database>, input: CreateClientInput, context: EventContext) {
  assertCreatable(input);
  const type = input.type ?? 'service';
  const isApp = type !== 'service';
  const now = new Date();
  const client = await insertClient(trx, {
    id: randomUUID(),
    name: input.name,
    description: input.description ?? null,
    type,
    scopes: input.scopes,
    status: 'active',
    rate_limit: input.rate_limit ?? null,
    redirect_uris: input.redirect_uris ?? [],
    post_logout_redirect_uris: input.post_logout_redirect_uris ?? [],
    first_party: input.first_party ?? false,
    logo_uri: input.logo_uri ?? null,
    id_token_signed_response_alg: isApp ? (input.id_token_signed_response_alg ?? 'RS256') : null,
    created_by: context.actorId!,
    created_at: now,
    updated_at: now,
  });
  const secret = type === 'public' ? undefined : await addSecret(trx, client.id);
  const firstKey = secret ? { first_key: { id: secret.row.id, prefix: secret.row.prefix } } : {};
  await record(trx, clientEvent('client.created', client.id, { after: settingsOf(client), ...firstKey }), context);
  return { client, secret };
}

/**
 * A merge patch of a client. Disabling it refuses its secrets and tokens from the next request,
 * and ends every session an app holds for its users; the tokens issued before stay refused when
 * it is enabled again. A patch that changes nothing
 * writes nothing (the version stays).
 */
export async function patchClient(trx: Transaction<Database>, id: string, ifMatch: string | undefined, patch: ClientPatch, context: EventContext): Promise<ApiClientRow> {
  // The type's rules before If-Match: a refused body is 400 whatever the tag (a stale one too).
  const lockAndCheck = async () => {
    const row = await lockClient(trx, id);
    if (row) assertPatchable(row.type, patch);
    return row;
  };
  const current = await lockForWrite(lockAndCheck, ifMatch, 'client');
  const next = mergePatch(settingsOf(current), patch) as ReturnType<typeof settingsOf>;
  const change = {
    name: next.name,
    description: next.description ?? null,
    scopes: next.scopes,
    status: next.status,
    rate_limit: next.rate_limit ?? null,
    redirect_uris: next.redirect_uris,
    // `null` (removed by the merge) sets an app's optional field to its default; a service client may not send them.
    post_logout_redirect_uris: next.post_logout_redirect_uris ?? [],
    first_party: next.first_party ?? false,
    logo_uri: next.logo_uri ?? null,
    id_token_signed_response_alg: current.type === 'service' ? null : (next.id_token_signed_response_alg ?? 'RS256'),
  };
  const changed = changedFields(settingsOf(current), { ...change, type: current.type }, [...FIELDS]);
  if (Object.keys(changed.after).length === 0) return current;
  const disabling = current.status === 'active' && change.status === 'disabled';
  // Tokens carry the generation they were issued in: a disabling ends every token issued so far,
  // and the tokens issued after the client is enabled again carry the next one (the row is locked).
  const updated = await updateClient(trx, id, { ...change, ...(disabling ? { token_generation: current.token_generation + 1 } : {}) });
  // An app's tokens act for users in sessions: disabling it ends them, so enabling it again brings none back.
  if (disabling && current.type !== 'service') await endSessionsOfApp(trx, id);
  await record(trx, clientEvent('client.updated', id, changed), context);
  return updated;
}

/** Deletes a client: it and its secrets and tokens are refused from the next request. */
export async function deleteClient(trx: Transaction<Database>, id: string, ifMatch: string | undefined, context: EventContext): Promise<void> {
  const current = await lockForWrite(() => lockClient(trx, id), ifMatch, 'client');
  await deleteSecrets(trx, id);
  await updateClient(trx, id, { deleted_at: new Date() });
  if (current.type !== 'service') await endSessionsOfApp(trx, id);
  await record(trx, clientEvent('client.deleted', id, { before: settingsOf(current) }), context);
}

/**
 * A new secret for a client, a roll with overlap: every other secret that would live longer now
 * expires `expireOthersIn` seconds from now (0: at once).
 */
export async function rollSecret(trx: Transaction<Database>, clientId: string, expireOthersIn: number, context: EventContext) {
  const client = await lockClient(trx, clientId);
  if (!client) throw notFound('client');
  if (client.type === 'public') throw new AppError('client_type', 'A public client has no secrets: it could not keep one.');
  const secret = await addSecret(trx, clientId);
  await expireOtherSecrets(trx, clientId, secret.row.id, expireOthersIn);
  await updateClient(trx, clientId, {});
  await record(trx, clientEvent('client.secret_created', clientId, { key: { id: secret.row.id, prefix: secret.row.prefix }, others_expire_in: expireOthersIn }), context);
  return secret;
}

/** Deletes one secret of a client: it stops working at once. */
export async function deleteSecret(trx: Transaction<Database>, clientId: string, secretId: string, context: EventContext): Promise<void> {
  const client = await lockClient(trx, clientId);
  const [deleted] = client ? await deleteSecrets(trx, clientId, secretId) : [];
  if (!deleted) throw notFound('secret');
  await updateClient(trx, clientId, {});
  await record(trx, clientEvent('client.secret_deleted', clientId, { key: { id: deleted.id, prefix: deleted.prefix } }), context);
}
