import { pipeline, Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { CsvError, parse } from 'csv-parse';
import type { ImportFormat } from '../db/tables.js';
import { MAX_ATTRIBUTE_KEYS } from '../variants/variant-schemas.js';
import { textProblem } from './cell-text.js';

/** A row of an import file: where it starts, and its cells (CSV, by column) or its JSON value. */
export interface FileRow {
  line: number;
  /** CSV: the cells by column name. JSON lines: the parsed value (or the line's text, unparsed). */
  source: Record<string, string> | unknown;
  /** Set when the row cannot be read at all (a JSON line that is not JSON). */
  unreadable?: string;
}

/** A file the import cannot read past (a bad CSV header, a broken quote): the import fails at `line`. */
export class FileProblem extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

export const KNOWN_COLUMNS = ['id', 'sku', 'product_id', 'name', 'price', 'stock'] as const;
export const ATTRIBUTE_PREFIX = 'attributes.';
/** A column `stock.<code>`: the stock at the location of that code (any case). */
export const STOCK_PREFIX = 'stock.';
/** The columns an error report adds; an upload of a fixed report ignores them. */
export const REPORT_COLUMNS = ['line', 'error'] as const;

/** The most columns a CSV header may have (its `attributes.` columns are at most MAX_ATTRIBUTE_KEYS, a variant's keys). */
const MAX_COLUMNS = 200;
/** The most bytes a row may take (a CSV record, a JSON line); a longer one fails, unread. */
const MAX_ROW_BYTES = 64 * 1024;
const OVERSIZED = `is over ${MAX_ROW_BYTES / 1024} KiB`;

/**
 * Refuses a header before anything is built from it: its columns are counted first, as every
 * row is later made into an object of that many cells (400,000 columns held the event loop for
 * each row, and the instance died).
 */
function checkHeader(header: string[], locationCodes: ReadonlySet<string>): void {
  if (header.length > MAX_COLUMNS) throw new FileProblem(1, `the header has ${header.length} columns: at most ${MAX_COLUMNS}`);
  const attributeColumns = header.filter((column) => column.startsWith(ATTRIBUTE_PREFIX)).length;
  if (attributeColumns > MAX_ATTRIBUTE_KEYS) {
    throw new FileProblem(1, `the header has ${attributeColumns} attributes.<key> columns: a variant holds at most ${MAX_ATTRIBUTE_KEYS} attribute keys`);
  }
  const seen = new Set<string>();
  for (const column of header) {
    // Checked before the name is quoted in a message, which the database must be able to store.
    const problem = textProblem(column);
    if (problem) throw new FileProblem(1, `a column name ${problem}`);
    const location = column.startsWith(STOCK_PREFIX) ? column.slice(STOCK_PREFIX.length).toLowerCase() : undefined;
    const known = (KNOWN_COLUMNS as readonly string[]).includes(column) || (REPORT_COLUMNS as readonly string[]).includes(column) || (location !== undefined && locationCodes.has(location));
    const key = column.startsWith(ATTRIBUTE_PREFIX) ? column.slice(ATTRIBUTE_PREFIX.length) : undefined;
    if (!known && (key === undefined || key.length < 1 || key.length > 50)) {
      throw new FileProblem(
        1,
        `unknown column "${shortened(column)}": the columns are ${KNOWN_COLUMNS.join(', ')}, stock.<code> (the code of a location) and attributes.<key> (a key of 1 to 50 characters)`,
      );
    }
    // Codes match in any case, so stock.A and stock.a name one location twice.
    const name = location !== undefined ? `${STOCK_PREFIX}${location}` : column;
    if (seen.has(name)) throw new FileProblem(1, `the column "${shortened(column)}" appears twice`);
    seen.add(name);
  }
  if (!seen.has('sku')) throw new FileProblem(1, 'the header has no "sku" column');
}

/** A file's text quoted in a message, cut short: a message names the problem, it does not copy the file. */
const shortened = (text: string) => (text.length > 60 ? `${text.slice(0, 60)}…` : text);

/** What is wrong with a file the CSV parser stopped at, in the words of RFC 4180, not the parser's. */
function csvProblemOf(error: CsvError): string {
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') return 'not valid CSV: a quoted field is not closed before the end of the file';
  if (error.code === 'INVALID_OPENING_QUOTE') return 'not valid CSV: a quote may only open a field (write the field in quotes, with each quote inside doubled)';
  if (error.code === 'CSV_INVALID_CLOSING_QUOTE' || error.code === 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE') {
    return 'not valid CSV: a quoted field must end at a comma or a line break (a quote inside it is written twice)';
  }
  return 'not valid CSV (RFC 4180)';
}

/**
 * The rows of a CSV file (RFC 4180: quoted fields with commas, quotes and newlines; a UTF-8 BOM
 * ignored; CRLF or LF), read as the pieces arrive. Line 1 is the header; each row carries the
 * line it starts on; blank lines are skipped. A failed read of the pieces (the database went
 * away) ends the rows with that error, not as a file problem: the run fails and is tried again.
 * `locationCodes` (lower case) are the codes a `stock.<code>` column may name.
 */
export async function* csvRows(pieces: AsyncIterable<Uint8Array>, locationCodes: ReadonlySet<string>): AsyncGenerator<FileRow> {
  // One slice read ahead at most: slices read ahead are parsed without a turn of the event loop.
  // pipeline, not pipe: a failed read must reach the parser (pipe left it an uncaught error).
  const parser = parse({ bom: true, raw: true, relax_column_count: true, record_delimiter: ['\r\n', '\n'] });
  pipeline(Readable.from(pieces, { highWaterMark: 1 }), parser, () => undefined);
  let header: string[] | undefined;
  let line = 1;
  try {
    for await (const { record, raw } of parser as AsyncIterable<{ record: string[]; raw: string }>) {
      const start = line;
      // A record ends with one newline (a CRLF shows as its CR); quoted newlines inside count too.
      line += (raw.match(/\n/g)?.length ?? 0) + (raw.endsWith('\r') ? 1 : 0);
      if (!header) {
        header = record.map((column) => column.trim());
        checkHeader(header, locationCodes);
        continue;
      }
      if (record.length === 1 && record[0] === '') continue;
      if (Buffer.byteLength(raw) > MAX_ROW_BYTES) {
        yield { line: start, source: {}, unreadable: OVERSIZED };
        continue;
      }
      if (record.length !== header.length) {
        yield { line: start, source: Object.fromEntries(header.map((column, index) => [column, record[index] ?? ''])), unreadable: `has ${record.length} fields where the header has ${header.length}` };
        continue;
      }
      yield { line: start, source: Object.fromEntries(header.map((column, index) => [column, record[index]!])) };
    }
  } catch (error) {
    if (error instanceof FileProblem) throw error;
    if (!(error instanceof CsvError)) throw error;
    throw new FileProblem((error as { lines?: number }).lines ?? line, csvProblemOf(error));
  } finally {
    parser.destroy();
  }
  if (!header) throw new FileProblem(1, 'the file is empty: a CSV import starts with a header line');
}

/** How deep a JSON line may nest: a row is an object of strings; its value is walked and stored by recursion, which must not run out of stack. */
const MAX_JSON_NESTING = 16;

/** The deepest nesting of arrays and objects in a JSON text, read without parsing it (brackets inside strings do not count). */
function nestingOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') deepest = Math.max(deepest, ++depth);
    else if (char === '}' || char === ']') depth--;
  }
  return deepest;
}

/** The rows of a JSON lines file, one JSON object per line; blank lines are skipped; a line over MAX_ROW_BYTES fails, unparsed. */
export async function* jsonLines(pieces: AsyncIterable<Uint8Array>): AsyncGenerator<FileRow> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let line = 0;
  const rowOf = (text: string | undefined): FileRow | undefined => {
    line += 1;
    if (text === undefined) return { line, source: '', unreadable: OVERSIZED };
    const trimmed = text.replace(/\r$/, '').replace(/^\uFEFF/, '');
    if (trimmed.trim() === '') return undefined;
    if (nestingOf(trimmed) > MAX_JSON_NESTING) return { line, source: trimmed, unreadable: `nests arrays or objects more than ${MAX_JSON_NESTING} deep` };
    try {
      return { line, source: JSON.parse(trimmed) as unknown };
    } catch {
      return { line, source: trimmed, unreadable: 'is not valid JSON' };
    }
  };
  // The text of the line not yet ended, in parts: only the new text is searched for a newline,
  // so a very long line costs its length once, not once a slice. Past MAX_ROW_BYTES the parts
  // are dropped (the line fails whole), so a line as long as the file is never held.
  let parts: string[] = [];
  let bytes = 0;
  const add = (part: string) => {
    bytes += Buffer.byteLength(part);
    if (bytes <= MAX_ROW_BYTES) parts.push(part);
    else parts = [];
  };
  const take = () => {
    const text = bytes <= MAX_ROW_BYTES ? parts.join('') : undefined;
    parts = [];
    bytes = 0;
    return text;
  };
  for await (const piece of pieces) {
    const text = decoder.decode(piece, { stream: true });
    let start = 0;
    for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
      add(text.slice(start, newline));
      const row = rowOf(take());
      start = newline + 1;
      if (row) yield row;
    }
    if (start < text.length) add(text.slice(start));
  }
  add(decoder.decode());
  if (bytes > 0) {
    const row = rowOf(take());
    if (row) yield row;
  }
}

/** The most of a file parsed in one go; see inSlices. */
const SLICE_BYTES = 16 * 1024;

/**
 * The pieces cut into slices of at most SLICE_BYTES, with a turn of the event loop before each
 * slice after the first of a piece. A parser given a whole megabyte piece parsed its 30,000
 * rows in one go, holding every request the instance was serving for a fifth of a second.
 */
async function* inSlices(pieces: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  for await (const piece of pieces) {
    for (let at = 0; at < piece.byteLength; at += SLICE_BYTES) {
      if (at > 0) await setImmediate();
      yield piece.subarray(at, at + SLICE_BYTES);
    }
  }
}

/**
 * The rows of an import file, read a slice at a time (inSlices). `locationCodes` (lower case):
 * the locations a CSV header's `stock.<code>` may name; any other is an unknown column.
 */
export const rowsOf = (format: ImportFormat, pieces: AsyncIterable<Uint8Array>, locationCodes: ReadonlySet<string>) =>
  format === 'csv' ? csvRows(inSlices(pieces), locationCodes) : jsonLines(inSlices(pieces));
