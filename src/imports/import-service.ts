import type { Kysely, Transaction } from 'kysely';
import type { Database, ImportStatus, VariantImportRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { AppError } from '../http/errors.js';
import { everyLocationByPriority } from '../inventory/stock-service.js';
import type { Attempt } from '../jobs/work-queue.js';
import { storableText, storableValue } from './cell-text.js';
import { applyBatch, type RowOutcome } from './import-batch.js';
import { FileProblem, rowsOf } from './import-files.js';
import {
  countActiveImports,
  deleteImportErrors,
  deleteUpload,
  insertImportErrors,
  lockImportAdmission,
  markAbandoned,
  uploadPieces,
  writeUnderClaim,
  type FailedRow,
  type ImportClaim,
  type ImportProgress,
  type ImportRunColumns,
} from './import-repository.js';
import { readRow, type LocationsByCode, type ReadRow } from './import-rows.js';

/**
 * Rows a batch: its work between two statements holds the event loop, and so every request the
 * instance serves meanwhile. At 1,000 the by-id p99 during an import was 2 to 2.4 times its p99
 * without; at 500, 1.5 to 2.1 times, the import as fast; at 250, 1.7 times, the import slower
 * (bench/README.md, "2026-11-24 (night)").
 */
const BATCH_ROWS = 500;
const FIRST_ERRORS = 10;
/** The wait a 429 suggests: an import of a few thousand rows ends within it. */
const BUSY_RETRY_SECONDS = 30;

const importsBusy = (maxActive: number) =>
  new AppError('rate_limited', `${maxActive} imports are pending or running (IMPORT_MAX_ACTIVE); retry once one has finished.`, undefined, { 'retry-after': String(BUSY_RETRY_SECONDS) });

/**
 * IMPORT_MAX_ACTIVE, decided in the transaction that inserts the import, under a transaction-level
 * advisory lock: two uploads on two instances (or behind a pooler) cannot both take the last
 * place. A 429 is a passing refusal, so an Idempotency-Key sent with it is freed for the retry
 * (http/idempotency.ts).
 */
export async function admitImport(trx: Transaction<Database>, maxActive: number): Promise<void> {
  await lockImportAdmission(trx);
  if ((await countActiveImports(trx)) >= maxActive) throw importsBusy(maxActive);
}

/** Refused before a byte is stored when there is clearly no room; the count that decides is admitImport's. */
export async function refuseImportWhenFull(db: Kysely<Database>, maxActive: number): Promise<void> {
  if ((await countActiveImports(db)) >= maxActive) throw importsBusy(maxActive);
}

/**
 * The failed rows an import keeps for its error report: the first ones, in file order; `failed`
 * counts them all. A 48 MiB file of bad rows left 1.17 million of them, and an all-or-nothing
 * run held every one in memory until its end (586 MB).
 */
export const KEPT_FAILED_ROWS = 10_000;
/** The longest message kept: a message may quote the file (a key, a column), and names the problem, not the file. */
const MESSAGE_CHARACTERS = 300;

/** A row's message as it is stored (first_errors, the error report): short, and text the database takes. */
const storedMessage = (message: string) => storableText(message.length > MESSAGE_CHARACTERS ? `${message.slice(0, MESSAGE_CHARACTERS - 1)}…` : message);

export interface ImportRunner {
  db: Kysely<Database>;
  /** Whether progress can be written beside an open transaction (PostgreSQL; not the embedded database). */
  concurrent: boolean;
}

/** The import was cancelled, or another instance took it over: this run stops and writes nothing more. */
class NoLongerOurs extends Error {}
/** An all-or-nothing run (or a dry run) that must not keep what it wrote: its transaction rolls back, its result stays. */
class KeepNothing extends Error {
  constructor(readonly result: Tally) {
    super('rolled back');
  }
}

/**
 * What a run has found so far: the counts, the first errors, and the failed rows to keep, not yet
 * stored. A run whose transaction holds its rows to the end (all or nothing) keeps no row's
 * cells, only its line and message: they are read again from the upload when the run ends.
 */
class Tally {
  rows_processed = 0;
  created = 0;
  updated = 0;
  unchanged = 0;
  failed = 0;
  first_errors: { line: number; message: string }[] = [];
  pendingErrors: FailedRow[] = [];

  constructor(private readonly keepCells: boolean) {}

  copy(): Tally {
    const copy = new Tally(this.keepCells);
    Object.assign(copy, this.progress(), { first_errors: [...this.first_errors], pendingErrors: [...this.pendingErrors] });
    return copy;
  }

  static resumedFrom(row: VariantImportRow): Tally {
    const tally = new Tally(true);
    Object.assign(tally, { rows_processed: row.rows_processed, created: row.created, updated: row.updated, unchanged: row.unchanged, failed: row.failed, first_errors: row.first_errors });
    return tally;
  }

  count(row: ReadRow, outcome: RowOutcome): void {
    this.rows_processed += 1;
    if (typeof outcome === 'string') {
      this[outcome] += 1;
      return;
    }
    // The first KEPT_FAILED_ROWS failures are kept, and `failed` counts the ones before this, so
    // a resumed run keeps exactly the rows a run that never stopped would have.
    const kept = this.failed < KEPT_FAILED_ROWS;
    this.failed += 1;
    const message = storedMessage(outcome.failed);
    if (this.first_errors.length < FIRST_ERRORS) this.first_errors.push({ line: row.line, message });
    if (kept) this.pendingErrors.push({ line: row.line, error: message, fields: this.keepCells ? storableValue(row.source) : undefined });
  }

  progress(): ImportProgress {
    const { rows_processed, created, updated, unchanged, failed, first_errors } = this;
    return { rows_processed, created, updated, unchanged, failed, first_errors };
  }

  takeErrors() {
    const errors = this.pendingErrors;
    this.pendingErrors = [];
    return errors;
  }
}

/**
 * The rows of the upload in batches of at most BATCH_ROWS, each SKU at most once in a batch (a
 * row whose SKU the batch has already ends it, so it meets what the earlier row wrote), after
 * skipping the rows a resumed run has done.
 */
async function* batchesOf(rows: AsyncIterable<ReadRow>, skip: number): AsyncGenerator<ReadRow[]> {
  let batch: ReadRow[] = [];
  let skus = new Set<string>();
  let seen = 0;
  for await (const row of rows) {
    if (seen++ < skip) continue;
    const sku = 'request' in row ? row.request.sku.toLowerCase() : undefined;
    if (batch.length >= BATCH_ROWS || (sku !== undefined && skus.has(sku))) {
      yield batch;
      batch = [];
      skus = new Set();
    }
    batch.push(row);
    if (sku !== undefined) skus.add(sku);
  }
  if (batch.length > 0) yield batch;
}

/**
 * The locations a run's `stock.<code>` cells may name, read once as the run starts: a location
 * deleted meanwhile fails the rows that name it (inventory finds it gone), never the import.
 */
async function locationsByCode(db: Kysely<Database>): Promise<LocationsByCode> {
  return new Map((await everyLocationByPriority(db)).map((location) => [location.code.toLowerCase(), { id: location.id, code: location.code }]));
}

const codesOf = (locations: LocationsByCode) => new Set(locations.keys());

async function* readRows(read: () => Kysely<Database>, row: VariantImportRow, locations: LocationsByCode): AsyncGenerator<ReadRow> {
  for await (const fileRow of rowsOf(row.format, uploadPieces(read, row.upload_id), codesOf(locations))) yield readRow(fileRow, row.format, locations);
}

async function countRows(db: Kysely<Database>, row: VariantImportRow, locations: LocationsByCode): Promise<number> {
  let count = 0;
  for await (const _ of rowsOf(row.format, uploadPieces(() => db, row.upload_id), codesOf(locations))) count += 1;
  return count;
}

const contextOf = (row: VariantImportRow): EventContext => ({ actorId: row.created_by, actorType: row.actor_type, requestId: null });

/**
 * Stores failed rows for the error report. Those counted without their cells (an all-or-nothing
 * run) take them from the upload, read once more, a page at a time.
 */
async function storeFailedRows(trx: Transaction<Database>, row: VariantImportRow, failures: FailedRow[], locations: LocationsByCode): Promise<void> {
  await insertImportErrors(trx, row.id, failures.filter((failure) => failure.fields !== undefined));
  const unread = new Map(failures.filter((failure) => failure.fields === undefined).map((failure) => [failure.line, failure.error]));
  let page: FailedRow[] = [];
  for await (const fileRow of unread.size > 0 ? rowsOf(row.format, uploadPieces(() => trx, row.upload_id), codesOf(locations)) : []) {
    const error = unread.get(fileRow.line);
    if (error === undefined) continue;
    unread.delete(fileRow.line);
    page.push({ line: fileRow.line, error, fields: storableValue(fileRow.source) });
    if (page.length >= 100 || unread.size === 0) {
      await insertImportErrors(trx, row.id, page);
      page = [];
    }
    if (unread.size === 0) break;
  }
}

/** The end of an import: its status and counts, its stored errors, `import.finished`; the upload goes. */
async function finish(trx: Transaction<Database>, row: VariantImportRow, claim: ImportClaim, status: ImportStatus, tally: Tally, rowsTotal: number | null, locations: LocationsByCode): Promise<void> {
  await storeFailedRows(trx, row, tally.takeErrors(), locations);
  const written = await writeUnderClaim(trx, claim, { ...tally.progress(), status, finished_at: new Date() });
  if (!written) throw new NoLongerOurs();
  const { created, updated, unchanged, failed } = tally;
  await record(trx, { type: 'import.finished', subjectType: 'import', subjectId: row.id, data: { status, rows_total: rowsTotal, created, updated, unchanged, failed } }, contextOf(row));
  await deleteUpload(trx, row.upload_id);
}

/**
 * `skip_failed`, for real: each batch in its own transaction, with the import's checkpoint
 * (`rows_processed`, the counts, the failed rows) written in the same transaction under the
 * claim, so a run that dies, or is cancelled, keeps exactly the batches that committed, and a
 * resumed run goes on from the checkpoint: no row is applied twice.
 */
async function runInBatches(runner: ImportRunner, row: VariantImportRow, claim: ImportClaim, rowsTotal: number, locations: LocationsByCode, signal: AbortSignal): Promise<void> {
  let tally = Tally.resumedFrom(row);
  const settings = { mode: row.mode, context: contextOf(row), origin: originOf(row) };
  for await (const batch of batchesOf(readRows(() => runner.db, row, locations), row.rows_processed)) {
    if (signal.aborted) throw signal.reason;
    // Counted on a copy: a transaction retried after a deadlock must not count its batch twice.
    tally = await inTransaction(runner.db, async (trx) => {
      const counted = tally.copy();
      const outcomes = await applyBatch(trx, batch, settings);
      batch.forEach((item, index) => counted.count(item, outcomes[index]!));
      await insertImportErrors(trx, row.id, counted.takeErrors());
      if (!(await writeUnderClaim(trx, claim, counted.progress()))) throw new NoLongerOurs();
      return counted;
    });
  }
  await inTransaction(runner.db, (trx) => finish(trx, row, claim, 'succeeded', tally, rowsTotal, locations));
}

/**
 * `reject_all`, and every dry run: one transaction for the whole file, so nothing of it is
 * seen before it all commits, and a run that dies leaves nothing (the next run starts over).
 * Progress is written beside it where the database allows (PostgreSQL), which is also where a
 * cancellation is noticed; a dry run, or a run with a failed row, rolls back and keeps only its
 * result.
 */
async function runAtOnce(runner: ImportRunner, row: VariantImportRow, claim: ImportClaim, rowsTotal: number, locations: LocationsByCode, signal: AbortSignal): Promise<void> {
  const settings = { mode: row.mode, context: contextOf(row), origin: originOf(row) };
  await deleteImportErrors(runner.db, row.id);
  let kept: Tally;
  try {
    await inTransaction(runner.db, async (trx) => {
      const tally = new Tally(false);
      for await (const batch of batchesOf(readRows(() => trx, row, locations), 0)) {
        if (signal.aborted) throw signal.reason;
        const outcomes = await applyBatch(trx, batch, settings);
        batch.forEach((item, index) => tally.count(item, outcomes[index]!));
        if (runner.concurrent && !(await writeUnderClaim(runner.db, claim, { rows_processed: tally.rows_processed }))) throw new NoLongerOurs();
      }
      if (row.dry_run || tally.failed > 0) throw new KeepNothing(tally);
      await finish(trx, row, claim, 'succeeded', tally, rowsTotal, locations);
    });
    return;
  } catch (error) {
    if (!(error instanceof KeepNothing)) throw error;
    kept = error.result;
  }
  const status: ImportStatus = row.on_error === 'reject_all' && kept.failed > 0 ? 'failed' : 'succeeded';
  // A real all-or-nothing import that failed stored nothing: its counts say so.
  if (!row.dry_run) Object.assign(kept, { created: 0, updated: 0, unchanged: 0 });
  await inTransaction(runner.db, (trx) => finish(trx, row, claim, status, kept, rowsTotal, locations));
}

const originOf = (row: VariantImportRow) => ({ createReason: `import ${row.id}`, updateReason: `import ${row.id}`, data: { import_id: row.id } });

/**
 * One run of a claimed import (the work queue's attempt): it starts (or resumes) the import,
 * counts the file's rows once, and applies them. A file it cannot read fails the import at
 * once. A cancelled import, or one another instance took over, is left as it is.
 */
export async function runImport(runner: ImportRunner, row: VariantImportRow, signal: AbortSignal): Promise<Attempt<ImportRunColumns>> {
  const claim: ImportClaim = { id: row.id, claimToken: row.claim_token! };
  try {
    const start = { status: 'running' as const, ...(row.started_at ? {} : { started_at: new Date() }) };
    if (row.status === 'pending' && !(await writeUnderClaim(runner.db, claim, start))) throw new NoLongerOurs();
    let rowsTotal = row.rows_total;
    const locations = await locationsByCode(runner.db);
    try {
      if (rowsTotal === null) {
        rowsTotal = await countRows(runner.db, row, locations);
        if (!(await writeUnderClaim(runner.db, claim, { rows_total: rowsTotal }))) throw new NoLongerOurs();
      }
      if (row.on_error === 'skip_failed' && !row.dry_run) await runInBatches(runner, row, claim, rowsTotal, locations, signal);
      else await runAtOnce(runner, row, claim, rowsTotal, locations, signal);
    } catch (error) {
      if (!(error instanceof FileProblem)) throw error;
      const tally = new Tally(false);
      tally.first_errors.push({ line: error.line, message: storedMessage(error.message) });
      await inTransaction(runner.db, (trx) => finish(trx, row, claim, 'failed', tally, rowsTotal, locations));
    }
  } catch (error) {
    if (!(error instanceof NoLongerOurs)) throw error;
  }
  const now = await runner.db.selectFrom('variant_imports').select('status').where('id', '=', row.id).executeTakeFirstOrThrow();
  return { ok: true, columns: { status: now.status } };
}

/**
 * A cancellation ends the import: `import.finished` with its counts as they stood, and its upload
 * goes (a run still reading it finds the file at an end, and then the import no longer its own).
 */
export async function recordCancellation(trx: Transaction<Database>, row: VariantImportRow, context: EventContext): Promise<void> {
  await recordFinished(trx, row, context);
  await deleteUpload(trx, row.upload_id);
}

/** `import.finished` for an import that ended with the status and counts its row holds. */
async function recordFinished(trx: Transaction<Database>, row: VariantImportRow, context: EventContext): Promise<void> {
  const { status, rows_total, created, updated, unchanged, failed } = row;
  await record(trx, { type: 'import.finished', subjectType: 'import', subjectId: row.id, data: { status, rows_total, created, updated, unchanged, failed } }, context);
}

/**
 * An import the queue gave up on (its runs kept failing, or ran past the deadline) ends like any
 * other: its finishing time, an error that says it could not be completed, `import.finished`; its
 * upload goes. The reason stays in `last_error` for operators: it is a database's or a library's
 * message, which no client is shown.
 */
export async function finishAbandoned(trx: Transaction<Database>, row: VariantImportRow): Promise<void> {
  const message = `the import could not be completed: its runs failed ${row.attempts} ${row.attempts === 1 ? 'time' : 'times'}`;
  const firstErrors = [...row.first_errors, { line: 0, message }].slice(-10);
  const ended = await markAbandoned(trx, row.id, firstErrors);
  if (!ended) return;
  await recordFinished(trx, ended, contextOf(ended));
  await deleteUpload(trx, ended.upload_id);
}
