import { Type, type TSchema } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { PageRequest } from '../db/list-queries.js';
import type { Database } from '../db/tables.js';
import { CANONICAL_UUID } from './common-schemas.js';
import { invalidParameter } from './errors.js';

const DEFAULT_PAGE_SIZE = 20;
const MAX_CURSOR_LENGTH = 200;
// Dates PostgreSQL's timestamptz and JSON both hold without surprise; a cursor outside them is forged.
const EARLIEST_CURSOR_TIME = Date.UTC(1, 0, 1);
const LATEST_CURSOR_TIME = Date.UTC(9999, 11, 31);

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: DEFAULT_PAGE_SIZE, description: 'Page size, 1 to 100.' })),
  cursor: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'Opaque cursor: `next_cursor` of the previous page. One the service did not issue is 400 `invalid_parameter`.',
    }),
  ),
  include_total: Type.Optional(
    Type.Boolean({ default: false, description: 'Add `total`, the count of all rows matching the filters.' }),
  ),
};

export interface PageParameters {
  limit?: number | undefined;
  cursor?: string | undefined;
  include_total?: boolean | undefined;
}

export function PageSchema<Item extends TSchema>(item: Item) {
  return Type.Object({
    items: Type.Array(item),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the next page; null on the last page.' }),
    total: Type.Optional(Type.Integer({ minimum: 0, description: 'With `include_total=true`: every row that matches the filters.' })),
  });
}

export function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify([createdAt.toISOString(), id])).toString('base64url');
}

function pageRequest(query: PageParameters): PageRequest {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (query.cursor === undefined) return { limit };
  return { limit, after: decodeCursor(query.cursor) };
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  let decoded: unknown;
  try {
    if (cursor.length > MAX_CURSOR_LENGTH) throw new RangeError('too long');
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidParameter('The cursor is malformed.');
  }
  if (Array.isArray(decoded) && decoded.length === 2) {
    const [timestamp, id] = decoded as unknown[];
    const createdAt = typeof timestamp === 'string' ? new Date(timestamp) : undefined;
    const time = createdAt?.getTime() ?? Number.NaN;
    if (createdAt && time >= EARLIEST_CURSOR_TIME && time <= LATEST_CURSOR_TIME && typeof id === 'string' && CANONICAL_UUID.test(id)) {
      return { createdAt, id };
    }
  }
  throw invalidParameter('The cursor is malformed.');
}

export interface Page<Item> {
  items: Item[];
  next_cursor: string | null;
  total?: number;
}

/**
 * What a list reads through: the request's admission (sessions/admission.ts), seen from here.
 * Its `admit()` gives the database only with an admitted caller.
 */
export interface PageAdmission {
  admit(): Promise<{ db: Kysely<Database> }>;
}

/**
 * One list reply: reads the page (one row more than asked, see keysetPage), turns rows into
 * items, sets `next_cursor` from the last row, and counts every match when asked. The count is
 * handed the database by the admission, so it can run only for an admitted caller, whatever
 * `rows` did (after a `readPage`, `admit()` reuses its decision and costs no statement).
 */
export async function listPage<Row extends { created_at: Date; id: string }, Item>(
  query: PageParameters,
  admission: PageAdmission,
  source: { rows: (page: PageRequest) => Promise<Row[]>; count: (db: Kysely<Database>) => Promise<number>; toItem: (row: Row) => Item },
): Promise<Page<Item>> {
  const page = pageRequest(query);
  const rows = await source.rows(page);
  const pageRows = rows.slice(0, page.limit);
  const last = pageRows.at(-1);
  const body: Page<Item> = {
    items: pageRows.map(source.toItem),
    next_cursor: rows.length > page.limit && last ? encodeCursor(last.created_at, last.id) : null,
  };
  if (query.include_total) body.total = await source.count((await admission.admit()).db);
  return body;
}
