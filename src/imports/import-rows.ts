import { textProblem, withoutFormulaQuote } from './cell-text.js';
import { ATTRIBUTE_PREFIX, REPORT_COLUMNS, type FileRow } from './import-files.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const JSON_KEYS = new Set(['id', 'sku', 'product_id', 'name', 'price', 'stock', 'attributes', ...REPORT_COLUMNS]);

/**
 * What one row asks for, before it meets the stored variant: the SKU it matches by, and each
 * field it sets (left out: kept on an update, missing on a create). `attributes` maps a key to
 * its new value, or to null to remove it.
 */
export interface RowRequest {
  sku: string;
  id?: string;
  product_id?: string;
  name?: string;
  price?: number;
  stock?: number;
  attributes: Record<string, string | null>;
  /** JSON `attributes: null`: every key goes (as in a PATCH), before `attributes` is applied. */
  clearAttributes?: true;
}

export type ReadRow = { line: number; source: unknown; request: RowRequest } | { line: number; source: unknown; problem: string };

function integerOf(value: unknown, field: string): number | string {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,16}$/.test(value.trim())) return Number(value.trim());
  return `${field} must be a whole number`;
}

/**
 * A CSV row: an empty cell leaves its field as it is, except an empty attributes.<key>, which
 * removes the key. A cell written with a leading `'` so that a spreadsheet does not run it
 * (cell-text.ts) loses that `'` first.
 */
function fromCells(raw: Record<string, string>): RowRequest | string {
  const cells: Record<string, string> = {};
  for (const [column, cell] of Object.entries(raw)) {
    const problem = (REPORT_COLUMNS as readonly string[]).includes(column) ? undefined : textProblem(cell);
    if (problem) return `${column} ${problem}`;
    cells[column] = withoutFormulaQuote(cell);
  }
  const request: RowRequest = { sku: (cells.sku ?? '').trim(), attributes: {} };
  for (const [column, cell] of Object.entries(cells)) {
    if (column.startsWith(ATTRIBUTE_PREFIX)) {
      request.attributes[column.slice(ATTRIBUTE_PREFIX.length)] = cell === '' ? null : cell;
      continue;
    }
    if (cell.trim() === '' || column === 'sku' || (REPORT_COLUMNS as readonly string[]).includes(column)) continue;
    if (column === 'price' || column === 'stock') {
      const number = integerOf(cell, column);
      if (typeof number === 'string') return number;
      request[column] = number;
    } else {
      request[column as 'id' | 'product_id' | 'name'] = cell.trim();
    }
  }
  return request;
}

/** The first string of a JSON value (a key included) the database could not store, as `<path> <rule>`. */
function jsonTextProblem(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem && `${path || 'the row'} ${problem}`;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const keyProblem = textProblem(key);
    if (keyProblem) return `a key of ${path || 'the row'} ${keyProblem}`;
    const problem = jsonTextProblem(item, path ? `${path}.${key}` : key);
    if (problem) return problem;
  }
  return undefined;
}

/** A JSON line: a key left out leaves its field; in `attributes`, null removes a key; `stock: null` is 0, as in a PATCH. */
function fromJson(value: unknown): RowRequest | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'must be a JSON object';
  const object = value as Record<string, unknown>;
  const problem = jsonTextProblem(object, '');
  if (problem) return problem;
  const unknown = Object.keys(object).find((key) => !JSON_KEYS.has(key));
  if (unknown !== undefined) return `unknown key "${unknown.length > 60 ? `${unknown.slice(0, 60)}…` : unknown}"`;
  if (typeof object.sku !== 'string') return 'sku must be a string';
  const request: RowRequest = { sku: object.sku.trim(), attributes: {} };
  for (const field of ['id', 'product_id', 'name'] as const) {
    if (object[field] === undefined) continue;
    if (typeof object[field] !== 'string') return `${field} must be a string`;
    request[field] = (object[field] as string).trim();
  }
  for (const field of ['price', 'stock'] as const) {
    if (object[field] === undefined) continue;
    if (field === 'stock' && object.stock === null) {
      request.stock = 0;
      continue;
    }
    if (typeof object[field] !== 'number') return `${field} must be a whole number`;
    const number = integerOf(object[field], field);
    if (typeof number === 'string') return number;
    request[field] = number;
  }
  if (object.attributes === null) request.clearAttributes = true;
  if (object.attributes !== undefined && object.attributes !== null) {
    if (typeof object.attributes !== 'object' || Array.isArray(object.attributes)) return 'attributes must be an object';
    for (const [key, attribute] of Object.entries(object.attributes as Record<string, unknown>)) {
      if (attribute !== null && typeof attribute !== 'string') return `attributes.${key} must be a string or null`;
      request.attributes[key] = attribute as string | null;
    }
  }
  return request;
}

/** A file row read as a request, or the reason it cannot be. */
export function readRow(row: FileRow, format: 'csv' | 'jsonl'): ReadRow {
  if (row.unreadable) return { line: row.line, source: row.source, problem: `the row ${row.unreadable}` };
  const request = format === 'csv' ? fromCells(row.source as Record<string, string>) : fromJson(row.source);
  if (typeof request === 'string') return { line: row.line, source: row.source, problem: request };
  if (request.sku === '') return { line: row.line, source: row.source, problem: 'sku is required' };
  if (request.id !== undefined && !UUID.test(request.id)) return { line: row.line, source: row.source, problem: 'id must be a UUID' };
  if (request.id !== undefined) request.id = request.id.toLowerCase();
  return { line: row.line, source: row.source, request };
}
