/**
 * The SQL every repository function sends, as the code builds it, one file per area under
 * queries/ (the immich anchor's way): a reader sees exactly what runs. `npm run queries` writes
 * them; test/db/queries.test.ts fails when they differ from the code.
 *
 * How the SQL is captured: each sample of the registry (query-registry/) runs against a scratch
 * embedded database with every migration applied and a few sample rows, inside a transaction that
 * is rolled back; Kysely's `log` option hands over the text of every statement sent, in order,
 * with its parameters as $1..$n (their values are left out: a new id or the time would change on
 * every run). The sample rows let a function that reads before it writes send every statement it
 * would in use; a statement the database refuses is shown with its error, where the function stops.
 */
import { PGlite } from '@electric-sql/pglite';
import { Kysely, type Transaction } from 'kysely';
import { PGliteDialect } from '../src/db/pglite-dialect.js';
import type { Database } from '../src/db/tables.js';
import { migratedPGliteImage } from '../test/helpers/pglite-image.js';
import { REPOSITORY_FILES } from './query-registry/index.js';
import { isSample, seedSampleRows, type Sample } from './query-registry/sample.js';

const HEADER = '-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.\n';

/** The text of every statement a sample sends, in order; where it failed, the error. */
interface Captured {
  statements: string[];
  failure?: string;
}

class RolledBack extends Error {}

export async function queryFiles(): Promise<Record<string, string>> {
  const pglite = new PGlite({ loadDataDir: await migratedPGliteImage() });
  // The statements of the sample running now; undefined between samples (begin, rollback, the sample rows).
  let capturing: string[] | undefined;
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite), log: (event) => void capturing?.push(event.query.sql) });
  const capture = async (sample: Sample): Promise<Captured> => {
    const captured: Captured = { statements: [] };
    await db
      .transaction()
      .execute(async (trx: Transaction<Database>) => {
        capturing = captured.statements;
        try {
          await sample.run(trx);
        } catch (error) {
          captured.failure = error instanceof Error ? error.message : String(error);
        } finally {
          capturing = undefined;
        }
        throw new RolledBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      });
    return captured;
  };
  try {
    await seedSampleRows(db);
    const files: Record<string, string[]> = {};
    for (const repository of REPOSITORY_FILES) {
      for (const [name, entry] of Object.entries(repository.entries)) {
        if (!isSample(entry)) continue;
        const { statements, failure } = await capture(entry);
        if (statements.length === 0) throw new Error(`${repository.file}: the sample of ${name} sent no statement; give it values that make it send one`);
        const text = statements.map((statement) => `${layout(statement)};\n`).join('');
        (files[repository.area] ??= []).push(`-- ${repository.file}: ${name}(${entry.summary})\n${text}${failure ? `-- fails here: ${failure}\n` : ''}`);
      }
    }
    return Object.fromEntries(
      Object.entries(files)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([area, functions]) => [`${area}.sql`, `${HEADER}\n${functions.join('\n')}`]),
    );
  } finally {
    await db.destroy();
  }
}

/** Longer lines than this get a clause a line. */
const LINE_LENGTH = 100;

/**
 * A statement laid out to read: a statement written by hand keeps its own lines, less the
 * source's indentation; a line longer than LINE_LENGTH (Kysely's text is one line) gets a clause
 * a line, so a diff reads.
 */
function layout(text: string): string {
  return dedent(text)
    .split('\n')
    .map((line) => (line.length > LINE_LENGTH ? clauseALine(line) : line))
    .join('\n');
}

function clauseALine(line: string): string {
  const indent = ' '.repeat(line.length - line.trimStart().length + 2);
  // Not the `from` of extract(epoch from …).
  return line.replace(/ ((?<!epoch )from|left join lateral|left join|inner join|where|order by|group by|limit|on conflict|returning) /g, `\n${indent}$1 `);
}

function dedent(text: string): string {
  const lines = text.split('\n').map((line) => line.trimEnd());
  while (lines[0] === '') lines.shift();
  while (lines.at(-1) === '') lines.pop();
  const [first = '', ...rest] = lines;
  const indents = rest.filter((line) => line !== '').map((line) => line.length - line.trimStart().length);
  const common = Math.min(...indents);
  // The first line starts where the template opened, often on the call's own line: the lines
  // after it keep two spaces more than it.
  return [first.trimStart(), ...rest.map((line) => line.slice(Math.max(common - 2, 0)))].join('\n');
}
