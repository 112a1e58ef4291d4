import type { ExpressionBuilder } from 'kysely';

/**
 * The keyset condition `(created_at, id) > / < (cursor)`, written as a row-value comparison so
 * that PostgreSQL walks an index on (created_at, id) straight to the cursor. Every paged table
 * has both columns; Kysely cannot type a column shared by several tables, hence the loose builder.
 */
export function afterCursor(
  eb: ExpressionBuilder<any, any>,
  after: { createdAt: Date; id: string },
  direction: 'older' | 'newer',
) {
  return eb(eb.refTuple('created_at', 'id'), direction === 'older' ? '<' : '>', eb.tuple(after.createdAt, after.id));
}
