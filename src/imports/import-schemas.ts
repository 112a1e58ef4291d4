import { Type } from '@sinclair/typebox';
import { StringEnum, Timestamp } from '../http/common-schemas.js';

const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const ImportSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: StringEnum(['pending', 'running', 'succeeded', 'failed', 'cancelled']),
    format: StringEnum(['csv', 'jsonl']),
    mode: StringEnum(['upsert', 'create']),
    on_error: StringEnum(['reject_all', 'skip_failed']),
    dry_run: Type.Boolean(),
    rows_total: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'The rows of the file (its header not counted); null until counted.' }),
    rows_processed: Count('Rows worked through so far; grows as the import runs.'),
    created: Count('Variants created (a dry run: that would be, also when it fails; a failed reject_all import that is not a dry run: 0, as are updated and unchanged).'),
    updated: Count('Variants changed.'),
    unchanged: Count('Rows that matched a variant as it is: nothing recorded.'),
    failed: Count('Rows refused; GET …/errors lists them.'),
    first_errors: Type.Array(Type.Object({ line: Type.Integer({ minimum: 0 }), message: Type.String() }), {
      maxItems: 10,
      description:
        'The first refused rows: the line of the file each starts on (a CSV header is line 1), and why; line 0 for a reason that ' +
        'is no row\'s (the import could not be completed).',
    }),
    created_by: Type.String({ format: 'uuid', description: 'The user or API client that uploaded it.' }),
    created_at: Timestamp,
    started_at: Type.Union([Timestamp, Type.Null()]),
    finished_at: Type.Union([Timestamp, Type.Null()]),
  },
  {
    $id: 'VariantImport',
    title: 'Variant import',
    examples: [
      {
        id: '0b6f8a52-3c1e-4a8e-9d4f-2f7f4e9b1c11',
        status: 'succeeded',
        format: 'csv',
        mode: 'upsert',
        on_error: 'skip_failed',
        dry_run: false,
        rows_total: 3,
        rows_processed: 3,
        created: 1,
        updated: 1,
        unchanged: 0,
        failed: 1,
        first_errors: [{ line: 4, message: 'price must be a whole number' }],
        created_by: '7b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d',
        created_at: '2026-11-21T20:25:00.000Z',
        started_at: '2026-11-21T20:25:00.120Z',
        finished_at: '2026-11-21T20:25:00.480Z',
      },
    ],
  },
);

export const ImportQuery = Type.Object(
  {
    mode: Type.Optional(StringEnum(['upsert', 'create'], { default: 'upsert', description: '`create`: a row whose SKU exists fails.' })),
    on_error: Type.Optional(
      StringEnum(['reject_all', 'skip_failed'], { default: 'reject_all', description: '`reject_all`: all or nothing; `skip_failed`: every valid row is stored.' }),
    ),
    dry_run: Type.Optional(Type.Boolean({ default: false, description: 'Store nothing; report what would result.' })),
  },
  { additionalProperties: false },
);

export const ExportQuery = Type.Object(
  {
    format: Type.Optional(StringEnum(['csv', 'jsonl'], { default: 'csv' })),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of SKU or name.' })),
    product_id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$' })),
    in_stock: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const CSV_TYPE = 'text/csv; charset=utf-8';
export const JSONL_TYPE = 'application/x-ndjson';
