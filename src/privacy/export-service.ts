import type { Kysely, Transaction } from 'kysely';
import { everyRow } from '../db/list-queries.js';
import type { Database, UserRow } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { actorEventsAboutOthersPage, subjectEventsPage } from '../events/event-service.js';
import { toEventResponse } from '../events/event-response.js';
import { reservationsCreatedByPage, withLinesOfPage } from '../inventory/reservation-service.js';
import { toReservationResponse } from '../inventory/reservation-response.js';
import { exportedFactors } from '../mfa/second-factor-records.js';
import { allSessionsOfUserPage } from '../sessions/session-service.js';
import { toSessionRecord } from '../sessions/session-response.js';
import { ledgerOldestFirstPage } from '../users/balance-service.js';
import { toLedgerEntryResponse } from '../users/balance-response.js';
import { toUserResponse } from '../users/user-response.js';

// Text is handed to the socket in pieces of about this size: few writes, little held at once.
const CHUNK_CHARACTERS = 64 * 1024;

/**
 * A user's data export (API.md section 13) as JSON text, a piece at a time: each list is read a
 * page at a time (everyRow), so a user with a long history exports in flat memory. The document
 * is `{exported_at, user, sessions, mfa_factors, ledger, reservations, events}`.
 */
export async function* exportDocument(db: Kysely<Database>, user: UserRow, currency: string): AsyncGenerator<string> {
  let pending = '';
  const flushable = () => pending.length >= CHUNK_CHARACTERS;
  const take = () => {
    const chunk = pending;
    pending = '';
    return chunk;
  };
  async function* array<Row>(name: string, rows: AsyncIterable<Row> | Iterable<Row>, render: (row: Row) => unknown) {
    pending += `,${JSON.stringify(name)}:[`;
    let first = true;
    for await (const row of rows) {
      pending += (first ? '' : ',') + JSON.stringify(render(row));
      first = false;
      if (flushable()) yield take();
    }
    pending += ']';
  }

  pending += `{"exported_at":${JSON.stringify(new Date().toISOString())},"user":${JSON.stringify(toUserResponse(user, currency))}`;
  yield* array('sessions', everyRow((page) => allSessionsOfUserPage(db, user.id, page)), toSessionRecord);
  yield* array('mfa_factors', await exportedFactors(db, user.id), (factor) => factor);
  yield* array('ledger', everyRow((page) => ledgerOldestFirstPage(db, user.id, page).execute()), toLedgerEntryResponse);
  const reservations = everyRow(async (page) => withLinesOfPage(db, await reservationsCreatedByPage(db, user.id, page)));
  yield* array('reservations', reservations, toReservationResponse);
  yield* array('events', eventsOfUser(db, user.id), toEventResponse);
  pending += '}';
  yield take();
}

async function* eventsOfUser(db: Kysely<Database>, userId: string) {
  yield* everyRow((page) => subjectEventsPage(db, userId, page));
  yield* everyRow((page) => actorEventsAboutOthersPage(db, userId, page));
}

/** An export is recorded before it is sent: `user.data_exported`, subject the user, actor the caller. */
export async function recordExport(trx: Transaction<Database>, userId: string, context: EventContext): Promise<void> {
  await record(trx, { type: 'user.data_exported', subjectType: 'user', subjectId: userId, data: {} }, context);
}
