import type { VariantImportRow } from '../../src/db/tables.js';
import * as importRepository from '../../src/imports/import-repository.js';
import { call, callerReadSample, custom, FIRST_PAGE, notSql, SAMPLE, type RepositoryFile } from './sample.js';

const claim = { id: SAMPLE.importId, claimToken: '00000000-0000-4000-8000-000000000014' };

export const imports: RepositoryFile[] = [
  {
    file: 'src/imports/import-repository.ts',
    area: 'imports',
    entries: {
      insertImport: call(importRepository.insertImport, {
        id: SAMPLE.newId,
        upload_id: SAMPLE.uploadId,
        format: 'csv',
        mode: 'upsert',
        on_error: 'reject_all',
        dry_run: false,
        byte_size: 1,
        created_by: SAMPLE.userId,
        actor_type: 'user',
      }),
      importById: callerReadSample(importRepository.importById, SAMPLE.importId),
      importsPage: call(importRepository.importsPage, FIRST_PAGE),
      countImports: call(importRepository.countImports),
      lockImportAdmission: call(importRepository.lockImportAdmission),
      countActiveImports: call(importRepository.countActiveImports),
      purgeImportsFinishedBefore: call(importRepository.purgeImportsFinishedBefore, SAMPLE.date),
      cancelImport: call(importRepository.cancelImport, SAMPLE.importId),
      writeUnderClaim: call(importRepository.writeUnderClaim, claim, { rows_processed: 10, first_errors: [{ line: 2, message: 'price: not a number' }] }),
      markAbandoned: call(importRepository.markAbandoned, SAMPLE.importId, [{ line: 0, message: 'gave up' }]),
      insertImportErrors: call(importRepository.insertImportErrors, SAMPLE.importId, [{ line: 2, error: 'price: not a number', fields: { sku: 'SKU-2' } }]),
      deleteImportErrors: call(importRepository.deleteImportErrors, SAMPLE.importId),
      importErrorsAfter: call(importRepository.importErrorsAfter, SAMPLE.importId, 0, 100),
      importErrorColumns: call(importRepository.importErrorColumns, SAMPLE.importId),
      UPLOAD_PIECE_BYTES: notSql('constant'),
      insertUploadPiece: call(importRepository.insertUploadPiece, SAMPLE.uploadId, 1, new Uint8Array([1, 2, 3])),
      // Reads piece 0, then asks for piece 1 and finds none: two statements.
      uploadPieces: custom(`() => trx, '${SAMPLE.uploadId}'`, async (trx) => {
        for await (const piece of importRepository.uploadPieces(() => trx, SAMPLE.uploadId)) void piece;
      }),
      // The import queue's settle (jobs/work-queue.ts): a run done, under its claim.
      settleImportRun: custom('the sample import under its claim, done', (trx) =>
        importRepository.settleImportRun(trx, { id: SAMPLE.importId, claim_token: claim.claimToken } as VariantImportRow, { outcome: 'done', error: null }),
      ),
      deleteUpload: call(importRepository.deleteUpload, SAMPLE.uploadId),
      deleteAbandonedUploads: call(importRepository.deleteAbandonedUploads),
      newUploadId: notSql('helper'),
    },
  },
];
