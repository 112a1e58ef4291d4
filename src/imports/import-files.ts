import { Readable } from 'node:stream';
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
  const parser = Readable.from(pieces).pipe(parse({ bom: true, raw: true, relax_column_count: true, record_delimiter: ['\r\n', '\n'] }));
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
  let pending = '';
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
  for await (const piece of pieces) {
    pending += decoder.decode(piece, { stream: true });
    let start = 0;
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n', start)) {
      const row = rowOf(pending.slice(start, newline));
      start = newline + 1;
      if (row) yield row;
    }
    pending = pending.slice(start);
  }
  pending += decoder.decode();
  if (pending !== '') {
    const row = rowOf(pending);
    if (row) yield row;
  }
}

export const rowsOf = (format: ImportFormat, pieces: AsyncIterable<Uint8Array>) => (format === 'csv' ? csvRows(pieces) : jsonLines(pieces));
