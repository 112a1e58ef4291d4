import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
import type { Database, LocationRow } from '../db/tables.js';
import { changedFields, record, type EventContext } from '../events/event-recorder.js';
import type { EventType } from '../events/event-types.js';
import { AppError } from '../http/errors.js';
import { lockForWrite } from '../http/preconditions.js';
import { locationHoldsStock } from './stock-level-repository.js';
import { recountAvailableAtInactiveLocations } from './stock-repository.js';
import { clearDefaultLocation, deleteLocation, insertLocation, lockLocation, takeDefaultLocationTurn, updateLocation } from './location-repository.js';
import type { CreateLocationInput, LocationPatch } from './location-schemas.js';

const FIELDS = ['code', 'name', 'priority', 'status', 'is_default'] as const;
/** A location as its events show it. */
const settingsOf = (location: LocationRow) => ({ code: location.code, name: location.name, priority: location.priority, status: location.status, is_default: location.is_default });
const locationEvent = (type: EventType, id: string, data: Record<string, unknown>) => ({ type, subjectType: 'location' as const, subjectId: id, data });

/** The database's index on `lower(code)` is the rule; this only names it. */
async function translatingCodeTaken<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error, 'locations_code_unique')) throw new AppError('location_code_taken', 'Another location has this code (in some letter case).');
    throw error;
  }
}

const defaultLocation = (detail: string) => new AppError('default_location', detail);

/** A new location: never the default (a PATCH moves the mark to it). */
export async function createLocation(trx: Transaction<Database>, input: CreateLocationInput, context: EventContext): Promise<LocationRow> {
  const now = new Date();
  const location = await translatingCodeTaken(() =>
    insertLocation(trx, { id: randomUUID(), code: input.code, name: input.name, priority: input.priority ?? 100, status: input.status ?? 'active', created_at: now, updated_at: now }),
  );
  await record(trx, locationEvent('location.created', location.id, { after: settingsOf(location) }), context);
  return location;
}

/**
 * A merge patch of a location. `is_default: true` moves the mark here from the location that
 * held it, in this transaction, each of the two recording its `location.updated`; moves take
 * turns (takeDefaultLocationTurn, before the row's lock), so concurrent ones end with exactly
 * one default and never deadlock. The default is always active: a patch that would leave it
 * inactive (this one made inactive, or an inactive one made the default without `status:
 * active`) is 409 `default_location`. A patch that changes nothing writes nothing.
 */
export async function patchLocation(trx: Transaction<Database>, id: string, ifMatch: string | undefined, patch: LocationPatch, context: EventContext): Promise<LocationRow> {
  if (patch.is_default === true) await takeDefaultLocationTurn(trx);
  const current = await lockForWrite(() => lockLocation(trx, id), ifMatch, 'location');
  const next = { ...settingsOf(current), ...patch, is_default: current.is_default || patch.is_default === true };
  if (next.is_default && next.status !== 'active') {
    throw defaultLocation(current.is_default ? 'The default location cannot be made inactive; make another location the default first.' : 'An inactive location cannot be the default; make it active in the same change.');
  }
  const changed = changedFields(settingsOf(current), next, [...FIELDS]);
  if (Object.keys(changed.after).length === 0) return current;
  if (next.is_default && !current.is_default) {
    for (const previous of await clearDefaultLocation(trx, id)) {
      await record(trx, locationEvent('location.updated', previous.id, { before: { is_default: true }, after: { is_default: false } }), context);
    }
  }
  const updated = await translatingCodeTaken(() =>
    updateLocation(trx, id, { code: next.code, name: next.name, priority: next.priority, status: next.status, is_default: next.is_default }),
  );
  // What the location holds leaves the variants' `available` (or comes back to it) with its status.
  if (next.status !== current.status) await recountAvailableAtInactiveLocations(trx, id);
  await record(trx, locationEvent('location.updated', id, changed), context);
  return updated;
}

/**
 * Section 21's 409 `location_not_empty`: a location where any variant has stock or reserved
 * units (an open allocation holds units reserved there) cannot be deleted. Read under the
 * location's row lock: every stock change at a location share-locks it first, so none can
 * bring stock here between this check and the delete.
 */
async function assertLocationEmpty(trx: Transaction<Database>, location: LocationRow): Promise<void> {
  if (await locationHoldsStock(trx, location.id)) {
    throw new AppError('location_not_empty', `Location ${location.code} holds stock or reserved units; move them elsewhere (a transfer) or count them to zero first.`);
  }
}

/** Deletes a location; the default cannot be (409 `default_location`). */
export async function removeLocation(trx: Transaction<Database>, id: string, ifMatch: string | undefined, context: EventContext): Promise<void> {
  const current = await lockForWrite(() => lockLocation(trx, id), ifMatch, 'location');
  if (current.is_default) throw defaultLocation('The default location cannot be deleted; make another location the default first.');
  await assertLocationEmpty(trx, current);
  await deleteLocation(trx, id);
  await record(trx, locationEvent('location.deleted', id, { before: settingsOf(current) }), context);
}
