/**
 * The registry of the repository functions whose SQL is committed under queries/ (the immich
 * anchor's `server/src/queries/*.sql`): for every export of every repository file, a sample call
 * with plain sample values, or `notSql` with a one-word reason (a constant, a pure helper, a
 * fragment other statements embed, a factory of reads). `npm run queries` runs each sample and
 * writes the statements it sent to queries/<area>.sql (query-files.ts); test/db/queries.test.ts
 * fails when an export is missing here, an entry names an export that is gone, or a file differs
 * from what the code sends now.
 *
 * Which files are repositories: every `src/**\/*-repository.ts` (the house's room for SQL), and
 * `src/sessions/caller-query.ts`, the admission's statements (the caller's row alone or beside a
 * request's data), which every authenticated request sends, and `src/mail/mail-outbox.ts`, the
 * email outbox's SQL (named for what it is: every area that sends mail queues it there). Not here: `src/db/list-queries.ts`
 * (it shapes a query it is given, and its SQL shows in every page and count below), and the
 * statements written inside services and the ground's machinery (`jobs/work-queue.ts`'s
 * claim over the table its owner names, `events/event-recorder.ts`, ...), which belong in a repository first.
 *
 * Adding a repository function: add its entry to the area's file here, then `npm run queries`.
 */
import { clients } from './clients.js';
import { events } from './events.js';
import { federation } from './federation.js';
import { http } from './http.js';
import { imports } from './imports.js';
import { inventory } from './inventory.js';
import { mail } from './mail.js';
import { mfa } from './mfa.js';
import { oauth } from './oauth.js';
import type { RepositoryFile } from './sample.js';
import { sessions } from './sessions.js';
import { users } from './users.js';
import { variants } from './variants.js';

export const REPOSITORY_FILES: RepositoryFile[] = [...clients, ...events, ...federation, ...http, ...imports, ...inventory, ...mail, ...mfa, ...oauth, ...sessions, ...users, ...variants];

/** Files that hold a repository's SQL though their name does not end in -repository.ts (see above). */
export const REPOSITORIES_BY_ANOTHER_NAME = ['src/mail/mail-outbox.ts', 'src/sessions/caller-query.ts'];
