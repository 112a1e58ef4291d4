import { createHash } from 'node:crypto';
import { stringify } from 'csv-stringify/sync';
import type { Kysely } from 'kysely';
import { everyRow } from '../db/list-queries.js';
import type { Database, ImportFormat, VariantRow } from '../db/tables.js';
import { AppError } from '../http/errors.js';
import { attributeKeysOf, variantsOldestFirstPage, type VariantFilter } from '../variants/variant-service.js';
import { spreadsheetSafe, withoutFormulaQuote } from './cell-text.js';
import { ATTRIBUTE_PREFIX, KNOWN_COLUMNS } from './import-files.js';
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

const exportRow = (variant: VariantRow) => ({
  id: variant.id,
  sku: variant.sku,
  product_id: variant.product_id,
  name: variant.name,
  price: variant.price,
  stock: variant.stock,
  attributes: variant.attributes,
});

/**
 * Every variant that matches the list's filters, oldest first, as CSV or JSON lines, a page at a
 * time: memory stays flat however large the catalogue. The columns are the import's, so an
 * exported file imports back with every row unchanged.
 */
export async function* exportVariants(db: Kysely<Database>, filter: VariantFilter, format: ImportFormat): AsyncGenerator<string> {
  const rows = everyRow((page) => variantsOldestFirstPage(db, filter, page), 1000);
  if (format === 'jsonl') {
    let text = '';
    for await (const variant of rows) {
      text += `${JSON.stringify(exportRow(variant))}\n`;
      if (text.length >= 64 * 1024) {
        yield text;
        text = '';
      }
    }
    if (text !== '') yield text;
    return;
  }
  const keys = await attributeKeysOf(db, filter);
  const columns = [...EXPORT_COLUMNS, ...keys.map((key) => `${ATTRIBUTE_PREFIX}${key}`)];
  yield stringify([columns]);
  let page: unknown[][] = [];
  for await (const variant of rows) {
    page.push([...EXPORT_COLUMNS.map((column) => variant[column]), ...keys.map((key) => variant.attributes[key] ?? '')]);
    if (page.length >= 1000) {
      yield csvLines(page);
      page = [];
    }
  }
  if (page.length > 0) yield csvLines(page);
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
    const attributes = [...present].filter((column) => column.startsWith(ATTRIBUTE_PREFIX)).sort();
    columns = [...known, ...attributes];
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
