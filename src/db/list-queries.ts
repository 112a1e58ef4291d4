import type { ExpressionBuilder, SelectQueryBuilder } from 'kysely';

/** One page to read: at most `limit` rows after the (created_at, id) position of `after`. */
export interface PageRequest {
  limit: number;
  after?: { createdAt: Date; id: string } | undefined;
}

export type KeysetOrder = 'newest-first' | 'oldest-first';

/**
 * Applies a keyset page to a query over a table with `created_at` and `id`: the row-value
 * comparison `(created_at, id) < / > (cursor)` lets PostgreSQL walk an index on (created_at, id)
 * straight to the cursor. One row more than the page is read, to tell whether another page
 * exists. Kysely cannot type a column shared by several tables, hence the loose builder.
 */
export function keysetPage<Query extends SelectQueryBuilder<any, any, any>>(
  query: Query,
  page: PageRequest,
  order: KeysetOrder,
  /** The table whose (created_at, id) keys the page, when the query joins others. */
  table?: string,
): Query {
  const direction = order === 'newest-first' ? 'desc' : 'asc';
  const [createdAt, id] = table ? [`${table}.created_at`, `${table}.id`] : ['created_at', 'id'];
  let paged = query as SelectQueryBuilder<any, any, any>;
  const after = page.after;
  if (after) {
    paged = paged.where((eb: ExpressionBuilder<any, any>) =>
      eb(eb.refTuple(createdAt, id), direction === 'desc' ? '<' : '>', eb.tuple(after.createdAt, after.id)),
    );
  }
  return paged.orderBy(createdAt, direction).orderBy(id, direction).limit(page.limit + 1) as Query;
}

/** Counts the rows a list query matches (its `include_total`), before any page is applied. */
export async function countRows(query: SelectQueryBuilder<any, any, any>): Promise<number> {
  const row = await query.select((eb: ExpressionBuilder<any, any>) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow();
  return Number((row as { total: unknown }).total);
}

/** An ILIKE pattern for "contains `text`", with LIKE's own wildcards in `text` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/**
 * Every row of a keyset-paged query, read a page at a time (an export streams a user's history
 * this way, in flat memory however long it is). `page` reads one page as keysetPage does: one
 * row more than asked, to tell whether another page follows.
 */
export async function* everyRow<Row extends { created_at: Date; id: string }>(page: (request: PageRequest) => Promise<Row[]>, pageSize = 500): AsyncGenerator<Row> {
  let after: PageRequest['after'];
  for (;;) {
    const rows = await page({ limit: pageSize, after });
    const kept = rows.slice(0, pageSize);
    for (const row of kept) yield row;
    if (rows.length <= pageSize) return;
    const last = kept[kept.length - 1]!;
    after = { createdAt: last.created_at, id: last.id };
  }
}
