import type { Kysely, Transaction } from 'kysely';
import type { Database, SigningKeyRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { findActiveSigningKey, lockSigningKeys, replaceActiveKey, type RotationSettings } from '../sessions/signing-key-service.js';

const DAY_MS = 24 * 60 * 60 * 1000;

async function rotateLocked(trx: Transaction<Database>, settings: RotationSettings, context: EventContext): Promise<SigningKeyRow> {
  const { previous, next } = await replaceActiveKey(trx, settings);
  // Signing keys are named by kid, not by UUID; the event's subject is the new key's kid.
  await record(trx, { type: 'signing_key.rotated', subjectType: 'signing_key', subjectId: next.kid, data: { after: { kid: next.kid }, before: { kid: previous?.kid ?? null } } }, context);
  return next;
}

/** An admin's rotation, in the transaction the admission opened. */
export async function rotateSigningKey(trx: Transaction<Database>, settings: RotationSettings, context: EventContext): Promise<SigningKeyRow> {
  await lockSigningKeys(trx);
  return rotateLocked(trx, settings, context);
}

/** The automatic rotation: only when the active key is older than the period, on one instance. */
export function rotateWhenDue(db: Kysely<Database>, rotationDays: number, settings: RotationSettings, context: EventContext): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    const active = await findActiveSigningKey(trx);
    if (active && Date.now() - active.created_at.getTime() < rotationDays * DAY_MS) return false;
    await rotateLocked(trx, settings, context);
    return true;
  });
}
