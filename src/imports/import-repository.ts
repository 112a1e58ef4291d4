import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import type { Database, VariantImportRow } from '../db/tables.js';
import { settledColumns, type Outcome, type Settlement } from '../jobs/work-queue.js';
import { callerRead } from '../sessions/caller-query.js';

export type NewImport = Pick<VariantImportRow, 'id' | 'upload_id' | 'format' | 'mode' | 'on_error' | 'dry_run' | 'byte_size' | 'created_by' | 'actor_type'>;

export function insertImport(trx: Transaction<Database>, row: NewImport): Promise<VariantImportRow> {
  const now = new Date();
  return trx
    .insertInto('variant_imports')
    .values({ ...row, status: 'pending', created_at: now, next_attempt_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** An import by id, beside the caller. */
export const importById = callerRead<VariantImportRow, [string]>('imports.byId', (db, id) => db.selectFrom('variant_imports').selectAll().where('id', '=', id));

/** Every caller's imports, newest first. */
export function importsPage(db: Kysely<Database>, page: PageRequest) {
  return keysetPage(db.selectFrom('variant_imports').selectAll(), page, 'newest-first');
}

export function countImports(db: Kysely<Database>): Promise<number> {
  return countRows(db.selectFrom('variant_imports'));
}

/** The advisory lock key of the admission of imports (any fixed number no other lock uses). */
const IMPORT_ADMISSION_LOCK = 720_431_151;

/**
 * Waits for the turn to admit an import, until the caller's transaction ends: two uploads that
 * count the active imports at once, on two instances, could otherwise both take the last place.
 * Transaction-level (pg_advisory_xact_lock), so it holds behind a pooler in transaction mode.
 */
export async function lockImportAdmission(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${IMPORT_ADMISSION_LOCK})`.execute(trx);
}

/** Imports pending or running, on any instance. */
export function countActiveImports(db: Kysely<Database>): Promise<number> {
  return countRows(db.selectFrom('variant_imports').where('status', 'in', ['pending', 'running']));
}

/** Finished imports the purge takes a statement: each may hold 10,000 failed rows, deleted with it. */
const PURGE_BATCH = 10;

/** Deletes the imports that finished before `cutoff`, with their failed rows (on delete cascade); how many went. */
export async function purgeImportsFinishedBefore(db: Kysely<Database>, cutoff: Date): Promise<number> {
  let purged = 0;
  for (;;) {
    const result = await sql<{ id: string }>`
      delete from variant_imports
      where id in (
        select id from variant_imports
        where finished_at < ${cutoff} and status not in ('pending', 'running')
        limit ${PURGE_BATCH} for update skip locked)
      returning id`.execute(db);
    purged += result.rows.length;
    if (result.rows.length < PURGE_BATCH) return purged;
  }
}

/** Stops an import that has not finished; undefined when it has (or never was). */
export function cancelImport(trx: Transaction<Database>, id: string): Promise<VariantImportRow | undefined> {
  return trx
    .updateTable('variant_imports')
    .set({ status: 'cancelled', finished_at: new Date() })
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'running'])
    .returningAll()
    .executeTakeFirst();
}

/** The claim an import runs under: its row is written only while the claim and the `running` status are still its own. */
export interface ImportClaim {
  id: string;
  claimToken: string;
}

export interface ImportProgress {
  rows_processed: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  first_errors: { line: number; message: string }[];
}

/**
 * Writes an import's progress (or its start, or its end) under its claim. False when the import
 * is no longer this run's to write: cancelled, or taken over by another instance.
 */
export async function writeUnderClaim(db: Kysely<Database>, claim: ImportClaim, change: Partial<ImportProgress> & { status?: VariantImportRow['status']; rows_total?: number; started_at?: Date; finished_at?: Date }): Promise<boolean> {
  const { first_errors: firstErrors, ...rest } = change;
  const written = await db
    .updateTable('variant_imports')
    .set({ ...rest, ...(firstErrors ? { first_errors: JSON.stringify(firstErrors) } : {}) })
    .where('id', '=', claim.id)
    .where('claim_token', '=', claim.claimToken)
    .where('status', 'in', ['pending', 'running'])
    .returning('id')
    .executeTakeFirst();
  return written !== undefined;
}

/** An import the queue failed for good gets its finishing time and the reason; undefined when it is not failed. */
export function markAbandoned(trx: Transaction<Database>, id: string, firstErrors: { line: number; message: string }[]): Promise<VariantImportRow | undefined> {
  return trx
    .updateTable('variant_imports')
    .set({ finished_at: new Date(), first_errors: JSON.stringify(firstErrors) })
    .where('id', '=', id)
    .where('status', '=', 'failed')
    .returningAll()
    .executeTakeFirst();
}

/** A failed row for the error report; `fields` undefined: not read yet (import-service.ts, storeFailedRows). */
export interface FailedRow {
  line: number;
  error: string;
  fields: unknown;
}

/** The failed rows, a hundred a statement: a row may be 64 KiB, and a statement stays a few MiB. */
export async function insertImportErrors(db: Kysely<Database>, importId: string, errors: FailedRow[]): Promise<void> {
  for (let start = 0; start < errors.length; start += 100) {
    await db
      .insertInto('variant_import_errors')
      .values(errors.slice(start, start + 100).map((error) => ({ import_id: importId, line: error.line, error: error.error, fields: JSON.stringify(error.fields) })))
      .onConflict((conflict) => conflict.columns(['import_id', 'line']).doNothing())
      .execute();
  }
}

export async function deleteImportErrors(db: Kysely<Database>, importId: string): Promise<void> {
  await db.deleteFrom('variant_import_errors').where('import_id', '=', importId).execute();
}

/** The failed rows of an import in file order, a page at a time (the error report). */
export function importErrorsAfter(db: Kysely<Database>, importId: string, afterLine: number, limit: number) {
  return db.selectFrom('variant_import_errors').select(['line', 'error', 'fields']).where('import_id', '=', importId).where('line', '>', afterLine).orderBy('line').limit(limit).execute();
}

/** The attribute keys of an import's failed CSV rows, for the error report's header. */
export async function importErrorColumns(db: Kysely<Database>, importId: string): Promise<string[]> {
  const rows = await sql<{ key: string }>`
    select distinct jsonb_object_keys(fields) as key from variant_import_errors
    where import_id = ${importId} and jsonb_typeof(fields) = 'object'`.execute(db);
  return rows.rows.map((row) => row.key);
}

// The upload: pieces of about a megabyte, written as they arrive.
export const UPLOAD_PIECE_BYTES = 1024 * 1024;

export async function insertUploadPiece(db: Kysely<Database>, uploadId: string, position: number, data: Uint8Array): Promise<void> {
  await db.insertInto('import_uploads').values({ upload_id: uploadId, position, data, created_at: new Date() }).execute();
}

/** The pieces of an upload in order, read one at a time. */
export async function* uploadPieces(db: () => Kysely<Database>, uploadId: string): AsyncGenerator<Uint8Array> {
  for (let position = 0; ; position++) {
    const piece = await db().selectFrom('import_uploads').select('data').where('upload_id', '=', uploadId).where('position', '=', position).executeTakeFirst();
    if (!piece) return;
    yield piece.data;
  }
}

export async function deleteUpload(db: Kysely<Database>, uploadId: string): Promise<void> {
  await db.deleteFrom('import_uploads').where('upload_id', '=', uploadId).execute();
}

/** Uploads no import took (a request cut off, a replayed key) are dropped after a day. */
export async function deleteAbandonedUploads(db: Kysely<Database>): Promise<number> {
  const result = await sql`
    delete from import_uploads
    where created_at < now() - interval '1 day'
      and not exists (select 1 from variant_imports where variant_imports.upload_id = import_uploads.upload_id and status in ('pending', 'running'))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export const newUploadId = () => randomUUID();

/** What a run that ended keeps: the status it came to (a run ends succeeded, failed or cancelled by its own rows). */
export interface ImportRunColumns {
  status: VariantImportRow['status'];
}

const IMPORT_STATUS = { done: 'succeeded', retry: 'pending', failed: 'failed' } as const satisfies Record<Outcome, VariantImportRow['status']>;

/** A run's result, under the claim it was made with (the import queue's settle). */
export async function settleImportRun(trx: Transaction<Database>, row: VariantImportRow, settlement: Settlement<ImportRunColumns>): Promise<boolean> {
  const settled = await trx
    .updateTable('variant_imports')
    .set({ ...settledColumns(settlement), status: IMPORT_STATUS[settlement.outcome], ...settlement.columns })
    .where('id', '=', row.id)
    .where('claim_token', '=', row.claim_token)
    .returning('id')
    .executeTakeFirst();
  return settled !== undefined;
}
