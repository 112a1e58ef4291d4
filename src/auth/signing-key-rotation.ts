import type { Kysely, Transaction } from 'kysely';
import type { Database, SigningKeyRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { findActiveSigningKeys, lockSigningKeys, replaceActiveKeys, SIGNING_ALGORITHMS, type RotationSettings } from '../sessions/signing-key-service.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Both keys (Ed25519 and RSA) rotate together; each rotation is its own event, named by the new kid. */
async function rotateLocked(trx: Transaction<Database>, settings: RotationSettings, context: EventContext): Promise<SigningKeyRow[]> {
  const replacements = await replaceActiveKeys(trx, settings);
  for (const { previous, next } of replacements) {
    // Signing keys are named by kid, not by UUID; the event's subject is the new key's kid.
    await record(trx, { type: 'signing_key.rotated', subjectType: 'signing_key', subjectId: next.kid, data: { after: { kid: next.kid }, before: { kid: previous?.kid ?? null } } }, context);
  }
  return replacements.map((replacement) => replacement.next);
}

/** An admin's rotation, in the transaction the admission opened: the new keys, Ed25519 first. */
export async function rotateSigningKeys(trx: Transaction<Database>, settings: RotationSettings, context: EventContext): Promise<SigningKeyRow[]> {
  await lockSigningKeys(trx);
  return rotateLocked(trx, settings, context);
}

/** The automatic rotation: when the oldest active key is older than the period, on one instance. */
export function rotateWhenDue(db: Kysely<Database>, rotationDays: number, settings: RotationSettings, context: EventContext): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    const active = await findActiveSigningKeys(trx);
    const complete = active.length === SIGNING_ALGORITHMS.length;
    if (complete && active.every((key) => Date.now() - key.created_at.getTime() < rotationDays * DAY_MS)) return false;
    await rotateLocked(trx, settings, context);
    return true;
  });
}
