import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { ApiClientRow, ApiClientSecretRow, Database } from '../db/tables.js';
import { changedFields, record, type EventContext } from '../events/event-recorder.js';
import type { EventType } from '../events/event-types.js';
import { notFound } from '../http/errors.js';
import { mergePatch } from '../http/merge-patch.js';
import { lockForWrite } from '../http/preconditions.js';
import { hashClientSecret, newClientSecret, PREFIX_LENGTH } from '../sessions/client-secrets.js';
import { deleteSecrets, expireOtherSecrets, insertClient, insertSecret, lockClient, updateClient } from './client-repository.js';
import type { ClientPatch, CreateClientInput } from './client-schemas.js';

/** For the composition root, which hands it to the sessions plugin: the admission notes a client's use. */
export { noteClientUsed } from './client-repository.js';

/** Roll a secret: the others keep working for a day unless said otherwise. */
export const DEFAULT_OVERLAP_SECONDS = 86_400;

const FIELDS = ['name', 'description', 'scopes', 'status', 'rate_limit'] as const;
const settingsOf = (client: ApiClientRow) => ({ name: client.name, description: client.description, scopes: client.scopes, status: client.status, rate_limit: client.rate_limit });
const clientEvent = (type: EventType, id: string, data: Record<string, unknown>) => ({ type, subjectType: 'client' as const, subjectId: id, data });

/** A new secret for a client; its value is returned once, only its hash kept. */
async function addSecret(trx: Transaction<Database>, clientId: string): Promise<{ row: ApiClientSecretRow; value: string }> {
  const value = newClientSecret();
  const row = await insertSecret(trx, clientId, { hash: hashClientSecret(value), prefix: value.slice(0, PREFIX_LENGTH) });
  return { row, value };
}

/** A new client and its first secret (part of `client.created`: no event of its own). */
export async function createClient(trx: Transaction<Database>, input: CreateClientInput, context: EventContext) {
  const now = new Date();
  const client = await insertClient(trx, {
    id: randomUUID(),
    name: input.name,
    description: input.description ?? null,
    scopes: input.scopes,
    status: 'active',
    rate_limit: input.rate_limit ?? null,
    created_by: context.actorId!,
    created_at: now,
    updated_at: now,
  });
  const secret = await addSecret(trx, client.id);
  await record(trx, clientEvent('client.created', client.id, { after: settingsOf(client), first_key: { id: secret.row.id, prefix: secret.row.prefix } }), context);
  return { client, secret };
}

/**
 * A merge patch of a client. Disabling it refuses its secrets and tokens from the next request;
 * the tokens issued before stay refused when it is enabled again. A patch that changes nothing
 * writes nothing (the version stays).
 */
export async function patchClient(trx: Transaction<Database>, id: string, ifMatch: string | undefined, patch: ClientPatch, context: EventContext): Promise<ApiClientRow> {
  const current = await lockForWrite(() => lockClient(trx, id), ifMatch, 'client');
  const next = mergePatch(settingsOf(current), patch) as ReturnType<typeof settingsOf>;
  const change = { name: next.name, description: next.description ?? null, scopes: next.scopes, status: next.status, rate_limit: next.rate_limit ?? null };
  const changed = changedFields(settingsOf(current), change, [...FIELDS]);
  if (Object.keys(changed.after).length === 0) return current;
  const disabling = current.status === 'active' && change.status === 'disabled';
  // Tokens carry the generation they were issued in: a disabling ends every token issued so far,
  // and the tokens issued after the client is enabled again carry the next one (the row is locked).
  const updated = await updateClient(trx, id, { ...change, ...(disabling ? { token_generation: current.token_generation + 1 } : {}) });
  await record(trx, clientEvent('client.updated', id, changed), context);
  return updated;
}

/** Deletes a client: it and its secrets and tokens are refused from the next request. */
export async function deleteClient(trx: Transaction<Database>, id: string, ifMatch: string | undefined, context: EventContext): Promise<void> {
  const current = await lockForWrite(() => lockClient(trx, id), ifMatch, 'client');
  await deleteSecrets(trx, id);
  await updateClient(trx, id, { deleted_at: new Date() });
  await record(trx, clientEvent('client.deleted', id, { before: settingsOf(current) }), context);
}

/**
 * A new secret for a client, a roll with overlap: every other secret that would live longer now
 * expires `expireOthersIn` seconds from now (0: at once).
 */
export async function rollSecret(trx: Transaction<Database>, clientId: string, expireOthersIn: number, context: EventContext) {
  const client = await lockClient(trx, clientId);
  if (!client) throw notFound('client');
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
