/**
 * The text of a catalogue file's cells on their way out and back in (API.md section 17).
 *
 * A spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return as a
 * formula, so CSV exports and error reports write such a cell with a leading `'`, and an import
 * removes one. A cell that already starts with `'`s before such a character gets one more too:
 * without it, a name stored as `'=x` would be exported as it is and come back as `=x`, and the
 * exported file would no longer import back with every row unchanged.
 */
const RUNS_AS_FORMULA = /^'*[=+\-@\t\r]/;
const ESCAPED_FORMULA = /^'+[=+\-@\t\r]/;
/** Half of a UTF-16 surrogate pair without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NOT_STORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`, 'g');

/** A CSV cell as an export or an error report writes it. */
export function spreadsheetSafe(cell: unknown): unknown {
  return typeof cell === 'string' && RUNS_AS_FORMULA.test(cell) ? `'${cell}` : cell;
}

/** A CSV cell as an import reads it: one leading `'` before a formula's first character goes. */
export function withoutFormulaQuote(cell: string): string {
  return ESCAPED_FORMULA.test(cell) ? cell.slice(1) : cell;
}

/**
 * Text the database can store: PostgreSQL refuses U+0000 in text and jsonb, and a lone UTF-16
 * surrogate (which a JSON line can spell as `\ud800`) in jsonb. The failed rows and their messages
 * are kept with such characters as U+FFFD, so a bad cell fails its row, never the import.
 */
export function storableText(text: string): string {
  return text.replace(NOT_STORABLE, '\uFFFD');
}

/** A row's source (cells, a JSON value, or a line's text) with every string and key storable. */
export function storableValue(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableValue);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableText(key), storableValue(item)]));
  return value;
}

/** Where a string breaks what the database can store, said as section 1 says it; undefined when it does not. */
export function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(text)) return 'must be valid Unicode text (it has a lone surrogate)';
  return undefined;
}
