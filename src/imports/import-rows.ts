import { MAX_STOCK } from '../inventory/stock-service.js';
import { textProblem, withoutFormulaQuote } from './cell-text.js';
import { ATTRIBUTE_PREFIX, REPORT_COLUMNS, STOCK_PREFIX, type FileRow } from './import-files.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const JSON_KEYS = new Set(['id', 'sku', 'product_id', 'name', 'price', 'stock', 'stock_by_location', 'attributes', ...REPORT_COLUMNS]);

/** The locations an import's `stock.<code>` cells may name, by their code in lower case (codes match in any case). */
export type LocationsByCode = ReadonlyMap<string, { id: string; code: string }>;

/** A row's stock at one location: the location's id, its stored code (for messages), the units. */
export interface StockAtLocation {
  location_id: string;
  code: string;
  stock: number;
}

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
  /** The `stock.<code>` cells (JSON: `stock_by_location`) that set a location's stock, each location once. */
  stockAt?: StockAtLocation[];
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

/** A location's units as a row gives them (`field` names the cell in messages), within 0..1e9. */
function unitsOf(value: unknown, field: string): number | string {
  const units = integerOf(value, field);
  if (typeof units === 'string') return units;
  if (units < 0) return `${field} must be at least 0`;
  if (units > MAX_STOCK) return `${field} must be at most ${MAX_STOCK}`;
  return units;
}

/** Adds a location's units to a row, refusing a location the row already named (in another case). */
function addStockAt(request: RowRequest, location: { id: string; code: string }, units: number, field: string): string | undefined {
  request.stockAt ??= [];
  if (request.stockAt.some((named) => named.location_id === location.id)) return `${field} names location ${location.code} a second time`;
  request.stockAt.push({ location_id: location.id, code: location.code, stock: units });
  return undefined;
}

/**
 * A CSV row: an empty cell leaves its field as it is, except an empty attributes.<key>, which
 * removes the key. A cell written with a leading `'` so that a spreadsheet does not run it
 * (cell-text.ts) loses that `'` first.
 */
function fromCells(raw: Record<string, string>, locations: LocationsByCode): RowRequest | string {
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
    if (column.startsWith(STOCK_PREFIX)) {
      // The header was checked against the locations (import-files.ts), so the code is known.
      const location = locations.get(column.slice(STOCK_PREFIX.length).toLowerCase());
      if (!location) return `unknown column "${column}"`;
      const units = unitsOf(cell, column);
      if (typeof units === 'string') return units;
      const problem = addStockAt(request, location, units, column);
      if (problem) return problem;
      continue;
    }
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

/**
 * `stock_by_location: {code: units}`: each code a location's (any case, each once); `null` units
 * are 0, as `stock: null` is. An unknown code fails the row (API.md section 21).
 */
function readStockByLocation(value: unknown, request: RowRequest, locations: LocationsByCode): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'stock_by_location must be an object of location codes and units';
  for (const [code, units] of Object.entries(value as Record<string, unknown>)) {
    const field = `stock_by_location.${code.length > 60 ? `${code.slice(0, 60)}…` : code}`;
    const location = locations.get(code.toLowerCase());
    if (!location) return `${field} names no location`;
    if (units !== null && typeof units !== 'number') return `${field} must be a whole number`;
    const read = units === null ? 0 : unitsOf(units, field);
    if (typeof read === 'string') return read;
    const problem = addStockAt(request, location, read, field);
    if (problem) return problem;
  }
  return undefined;
}

/** A JSON line: a key left out leaves its field; in `attributes`, null removes a key; `stock: null` is 0, as in a PATCH. */
function fromJson(value: unknown, locations: LocationsByCode): RowRequest | string {
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
  if (object.stock_by_location !== undefined) {
    const stockProblem = readStockByLocation(object.stock_by_location, request, locations);
    if (stockProblem) return stockProblem;
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

/** A file row read as a request, or the reason it cannot be; `locations`: what its stock cells may name. */
export function readRow(row: FileRow, format: 'csv' | 'jsonl', locations: LocationsByCode): ReadRow {
  if (row.unreadable) return { line: row.line, source: row.source, problem: `the row ${row.unreadable}` };
  const request = format === 'csv' ? fromCells(row.source as Record<string, string>, locations) : fromJson(row.source, locations);
  if (typeof request === 'string') return { line: row.line, source: row.source, problem: request };
  if (request.sku === '') return { line: row.line, source: row.source, problem: 'sku is required' };
  if (request.id !== undefined && !UUID.test(request.id)) return { line: row.line, source: row.source, problem: 'id must be a UUID' };
  if (request.id !== undefined) request.id = request.id.toLowerCase();
  return { line: row.line, source: row.source, request };
}
