import { createHash } from 'node:crypto';
import { stringify } from 'csv-stringify/sync';
import type { Kysely } from 'kysely';
import { everyRow } from '../db/list-queries.js';
import type { Database, ImportFormat, LocationRow, VariantRow } from '../db/tables.js';
import { AppError } from '../http/errors.js';
import { everyLocationByPriority, levelsOfVariants } from '../inventory/stock-service.js';
import { attributeKeysOf, variantsOldestFirstPage, type VariantFilter } from '../variants/variant-service.js';
import { spreadsheetSafe, withoutFormulaQuote } from './cell-text.js';
import { ATTRIBUTE_PREFIX, KNOWN_COLUMNS, STOCK_PREFIX } from './import-files.js';
import { deleteUpload, importErrorColumns, importErrorsAfter, insertUploadPiece, newUploadId, UPLOAD_PIECE_BYTES } from './import-repository.js';

const EXPORT_COLUMNS = ['id', 'sku', 'product_id', 'name', 'price', 'stock'] as const;
/**
 * The failed rows an error report reads a statement: a row may be 64 KiB, so a page is at most
 * about 2 MiB, and a download holds a page or two whatever the report's size (twelve downloads
 * of a 39 MiB report once held it whole, each, 1.4 GB in all).
 */
const REPORT_PAGE_ROWS = 32;

/** CSV lines of `rows`, each cell as a spreadsheet may open it safely (cell-text.ts). */
const csvLines = (rows: unknown[][]) => stringify(rows.map((row) => row.map(spreadsheetSafe)));

/**
 * Stores an upload as it arrives, a piece of about a megabyte at a time, and fingerprints it
 * (SHA-256) for Idempotency-Key. Past `maxBytes` it stops, drops what it stored, and answers 413.
 */
export async function storeUpload(db: Kysely<Database>, body: AsyncIterable<Buffer>, maxBytes: number): Promise<{ uploadId: string; size: number; sha256: string }> {
  const uploadId = newUploadId();
  const hash = createHash('sha256');
  let size = 0;
  let position = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    if (pendingBytes === 0) return;
    await insertUploadPiece(db, uploadId, position++, Buffer.concat(pending, pendingBytes));
    pending = [];
    pendingBytes = 0;
  };
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > maxBytes) throw new AppError('payload_too_large', `An import is at most ${maxBytes} bytes (IMPORT_MAX_BYTES).`);
      hash.update(chunk);
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= UPLOAD_PIECE_BYTES) await flush();
    }
    await flush();
  } catch (error) {
    await deleteUpload(db, uploadId);
    throw error;
  }
  return { uploadId, size, sha256: hash.digest('hex') };
}

/** Variants read a page at a time, each page with its stock at each location (API.md section 21). */
const EXPORT_PAGE_ROWS = 1000;

/** A variant as an export writes it: with its stock at every location, by code, when there is more than one. */
interface ExportedVariant {
  variant: VariantRow;
  stockByLocation?: Record<string, number>;
}

/**
 * The variants in pages of EXPORT_PAGE_ROWS. With several locations each page reads its
 * variants' levels in one statement, and every variant carries every location's stock, 0 where
 * it holds nothing, so the file imports back with every row unchanged; with one location the
 * file is as it always was.
 */
async function* exportPages(db: Kysely<Database>, filter: VariantFilter, locations: LocationRow[]): AsyncGenerator<ExportedVariant[]> {
  const perLocation = locations.length > 1;
  let page: VariantRow[] = [];
  const withLevels = async (variants: VariantRow[]): Promise<ExportedVariant[]> => {
    if (!perLocation) return variants.map((variant) => ({ variant }));
    const levels = await levelsOfVariants(db, variants.map((variant) => variant.id));
    const stockOf = new Map(levels.map((level) => [`${level.variant_id} ${level.location_id}`, level.stock]));
    return variants.map((variant) => ({ variant, stockByLocation: Object.fromEntries(locations.map((location) => [location.code, stockOf.get(`${variant.id} ${location.id}`) ?? 0])) }));
  };
  for await (const variant of everyRow((request) => variantsOldestFirstPage(db, filter, request), EXPORT_PAGE_ROWS)) {
    page.push(variant);
    if (page.length >= EXPORT_PAGE_ROWS) {
      yield await withLevels(page);
      page = [];
    }
  }
  if (page.length > 0) yield await withLevels(page);
}

const exportRow = ({ variant, stockByLocation }: ExportedVariant) => ({
  id: variant.id,
  sku: variant.sku,
  product_id: variant.product_id,
  name: variant.name,
  price: variant.price,
  // The levels are read after the page: a change between the two must not leave `stock` other than their total, which the import requires.
  stock: stockByLocation ? Object.values(stockByLocation).reduce((sum, stock) => sum + stock, 0) : variant.stock,
  ...(stockByLocation ? { stock_by_location: stockByLocation } : {}),
  attributes: variant.attributes,
});

/**
 * Every variant that matches the list's filters, oldest first, as CSV or JSON lines, a page at a
 * time: memory stays flat however large the catalogue. The columns are the import's, so an
 * exported file imports back with every row unchanged: with several locations, `stock` (the
 * total) and one `stock.<code>` column per location (JSON: `stock_by_location`), by priority.
 */
export async function* exportVariants(db: Kysely<Database>, filter: VariantFilter, format: ImportFormat): AsyncGenerator<string> {
  const locations = await everyLocationByPriority(db);
  const pages = exportPages(db, filter, locations);
  if (format === 'jsonl') {
    for await (const page of pages) yield page.map((exported) => `${JSON.stringify(exportRow(exported))}\n`).join('');
    return;
  }
  const keys = await attributeKeysOf(db, filter);
  const stockColumns = locations.length > 1 ? locations.map((location) => location.code) : [];
  const columns = [...EXPORT_COLUMNS, ...stockColumns.map((code) => `${STOCK_PREFIX}${code}`), ...keys.map((key) => `${ATTRIBUTE_PREFIX}${key}`)];
  yield stringify([columns]);
  for await (const page of pages) {
    yield csvLines(
      page.map(({ variant, stockByLocation }) => [
        ...EXPORT_COLUMNS.map((column) => variant[column]),
        ...stockColumns.map((code) => stockByLocation![code]),
        ...keys.map((key) => variant.attributes[key] ?? ''),
      ]),
    );
  }
}

/**
 * The failed rows of an import in the file's own format, each with its `line` and `error` first:
 * CSV with the file's columns, or JSON lines with the row's object (or its text, when it was not
 * JSON). The importer ignores `line` and `error`, so the fixed file uploads as it is. Read a
 * keyset page of REPORT_PAGE_ROWS at a time, each page yielded before the next is read, so the
 * reader's pace (backpressure) decides how much is read.
 */
export async function* errorReport(db: Kysely<Database>, importId: string, format: ImportFormat): AsyncGenerator<string> {
  let columns: string[] = [];
  if (format === 'csv') {
    const present = new Set(await importErrorColumns(db, importId));
    const known = KNOWN_COLUMNS.filter((column) => present.has(column));
    const stock = [...present].filter((column) => column.startsWith(STOCK_PREFIX)).sort();
    const attributes = [...present].filter((column) => column.startsWith(ATTRIBUTE_PREFIX)).sort();
    columns = [...known, ...stock, ...attributes];
    yield stringify([['line', 'error', ...columns]]);
  }
  let afterLine = 0;
  for (;;) {
    const page = await importErrorsAfter(db, importId, afterLine, REPORT_PAGE_ROWS);
    if (page.length === 0) return;
    afterLine = page[page.length - 1]!.line;
    if (format === 'csv') {
      // A cell is written as the import read it (a `'` it took off is not doubled), then made safe again.
      const cellOf = (row: (typeof page)[number], column: string) => withoutFormulaQuote(String((row.fields as Record<string, unknown>)[column] ?? ''));
      yield csvLines(page.map((row) => [row.line, row.error, ...columns.map((column) => cellOf(row, column))]));
    } else {
      yield page
        .map((row) => JSON.stringify(row.fields !== null && typeof row.fields === 'object' && !Array.isArray(row.fields) ? { ...row.fields, line: row.line, error: row.error } : { line: row.line, error: row.error, text: row.fields }))
        .join('\n')
        .concat('\n');
    }
  }
}

/** The OpenAPI reply of a catalogue file: CSV or JSON lines, as an attachment. */
export function catalogueFileReply(description: string) {
  return {
    description,
    headers: { 'content-disposition': { description: '`attachment; filename="…"`', schema: { type: 'string' } } },
    content: {
      'text/csv': { schema: { type: 'string', description: 'RFC 4180, UTF-8, a header line first.' } },
      'application/x-ndjson': { schema: { type: 'string', description: 'One JSON object per line.' } },
    },
  };
}
