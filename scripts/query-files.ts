/**
 * The SQL of the admission's statements, as the code builds it, one file per area under
 * queries/ (the immich anchor's way): a reader sees exactly what an authenticated read sends.
 * `npm run queries` writes them; test/db/queries.test.ts fails when they differ from the code.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { Database } from '../src/db/tables.js';
import { besideCaller, CALLER_READS, clientSecretCaller, clientTokenCaller, userCaller } from '../src/sessions/caller-query.js';
import '../src/clients/client-repository.js';
import '../src/events/event-repository.js';
import '../src/events/webhook-repository.js';
import '../src/inventory/reservation-repository.js';
import '../src/inventory/stock-repository.js';
import '../src/users/user-repository.js';
import { variantsPage } from '../src/variants/variant-repository.js';

const compiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** Kysely's text, one clause a line, so a diff reads. */
const layout = (text: string) =>
  text
    .replace(/ (from|left join lateral|left join|inner join|where|order by|limit|on) /g, '\n  $1 ')
    .replace(/\$(\d+)/g, '$$$1');

const HEADER = '-- Written by `npm run queries` from the code; do not edit. The parameters: $1.. in the order the statement first uses them.\n';

export function queryFiles(): Record<string, string> {
  const files: Record<string, string[]> = {};
  const add = (area: string, title: string, text: string) => (files[area] ??= []).push(`-- ${title}\n${layout(text)};\n`);
  add('sessions', "The caller alone: a write's first statement in its transaction, or a check of its own (a user's access token)", userCaller(compiler, { userId: '$user', sessionId: '$session' }).compile().sql);
  add(
    'sessions',
    'A page beside the caller (here: GET /api/variants): the row number keeps the page\'s order',
    besideCaller(compiler, userCaller(compiler, { userId: '$user', sessionId: '$session' }), { roles: [], selfId: null, scopes: [], mfaRoles: [], stepUpSeconds: null }, variantsPage(compiler, {}, { limit: 20 }), true).compile().sql,
  );
  add('sessions', "The caller alone, for an API client's secret sent as the bearer token", clientSecretCaller(compiler, { secretHash: '$secret_hash' }).compile().sql);
  add('sessions', "The caller alone, for an API client's access token (its scopes and the client's, both)", clientTokenCaller(compiler, { clientId: '$client', scopes: [], generation: 0 }).compile().sql);
  for (const read of [...CALLER_READS].sort((a, b) => a.name.localeCompare(b.name))) {
    const [area, what] = read.name.split('.') as [string, string];
    // The user's form in full; a client's differs only in the caller's part, shown above.
    const statements = read.statements(compiler);
    add(area, `${what}: the data beside a user's caller row (callerRead '${read.name}')`, statements.user);
    add(area, `${what}, alone: once an earlier statement of the same request admitted its caller`, statements.alone);
  }
  return Object.fromEntries(Object.entries(files).map(([area, statements]) => [`${area}.sql`, `${HEADER}\n${statements.join('\n')}`]));
}
