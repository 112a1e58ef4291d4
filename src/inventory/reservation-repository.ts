import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import { preparedQuery } from '../db/prepared-query.js';
import type { Database, ReservationAllocationRow, ReservationLineRow, ReservationRow } from '../db/tables.js';
import { callerRead } from '../sessions/caller-query.js';
import type { StatementStep } from './stock-repository.js';

/** A reservation, its lines, and where they hold their units (commit, release and expiry act on each allocation). */
export interface Reservation extends ReservationRow {
  lines: ReservationLineRow[];
  allocations: ReservationAllocationRow[];
}


/** A reservation row read FOR UPDATE, with whether its time is up by the database's clock. */
export interface LockedReservation extends Reservation {
  lapsed: boolean;
  /** The row's version (its xmin): a statement written after an unlocked read closes it only if no one changed it since. */
  row_version: string;
  /** Whether another transaction changed the row while the lock was waited for (lockReservation). */
  changed_under_lock: boolean;
}

/** The active reservations holding units of a variant (the partial index on active lines finds them). */
function activeHolding(db: Kysely<Database>, variantId: string) {
  return db
    .selectFrom('reservations')
    .innerJoin('reservation_lines', 'reservation_lines.reservation_id', 'reservations.id')
    .where('reservation_lines.variant_id', '=', variantId)
    .where('reservation_lines.active', '=', true);
}

/** The rows with their lines and allocations, read in two more statements for the whole page. */
export async function withLinesOfPage(db: Kysely<Database>, rows: ReservationRow[]): Promise<Reservation[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const lines = await db.selectFrom('reservation_lines').selectAll().where('reservation_id', 'in', ids).orderBy('position').execute();
  const allocations = await db.selectFrom('reservation_allocations').selectAll().where('reservation_id', 'in', ids).orderBy('position').orderBy('location_id').execute();
  return rows.map((row) => ({
    ...row,
    lines: lines.filter((line) => line.reservation_id === row.id),
    allocations: allocations.filter((allocation) => allocation.reservation_id === row.id),
  }));
}

/** A page of the active reservations holding units of a variant, newest first (their lines: withLinesOfPage). */
export function activeReservationsOfVariantPage(db: Kysely<Database>, variantId: string, page: PageRequest) {
  return keysetPage(activeHolding(db, variantId).selectAll('reservations'), page, 'newest-first', 'reservations');
}

export interface ReservationFilter {
  reference?: string | undefined;
  status?: ReservationRow['status'] | undefined;
}

function filteredReservations(db: Kysely<Database>, filter: ReservationFilter) {
  let query = db.selectFrom('reservations');
  if (filter.reference !== undefined) query = query.where('reference', '=', filter.reference);
  if (filter.status) query = query.where('status', '=', filter.status);
  return query;
}

/** A page of reservations, newest first (their lines: withLinesOfPage). */
export function reservationsPage(db: Kysely<Database>, filter: ReservationFilter, page: PageRequest) {
  return keysetPage(filteredReservations(db, filter).selectAll(), page, 'newest-first');
}

/** A page of the reservations a user created, oldest first (their lines: withLinesOfPage); a data export. */
export function reservationsCreatedByPage(db: Kysely<Database>, userId: string, page: PageRequest): Promise<ReservationRow[]> {
  return keysetPage(db.selectFrom('reservations').selectAll().where('created_by', '=', userId), page, 'oldest-first').execute();
}

export function countReservations(db: Kysely<Database>, filter: ReservationFilter): Promise<number> {
  return countRows(filteredReservations(db, filter));
}

export function countActiveReservationsOfVariant(db: Kysely<Database>, variantId: string): Promise<number> {
  return countRows(activeHolding(db, variantId));
}

/** A reservation by id, for a read beside the caller (its lines: withLinesOfPage). */
export const reservationById = callerRead<ReservationRow, [string]>('inventory.reservationById', (db, id) => db.selectFrom('reservations').selectAll().where('id', '=', id));

/**
 * A reservation read FOR UPDATE, its lines and allocations with it in the same statement (a
 * commit's or a release's first step, so one round trip). Had the statement waited for another
 * transaction that changed the row (a closing, or a reallocation moving its allocations), the
 * row is the one that transaction left but the lines and allocations are as the statement's
 * snapshot saw them, before it: the statement says so (`changed_under_lock`, the row's version
 * differing from the one in its snapshot), and they are read again, now that the lock is held.
 */
export async function lockReservation(trx: Transaction<Database>, id: string): Promise<LockedReservation | undefined> {
  const [row] = await lockStatement(trx, id);
  if (!row?.changed_under_lock) return row;
  const [fresh] = await withLinesOfPage(trx, [row]);
  return { ...row, lines: fresh!.lines, allocations: fresh!.allocations };
}

/** A reservation and its lines, unlocked (a commit in one statement reads what it will close: reservation-service.ts). */
export async function readReservation(db: Kysely<Database>, id: string): Promise<LockedReservation | undefined> {
  const [row] = await readStatement(db, id);
  return row;
}

const withLinesAndLapse = (db: Kysely<Database>, id: string) =>
  db
    .selectFrom('reservations')
    .selectAll()
    .select(sql<boolean>`expires_at <= now()`.as('lapsed'))
    .select(sql<string>`reservations.xmin::text`.as('row_version'))
    .select(sql<boolean>`reservations.xmin::text <> (select in_snapshot.xmin::text from reservations as in_snapshot where in_snapshot.id = reservations.id)`.as('changed_under_lock'))
    .select((eb) => jsonArrayFrom(eb.selectFrom('reservation_lines').selectAll().whereRef('reservation_id', '=', 'reservations.id').orderBy('position')).as('lines'))
    .select((eb) =>
      jsonArrayFrom(eb.selectFrom('reservation_allocations').selectAll().whereRef('reservation_id', '=', 'reservations.id').orderBy('position').orderBy('location_id')).as('allocations'),
    )
    .where('id', '=', id);

// Built once (prepared-query.ts): every commit and release runs one of them.
const lockStatement = preparedQuery((db, id: string) => withLinesAndLapse(db, id).forUpdate());
const readStatement = preparedQuery((db, id: string) => withLinesAndLapse(db, id));

/** The lines whose variant is missing or short, read without a lock in the statement's snapshot. */
const unavailable = sql`unavailable as (
      select 1 from wanted left join variants on variants.id = wanted.variant_id
      where variants.id is null or variants.stock - variants.reserved - variants.available_at_inactive_locations < wanted.quantity),`;

/**
 * How a reservation of one line holds its units in its insert's statement: `after` the insert
 * (given the name of the step that returns the new row), in a transaction that refuses the
 * reservation when the hold found the units gone; or `before` it, and the insert happens only if
 * the hold did (a statement of its own, which nothing can roll back).
 */
export type HoldInInsert = { after: (madeStep: string) => StatementStep } | { before: StatementStep };

/**
 * The reservation and its lines in one statement, if every line's variant exists and has the
 * units available (read without a lock, in the statement's snapshot): a sold-out or unknown
 * variant is refused before anything is written, and undefined says so (the caller reads why).
 * With what `recordedWith` adds (the steps that record its event, given the name of the step
 * that returns the new row), and what `hold` adds (a step holding the units of the one line,
 * whose rows say whether it held them, and where: `held`, false without it; the line's
 * allocation is written from it). Expiry and creation read the
 * database's clock, so instances whose clocks differ agree. The lines go in as a VALUES list, so
 * PostgreSQL keeps one generic plan for each number of lines (arrays of an unknown length made it
 * plan every execution anew).
 */
export async function insertReservationIfAvailable(
  db: Kysely<Database>,
  input: { lines: { variant_id: string; quantity: number }[]; reference: string | null; expiresIn: number; createdBy: string | null },
  recordedWith: (madeStep: string) => RawBuilder<unknown>,
  hold?: HoldInInsert,
): Promise<{ reservation: Reservation; held: boolean } | undefined> {
  const before = hold && 'before' in hold ? hold.before : undefined;
  const after = hold && 'after' in hold ? hold.after('made') : undefined;
  const holding = before ?? after;
  const id = randomUUID();
  const wanted = input.lines.map((line, position) => sql`(${line.variant_id.toLowerCase()}::uuid, ${line.quantity}::integer, ${position}::integer)`);
  const { rows } = await sql<Reservation & { held: boolean }>`
    with wanted (variant_id, quantity, position) as (values ${sql.join(wanted)}),
    ${before ? sql`${before.steps},` : unavailable}
    made as (
      insert into reservations (id, status, reference, expires_at, created_by, created_at, updated_at)
      select ${id}, 'active', ${input.reference}, now() + make_interval(secs => ${input.expiresIn}), ${input.createdBy}, now(), now()
      where ${before ? sql`exists (select 1 from ${sql.table(before.step)})` : sql`not exists (select 1 from unavailable)`}
      returning *),
    made_lines as (
      insert into reservation_lines (reservation_id, position, variant_id, quantity)
      select made.id, wanted.position, wanted.variant_id, wanted.quantity from made cross join wanted
      returning *),
    ${recordedWith('made')}${after ? sql`, ${after.steps}` : sql``}${
      holding
        ? sql`,
    made_allocation as (
      insert into reservation_allocations (reservation_id, position, location_id, quantity)
      select made.id, wanted.position, ${sql.table(holding.step)}.location_id, wanted.quantity from made cross join wanted cross join ${sql.table(holding.step)}
      returning *)`
        : sql``
    }
    select made.*, (select coalesce(json_agg(made_lines order by made_lines.position), '[]') from made_lines) as lines,
      ${holding ? sql`(select coalesce(json_agg(made_allocation), '[]') from made_allocation)` : sql`'[]'::json`} as allocations,
      ${holding ? sql`exists (select 1 from ${sql.table(holding.step)})` : sql`false`} as held
    from made`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  const { held, ...reservation } = row;
  return { reservation, held };
}

export interface ReservedMismatch {
  variant_id: string;
  /** The variant's `reserved`; 0 when the variant is gone. */
  counted: number;
  /** What its open reservation lines hold. */
  held: number;
}

/**
 * Variants whose `reserved` differs from their open reservation lines, read in one statement
 * (one snapshot, so a reservation committing meanwhile is wholly in it or wholly out). It reads
 * the variants holding units and the open lines, not the history of closed ones.
 */
export async function reservedMismatches(db: Kysely<Database>, limit: number): Promise<ReservedMismatch[]> {
  const { rows } = await sql<ReservedMismatch>`
    select coalesce(counted.id, held.variant_id) as variant_id, coalesce(counted.reserved, 0) as counted, coalesce(held.quantity, 0)::integer as held
    from (select id, reserved from variants where reserved <> 0) as counted
    full join (select variant_id, sum(quantity) as quantity from reservation_lines where active group by variant_id) as held on held.variant_id = counted.id
    where coalesce(counted.reserved, 0) <> coalesce(held.quantity, 0)
    order by 1
    limit ${limit}`.execute(db);
  return rows;
}

/** The units a variant's open reservation lines hold (the reconciliation's recount, under the variant's lock). */
export async function unitsHeldByOpenLines(trx: Transaction<Database>, variantId: string): Promise<number> {
  const row = await trx
    .selectFrom('reservation_lines')
    .select(sql<number>`coalesce(sum(quantity), 0)::integer`.as('held'))
    .where('variant_id', '=', variantId)
    .where('active', '=', true)
    .executeTakeFirstOrThrow();
  return row.held;
}

/**
 * The steps of a statement's `with` that close reservations and their lines (the lines stop
 * counting towards `reserved`); the step `closed` returns the closed rows. A commit runs them in
 * the statement that takes its units (reservation-service.ts). `onlyIf` is a condition on each
 * reservation's row (a commit in one statement: still active, not lapsed, the caller let in);
 * the lines of a reservation it leaves open stay as they are.
 */
export function closingSteps(ids: string[], status: 'committed' | 'released' | 'expired', onlyIf: RawBuilder<boolean> = sql`true`): RawBuilder<unknown> {
  return sql`
    closed as (update reservations set status = ${status}, updated_at = now() where id in (${sql.join(ids)}) and ${onlyIf} returning *),
    closed_lines as (update reservation_lines set active = false where reservation_id in (select id from closed))`;
}

/** The condition that a reservation's row is still open to a commit or release: active, its time not up. */
export const stillOpen = sql<boolean>`status = 'active' and expires_at > now()`;

/** Closes reservations, their lines with them in one statement (closingSteps). */
export async function closeReservations(trx: Transaction<Database>, ids: string[], status: 'committed' | 'released' | 'expired'): Promise<ReservationRow[]> {
  const { rows } = await sql<ReservationRow>`with ${closingSteps(ids, status)} select * from closed`.execute(trx);
  return rows;
}

/**
 * Claims up to `limit` active reservations whose time is up. SKIP LOCKED lets every instance
 * run the expiry at once, and a reservation being committed or released (locked by that
 * request) is left to it.
 */
export async function claimLapsedReservations(trx: Transaction<Database>, limit: number): Promise<Reservation[]> {
  const rows = await trx
    .selectFrom('reservations')
    .selectAll()
    .where('status', '=', 'active')
    .where('expires_at', '<=', sql<Date>`now()`)
    .orderBy('expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const lines = await trx.selectFrom('reservation_lines').selectAll().where('reservation_id', 'in', ids).orderBy('position').execute();
  const allocations = await trx.selectFrom('reservation_allocations').selectAll().where('reservation_id', 'in', ids).orderBy('position').orderBy('location_id').execute();
  return rows.map((row) => ({
    ...row,
    lines: lines.filter((line) => line.reservation_id === row.id),
    allocations: allocations.filter((allocation) => allocation.reservation_id === row.id),
  }));
}

/** Where a reservation's lines hold their units (a reservation of several lines, after its holds). */
export async function insertAllocations(trx: Transaction<Database>, allocations: ReservationAllocationRow[]): Promise<void> {
  if (allocations.length === 0) return;
  await trx.insertInto('reservation_allocations').values(allocations).execute();
}

/**
 * Replaces the allocations of some lines of a locked reservation (a reallocation) and moves its
 * `updated_at` on; the row as it is after.
 */
export async function replaceAllocations(trx: Transaction<Database>, reservationId: string, positions: number[], allocations: ReservationAllocationRow[]): Promise<ReservationRow> {
  await trx.deleteFrom('reservation_allocations').where('reservation_id', '=', reservationId).where('position', 'in', positions).execute();
  await insertAllocations(trx, allocations);
  return trx.updateTable('reservations').set({ updated_at: sql<Date>`now()` }).where('id', '=', reservationId).returningAll().executeTakeFirstOrThrow();
}

/** Active reservations and the oldest time one has been overdue: for the metrics. */
export async function overdueReservationStats(db: Kysely<Database>): Promise<{ count: number; oldestAgeSeconds: number }> {
  const stats = await db
    .selectFrom('reservations')
    .select([sql<string>`count(*)`.as('count'), sql<number | null>`extract(epoch from now() - min(expires_at))`.as('oldest')])
    .where('status', '=', 'active')
    .where('expires_at', '<=', sql<Date>`now()`)
    .executeTakeFirstOrThrow();
  return { count: Number(stats.count), oldestAgeSeconds: Number(stats.oldest ?? 0) };
}
