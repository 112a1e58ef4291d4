import { useState } from 'preact/hooks';
import { client } from '../api';
import type { operations } from '../../../client/api-types';
import { Select, formatTime } from '../components';
import { DataTable } from '../data-table';
import { Pager, usePages } from '../pages-list';
import { ReservationDetail } from './reservation-detail';

type ReservationFilters = Pick<NonNullable<operations['listReservations']['parameters']['query']>, 'status' | 'reference'>;
type Status = NonNullable<ReservationFilters['status']>;
const STATUSES: readonly Status[] = ['active', 'committed', 'released', 'expired'];

/**
 * Reservations, newest first, and the one opened (`#/reservations?id=`): where each of its lines
 * holds its units, and, while it is active, moving them to other locations.
 */
export function ReservationsPage(props: { openId: string | undefined }) {
  const [status, setStatus] = useState<Status | ''>('active');
  const [reference, setReference] = useState('');
  const [filters, setFilters] = useState<ReservationFilters>({ status: 'active' });
  const pages = usePages(JSON.stringify(filters), (paging) => client.GET('/api/reservations', { params: { query: { ...filters, ...paging } } }));
  const search = (event: Event) => {
    event.preventDefault();
    const next: ReservationFilters = { ...(status ? { status } : {}), ...(reference.trim() ? { reference: reference.trim() } : {}) };
    if (JSON.stringify(next) === JSON.stringify(filters)) pages.restart();
    else setFilters(next);
  };
  const items = pages.page?.items ?? [];
  return (
    <section aria-labelledby="reservations-title">
      <h1 id="reservations-title">Reservations</h1>
      {props.openId && <ReservationDetail key={props.openId} id={props.openId} onChanged={() => void pages.reload()} />}
      <form class="filters" onSubmit={search} role="search" aria-label="Find reservations">
        <Select label="Status" name="status" value={status} options={STATUSES} anyLabel="Any" onChange={(value) => setStatus(value as Status | '')} />
        <label>
          Reference <input name="reference" type="search" value={reference} onInput={(event) => setReference((event.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      <DataTable
        className="reservations"
        items={items}
        rowClass={(reservation) => (reservation.id === props.openId ? 'current' : undefined)}
        columns={[
          { label: 'Reference', wraps: true, cell: (reservation) => reservation.reference ?? '—' },
          { label: 'Status', cell: (reservation) => reservation.status },
          { label: 'Lines', numeric: true, cell: (reservation) => reservation.lines.length },
          { label: 'Units', numeric: true, cell: (reservation) => reservation.lines.reduce((sum, line) => sum + line.quantity, 0) },
          { label: 'Created', cell: (reservation) => formatTime(reservation.created_at) },
          { label: 'Expires', cell: (reservation) => formatTime(reservation.expires_at) },
          {
            label: 'Actions',
            cell: (reservation) => (
              <a href={`#/reservations?id=${reservation.id}`} aria-label={`Open ${reservation.reference ?? reservation.id}`}>
                Open
              </a>
            ),
          },
        ]}
      />
      {pages.page && items.length === 0 && <p>No reservation matches.</p>}
      <Pager pages={pages} noun="reservation" label="Reservations" />
    </section>
  );
}
