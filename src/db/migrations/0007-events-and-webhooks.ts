import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The audit log and the webhook outbox. Events are read newest first, by subject, by actor or
 * by type, so each of those has an index that ends in (created_at, id) for keyset pages. A
 * delivery row per (event, webhook) is written in the transaction of the change (the outbox);
 * workers find due ones through the partial index on next_attempt_at.
 */
export const eventsAndWebhooks: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table events (
        id uuid primary key,
        type text not null,
        created_at timestamptz not null,
        actor_id uuid,
        request_id text,
        subject_type text not null,
        subject_id uuid not null,
        data jsonb not null
      )`.execute(db);
    await sql`create index events_by_creation on events (created_at, id)`.execute(db);
    await sql`create index events_by_subject on events (subject_id, created_at, id)`.execute(db);
    await sql`create index events_by_actor on events (actor_id, created_at, id) where actor_id is not null`.execute(db);
    await sql`create index events_by_type on events (type, created_at, id)`.execute(db);

    await sql`
      create table webhooks (
        id uuid primary key,
        url text not null,
        events text[] not null,
        description text,
        enabled boolean not null default true,
        secret text not null,
        version integer not null default 1,
        failing_since timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`.execute(db);
    await sql`create index webhooks_by_creation on webhooks (created_at, id)`.execute(db);

    await sql`
      create table webhook_deliveries (
        id uuid primary key,
        webhook_id uuid not null references webhooks (id) on delete cascade,
        event_id uuid not null references events (id) on delete cascade,
        status text not null check (status in ('pending', 'succeeded', 'failed')),
        attempts integer not null default 0,
        last_status_code integer,
        last_error text,
        next_attempt_at timestamptz not null,
        claimed_until timestamptz,
        created_at timestamptz not null,
        delivered_at timestamptz,
        unique (event_id, webhook_id)
      )`.execute(db);
    await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(db);
    await sql`create index webhook_deliveries_by_webhook on webhook_deliveries (webhook_id, created_at, id)`.execute(db);
  },
};
