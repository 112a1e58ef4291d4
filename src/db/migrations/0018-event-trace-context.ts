import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Tracing (API.md section 15): an event keeps the W3C `traceparent` of the request that recorded
 * it, so its webhook deliveries link their spans to that trace; null with tracing off.
 */
export const eventTraceContext: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table events add column trace_parent text`.execute(db);
  },
};
