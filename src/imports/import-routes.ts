import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { AppError, notFound } from '../http/errors.js';
import { IdParams } from '../http/common-schemas.js';
import { IdempotencyKeyHeader, idempotentReply, replyOnce } from '../http/idempotency.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { problemResponses, resourceReply } from '../http/problem-schema.js';
import { buildValidatorCompiler } from '../http/validation.js';
import { ANY_ROLE, STAFF } from '../sessions/access-rule.js';
import { catalogueFileReply, errorReport, exportVariants, storeUpload } from './catalogue-files.js';
import { cancelImport, countImports, deleteUpload, importById, importsPage, insertImport } from './import-repository.js';
import { toImportResponse } from './import-response.js';
import { CSV_TYPE, ExportQuery, ImportQuery, JSONL_TYPE } from './import-schemas.js';
import { admitImport, recordCancellation, refuseImportWhenFull } from './import-service.js';

const validatorCompiler = buildValidatorCompiler();
const IMPORTERS = { roles: STAFF, scope: 'variants:write' } as const;
const ImportReply = Type.Ref('VariantImport');
const UPLOAD_TYPES: Record<string, 'csv' | 'jsonl'> = { 'text/csv': 'csv', 'application/x-ndjson': 'jsonl' };
/** A file streamed as the reply, a chunk read ahead at most: the reader's pace decides how much is read (backpressure). */
const streamed = (chunks: AsyncIterable<string>) => Readable.from(chunks, { highWaterMark: 1 });

/** Catalogue files (API.md section 14): imports of variants, their error reports, and exports. */
export const importRoutes: FastifyPluginAsyncTypebox<{ maxBytes: number; maxActive: number; wake: () => void }> = async (app, options) => {
  // The upload is read by the route itself, as it arrives (storeUpload), never whole.
  app.addContentTypeParser(Object.keys(UPLOAD_TYPES), (_request, payload, done) => done(null, payload));

  app.post(
    '/imports',
    {
      config: { access: IMPORTERS, ownBody: true },
      // The body schema documents the file; the file itself is a stream, read and checked row by row.
      validatorCompiler: (route) => (route.httpPart === 'body' ? () => true : validatorCompiler(route)),
      schema: {
        operationId: 'importVariants',
        tags: ['imports'],
        summary: 'Import variants from a CSV or JSON lines file (manager, admin)',
        description:
          'The body is the file: `text/csv` (RFC 4180, a header line with `sku` and any of `id, product_id, name, price, stock, ' +
          'stock.<code>, attributes.<key>`) or `application/x-ndjson` (one object per line with those keys, `attributes` an ' +
          'object, and `stock_by_location` an object of location codes and units for the `stock.<code>` columns), at most ' +
          '`IMPORT_MAX_BYTES` (413 beyond). Rows match variants by SKU in any case: a new SKU creates, a known one updates the ' +
          'columns present, as a PATCH (an empty cell keeps its field; an empty `attributes.<key>` cell, or `null` in JSON, ' +
          'removes the key). A `stock.<code>` cell sets the stock at the location of that code (any case; 0 to 1e9, the total ' +
          'too), with its own movement and `variant.stock_changed` naming `location_id`, as PUT /api/variants/{id}/stock does; ' +
          'a location the row does not name keeps its stock. A header naming an unknown code is an unknown column (the import ' +
          'fails at once, line 1); a JSON line naming one fails that row. A row with both fails unless its `stock` is empty or ' +
          'the total the variant is left with. The import runs in the background on any instance: follow it with GET ' +
          '/api/variants/imports/{id}. ' +
          '`line` and `error` columns (an error report fixed and uploaded again) are ignored. Honours `Idempotency-Key` (the ' +
          'same file and options replay the first reply). `skip_failed` stores the file in batches of 500 rows, each in a ' +
          'transaction of its own; `reject_all` (all or nothing) and every dry run go through the file in one transaction, ' +
          'which holds the variants it touches until it ends: on the embedded database (one connection) other requests wait ' +
          'for it, so run large all-or-nothing imports on PostgreSQL. A CSV header of more than 200 columns, or of more than 20 ' +
          '`attributes.` columns, fails the import at once (line 1); a row over 64 KiB fails that row. At most ' +
          '`IMPORT_MAX_ACTIVE` imports (default 4) are pending or running at a time, on all instances together: another upload ' +
          'is 429 `rate_limited` with `Retry-After` (30 s), checked before the file is read and again, under a lock, when the ' +
          'import is stored; an `Idempotency-Key` refused so may be sent again. A cell written with a leading `\'` before `=`, ' +
          '`+`, `-`, `@`, a tab or a carriage return (as exports write them) loses that `\'`. A finished import, its failed ' +
          'rows with it, is purged `IMPORT_RETENTION_DAYS` (default 30) after it ends.',
        querystring: ImportQuery,
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }),
        consumes: ['text/csv', 'application/x-ndjson'],
        body: Type.String({ description: 'The file.', examples: ['sku,product_id,name,price,stock,attributes.size\nSHIRT-2-S,shirt-2,"Shirt, S",2999,5,S\n'] }),
        response: {
          202: idempotentReply(resourceReply(ImportReply, 'Accepted: the import is queued.', { location: true, etag: false })),
          ...problemResponses(400, 401, 403, 409, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const { access } = request;
      const mediaType = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const format = UPLOAD_TYPES[mediaType];
      if (!format || !((request.body as unknown) instanceof Readable)) throw new AppError('unsupported_media_type', 'Send the file as text/csv or application/x-ndjson.');
      // The caller is checked before a byte is stored.
      const { caller, db } = await access.admit();
      const { mode = 'upsert', on_error = 'reject_all', dry_run = false } = request.query;
      // Refused before a byte is stored when there is clearly no room (the count that decides is the one under the lock
      // below); not with an Idempotency-Key, whose repeat of an accepted upload gets its 202 again whatever runs now.
      const keyed = request.headers['idempotency-key'] !== undefined;
      if (!keyed) await refuseImportWhenFull(db, options.maxActive);
      const upload = await storeUpload(db, request.body as unknown as Readable, options.maxBytes);
      let inserted = false;
      let accepted = false;
      try {
        await replyOnce(
          access,
          request,
          reply,
          async (trx) => {
            await admitImport(trx, options.maxActive);
            inserted = true;
            const row = await insertImport(trx, {
              id: randomUUID(),
              upload_id: upload.uploadId,
              format,
              mode,
              on_error,
              dry_run,
              byte_size: upload.size,
              created_by: caller.id,
              actor_type: caller.kind,
            });
            return { status: 202, headers: { location: `/api/variants/imports/${row.id}` }, body: toImportResponse(row) };
          },
          { upload_sha256: upload.sha256, format, mode, on_error, dry_run },
        );
        accepted = inserted && reply.statusCode === 202;
      } finally {
        // A replayed key, or a refusal, leaves the stored upload to no import.
        if (!accepted) await deleteUpload(db, upload.uploadId);
      }
      if (accepted) options.wake();
      return reply;
    },
  );

  app.get(
    '/imports',
    {
      config: { access: IMPORTERS },
      schema: {
        operationId: 'listImports',
        tags: ['imports'],
        summary: "Every caller's imports, newest first (manager, admin)",
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: PageSchema(ImportReply), ...problemResponses(400, 401, 403) },
      },
    },
    async (request) =>
      listPage(request.query, request.access, {
        rows: (page) => request.access.readPage((db) => importsPage(db, page)),
        count: (db) => countImports(db),
        toItem: toImportResponse,
      }),
  );

  app.get(
    '/imports/:id',
    {
      config: { access: IMPORTERS },
      schema: {
        operationId: 'getImport',
        tags: ['imports'],
        summary: 'One import: its status, progress and counts (manager, admin)',
        params: IdParams,
        response: { 200: resourceReply(ImportReply, 'The import.', { etag: false }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { access } = request;
      const [row] = await access.read(importById, request.params.id.toLowerCase());
      if (!row) throw notFound('import');
      return toImportResponse(row);
    },
  );

  app.get(
    '/imports/:id/errors',
    {
      config: { access: IMPORTERS },
      schema: {
        operationId: 'getImportErrors',
        tags: ['imports'],
        summary: "An import's refused rows, in the file's own format (manager, admin)",
        description:
          'CSV (`text/csv; charset=utf-8`) or JSON lines (`application/x-ndjson`), as the upload was: each refused row with its ' +
          '`line` and `error` first, then its cells as the file had them. Fix the rows and upload the report again: `line` and ' +
          '`error` are ignored. An import keeps its first 10,000 refused rows for the report (`failed` counts them all); a row ' +
          'over 64 KiB is listed without its cells, and a NUL character or a lone surrogate is written as U+FFFD. In CSV, a cell ' +
          'that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a leading `\'` (the import takes it ' +
          'off again). Streamed a few rows at a time, at the reader\'s pace.',
        params: IdParams,
        response: { 200: catalogueFileReply('The refused rows.'), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      const [row] = await access.read(importById, request.params.id.toLowerCase());
      if (!row) throw notFound('import');
      const { db } = await access.admit();
      reply.type(row.format === 'csv' ? CSV_TYPE : JSONL_TYPE).header('content-disposition', `attachment; filename="import-${row.id}-errors.${row.format === 'csv' ? 'csv' : 'jsonl'}"`);
      return reply.send(streamed(errorReport(db, row.id, row.format)));
    },
  );

  app.post(
    '/imports/:id/cancel',
    {
      config: { access: IMPORTERS },
      schema: {
        operationId: 'cancelImport',
        tags: ['imports'],
        summary: 'Stop an import (manager, admin)',
        description:
          'A pending or running import stops: with `reject_all` (and any dry run) nothing of it stays; with `skip_failed` the ' +
          'batches it stored stay. 409 `import_finished` when it has already ended. No body.',
        params: IdParams,
        response: { 200: resourceReply(ImportReply, 'Cancelled.', { etag: false }), ...problemResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const id = request.params.id.toLowerCase();
      const { access } = request;
      const [known] = await access.read(importById, id);
      if (!known) throw notFound('import');
      const cancelled = await access.transaction(async (trx) => {
        const row = await cancelImport(trx, id);
        if (row) await recordCancellation(trx, row, contextOf(request));
        return row;
      });
      if (!cancelled) throw new AppError('import_finished', `The import has already ended (${known.status}).`);
      return toImportResponse(cancelled);
    },
  );

  app.get(
    '/export',
    {
      config: { access: { roles: ANY_ROLE, scope: 'variants:read' } },
      schema: {
        operationId: 'exportVariants',
        tags: ['imports'],
        summary: 'Every variant that matches, as CSV or JSON lines, oldest first',
        description:
          'Streamed, `Content-Disposition: attachment`. The filters of GET /api/variants. The columns are the import\'s (`id, sku, ' +
          'product_id, name, price, stock`; with more than one location, one `stock.<code>` column for every location by priority, ' +
          '`0` where the variant has none, `stock` being their total (JSON lines: `stock_by_location` with every code); then one ' +
          '`attributes.<key>` column per key any exported variant has, sorted), so the file imports back with every row ' +
          'unchanged. In CSV, a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage ' +
          'return (or with `\'`s before one of them) is written with a leading `\'`, so a spreadsheet shows it rather than runs ' +
          'it; the import takes that `\'` off.',
        querystring: ExportQuery,
        response: { 200: catalogueFileReply('The variants.'), ...problemResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { format = 'csv', q, product_id, in_stock } = request.query;
      const { db } = await request.access.admit();
      reply.type(format === 'csv' ? CSV_TYPE : JSONL_TYPE).header('content-disposition', `attachment; filename="variants.${format}"`);
      return reply.send(streamed(exportVariants(db, { q, product_id, in_stock }, format)));
    },
  );
};
