import { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { parse } from 'csv-parse';
import type { ImportFormat } from '../db/tables.js';

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
/** The columns an error report adds; an upload of a fixed report ignores them. */
export const REPORT_COLUMNS = ['line', 'error'] as const;

function checkHeader(header: string[]): void {
  const seen = new Set<string>();
  for (const column of header) {
    const known = (KNOWN_COLUMNS as readonly string[]).includes(column) || (REPORT_COLUMNS as readonly string[]).includes(column);
    const key = column.startsWith(ATTRIBUTE_PREFIX) ? column.slice(ATTRIBUTE_PREFIX.length) : undefined;
    if (!known && (key === undefined || key.length < 1 || key.length > 50)) {
      throw new FileProblem(1, `unknown column "${column}": the columns are ${KNOWN_COLUMNS.join(', ')} and attributes.<key> (a key of 1 to 50 characters)`);
    }
    if (seen.has(column)) throw new FileProblem(1, `the column "${column}" appears twice`);
    seen.add(column);
  }
  if (!seen.has('sku')) throw new FileProblem(1, 'the header has no "sku" column');
}

/**
 * The rows of a CSV file (RFC 4180: quoted fields with commas, quotes and newlines; a UTF-8 BOM
 * ignored; CRLF or LF), read as the pieces arrive. Line 1 is the header; each row carries the
 * line it starts on; blank lines are skipped.
 */
export async function* csvRows(pieces: AsyncIterable<Uint8Array>): AsyncGenerator<FileRow> {
  // One slice read ahead at most: slices read ahead are parsed without a turn of the event loop.
  const parser = Readable.from(pieces, { highWaterMark: 1 }).pipe(parse({ bom: true, raw: true, relax_column_count: true, record_delimiter: ['\r\n', '\n'] }));
  let header: string[] | undefined;
  let line = 1;
  try {
    for await (const { record, raw } of parser as AsyncIterable<{ record: string[]; raw: string }>) {
      const start = line;
      // A record ends with one newline (a CRLF shows as its CR); quoted newlines inside count too.
      line += (raw.match(/\n/g)?.length ?? 0) + (raw.endsWith('\r') ? 1 : 0);
      if (!header) {
        header = record.map((column) => column.trim());
        checkHeader(header);
        continue;
      }
      if (record.length === 1 && record[0] === '') continue;
      if (record.length !== header.length) {
        yield { line: start, source: Object.fromEntries(header.map((column, index) => [column, record[index] ?? ''])), unreadable: `has ${record.length} fields where the header has ${header.length}` };
        continue;
      }
      yield { line: start, source: Object.fromEntries(header.map((column, index) => [column, record[index]!])) };
    }
  } catch (error) {
    if (error instanceof FileProblem) throw error;
    const at = (error as { lines?: number }).lines ?? line;
    throw new FileProblem(at, `not valid CSV: ${(error as Error).message}`);
  }
  if (!header) throw new FileProblem(1, 'the file is empty: a CSV import starts with a header line');
}

/** The rows of a JSON lines file, one JSON object per line; blank lines are skipped. */
export async function* jsonLines(pieces: AsyncIterable<Uint8Array>): AsyncGenerator<FileRow> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let line = 0;
  const rowOf = (text: string): FileRow | undefined => {
    line += 1;
    const trimmed = text.replace(/\r$/, '').replace(/^\uFEFF/, '');
    if (trimmed.trim() === '') return undefined;
    try {
      return { line, source: JSON.parse(trimmed) as unknown };
    } catch {
      return { line, source: trimmed, unreadable: 'is not valid JSON' };
    }
  };
  // The text of the line not yet ended, in parts: only the new text is searched for a newline,
  // so a very long line costs its length once, not once a slice.
  let parts: string[] = [];
  for await (const piece of pieces) {
    const text = decoder.decode(piece, { stream: true });
    let start = 0;
    for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
      parts.push(text.slice(start, newline));
      const row = rowOf(parts.join(''));
      parts = [];
      start = newline + 1;
      if (row) yield row;
    }
    if (start < text.length) parts.push(text.slice(start));
  }
  const rest = parts.join('') + decoder.decode();
  if (rest !== '') {
    const row = rowOf(rest);
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

/** The rows of an import file, read a slice at a time (inSlices). */
export const rowsOf = (format: ImportFormat, pieces: AsyncIterable<Uint8Array>) => (format === 'csv' ? csvRows(inSlices(pieces)) : jsonLines(inSlices(pieces)));
