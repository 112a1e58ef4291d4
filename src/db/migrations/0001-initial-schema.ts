import { sql, type Kysely, type Migration } from 'kysely';

export const initialSchema: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table users (
        id uuid primary key,
        email text not null,
        name text not null,
        phone text,
        role text not null default 'user' check (role in ('user', 'manager', 'admin')),
        status text not null default 'active' check (status in ('active', 'suspended')),
        balance bigint not null default 0 check (balance >= 0 and balance <= 1000000000000000),
        password_hash text not null,
        session_version integer not null default 1,
        version integer not null default 1,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        deleted_at timestamptz
      )`.execute(db);
    await sql`create unique index users_email_unique on users (lower(email)) where deleted_at is null`.execute(db);
    await sql`create index users_newest_first on users (created_at desc, id desc) where deleted_at is null`.execute(db);
    await sql`create index users_admins on users (role, status) where deleted_at is null`.execute(db);

    await sql`
      create table refresh_tokens (
        id uuid primary key,
        user_id uuid not null references users (id),
        family_id uuid not null,
        token_hash text not null unique,
        expires_at timestamptz not null,
        created_at timestamptz not null default now(),
        used_at timestamptz,
        revoked_at timestamptz
      )`.execute(db);
    await sql`create index refresh_tokens_user on refresh_tokens (user_id)`.execute(db);
    await sql`create index refresh_tokens_family on refresh_tokens (family_id)`.execute(db);

    await sql`
      create table balance_ledger (
        id uuid primary key,
        user_id uuid not null references users (id),
        delta bigint not null,
        balance_after bigint not null check (balance_after >= 0),
        currency text not null,
        reason text not null,
        actor_id uuid not null references users (id),
        created_at timestamptz not null default now()
      )`.execute(db);
    await sql`create index balance_ledger_newest_first on balance_ledger (user_id, created_at desc, id desc)`.execute(db);

    await sql`
      create table idempotency_keys (
        owner_id uuid not null,
        key text not null,
        request_fingerprint text not null,
        state text not null check (state in ('in_progress', 'done')),
        response_status integer,
        response_body jsonb,
        locked_until timestamptz not null,
        expires_at timestamptz not null,
        created_at timestamptz not null default now(),
        primary key (owner_id, key)
      )`.execute(db);
    await sql`create index idempotency_keys_expiry on idempotency_keys (expires_at)`.execute(db);

    await sql`
      create table variants (
        id uuid primary key,
        product_id text not null,
        sku text not null,
        name text not null,
        price bigint not null check (price >= 0 and price <= 1000000000000),
        stock integer not null default 0 check (stock >= 0 and stock <= 1000000000),
        attributes jsonb not null default '{}'::jsonb check (jsonb_typeof(attributes) = 'object'),
        version integer not null default 1,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`.execute(db);
    await sql`create unique index variants_sku_unique on variants (lower(sku))`.execute(db);
    // jsonb text output is canonical (sorted keys, no duplicates), so equal attribute sets hash
    // alike; hashing keeps the key under the btree row-size limit for large attribute sets.
    await sql`create unique index variants_attributes_unique on variants (product_id, md5(attributes::text))`.execute(db);
    await sql`create index variants_by_product on variants (product_id, created_at, id)`.execute(db);
  },
};
