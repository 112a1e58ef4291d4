import { Type, type TSchema } from '@sinclair/typebox';
import { invalidParameter } from './errors.js';

export interface PageRequest {
  limit: number;
  after?: { createdAt: Date; id: string } | undefined;
}

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100.' }),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Opaque cursor: `next_cursor` of the previous page.' }),
  ),
  include_total: Type.Boolean({ default: false, description: 'Add `total`, the count of all rows matching the filters.' }),
};

export function PageSchema<Item extends TSchema>(item: Item) {
  return Type.Object({
    items: Type.Array(item),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the next page; null on the last page.' }),
    total: Type.Optional(Type.Integer({ minimum: 0 })),
  });
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify([createdAt.toISOString(), id])).toString('base64url');
}

export function pageRequest(query: { limit: number; cursor?: string | undefined }): PageRequest {
  if (query.cursor === undefined) return { limit: query.limit };
  return { limit: query.limit, after: decodeCursor(query.cursor) };
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidParameter('The cursor is malformed.');
  }
  if (Array.isArray(decoded) && decoded.length === 2) {
    const [timestamp, id] = decoded as unknown[];
    const createdAt = typeof timestamp === 'string' ? new Date(timestamp) : undefined;
    if (createdAt && !Number.isNaN(createdAt.getTime()) && typeof id === 'string' && UUID_PATTERN.test(id)) {
      return { createdAt, id };
    }
  }
  throw invalidParameter('The cursor is malformed.');
}

/** Rows were fetched with limit + 1; the extra row only says that another page exists. */
export function toPage<Row extends { created_at: Date; id: string }, Item>(
  rows: Row[],
  limit: number,
  toItem: (row: Row) => Item,
): { items: Item[]; next_cursor: string | null } {
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return {
    items: pageRows.map(toItem),
    next_cursor: rows.length > limit && last ? encodeCursor(last.created_at, last.id) : null,
  };
}
