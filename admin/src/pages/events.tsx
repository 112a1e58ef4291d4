import { useState } from 'preact/hooks';
import { client, type ShopEvent } from '../api';
import type { operations } from '../../../client/api-types';
import { eventTypeValues } from '../../../client/api-types';
import { Select, formatTime } from '../components';
import { DataTable } from '../data-table';
import { Pager, usePages } from '../pages-list';

const FILTERS = ['type', 'actor_id', 'subject_id', 'since', 'until'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
type EventFilters = Pick<NonNullable<operations['listEvents']['parameters']['query']>, (typeof FILTERS)[number]>;

/** datetime-local has no zone: it is the browser's local time, sent as RFC 3339 UTC. */
const toLocalInput = (iso: string | null) => {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (local: string) => (local ? new Date(local).toISOString() : '');

const subjectLink = (event: ShopEvent) =>
  event.subject_type === 'user' ? `#/users/${event.subject_id}` : `#/events?subject_id=${event.subject_id}`;

/**
 * The audit log with its filters in the address (#/events?subject_id=…), so a record's
 * "history" link and the browser's back button both work; main.tsx remounts it per address.
 */
export function EventsPage(props: { initial: URLSearchParams }) {
  const [filters, setFilters] = useState<Filters>({
    type: props.initial.get('type') ?? '',
    actor_id: props.initial.get('actor_id') ?? '',
    subject_id: props.initial.get('subject_id') ?? '',
    since: toLocalInput(props.initial.get('since')),
    until: toLocalInput(props.initial.get('until')),
  });
  // The address is the reader's to edit: the service answers a bad filter with a 400 shown on the page.
  const query = Object.fromEntries(FILTERS.flatMap((name) => (props.initial.get(name) ? [[name, props.initial.get(name)]] : []))) as EventFilters;
  const pages = usePages(JSON.stringify(query), (paging) => client.GET('/api/events', { params: { query: { ...query, ...paging } } }));
  const set = (name: keyof Filters) => (value: string) => setFilters({ ...filters, [name]: value });

  const search = (event: Event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const name of FILTERS) {
      const value = name === 'since' || name === 'until' ? fromLocalInput(filters[name]) : filters[name].trim();
      if (value) next.set(name, value);
    }
    const hash = `#/events${next.size > 0 ? `?${next}` : ''}`;
    if (location.hash === hash) pages.restart();
    else location.hash = hash;
  };

  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">Audit log</h1>
      <form class="filters" onSubmit={search} role="search" aria-label="Filter events">
        <Select label="Type" name="type" value={filters.type} options={eventTypeValues} onChange={set('type')} anyLabel="any" />
        <label>
          Who (user id) <input name="actor_id" value={filters.actor_id} onInput={(event) => set('actor_id')((event.target as HTMLInputElement).value)} />
        </label>
        <label>
          Subject id <input name="subject_id" value={filters.subject_id} onInput={(event) => set('subject_id')((event.target as HTMLInputElement).value)} />
        </label>
        <label>
          From <input name="since" type="datetime-local" value={filters.since} onInput={(event) => set('since')((event.target as HTMLInputElement).value)} />
        </label>
        <label>
          Until <input name="until" type="datetime-local" value={filters.until} onInput={(event) => set('until')((event.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <DataTable
        items={pages.page?.items ?? []}
        columns={[
          { label: 'When', cell: (event) => formatTime(event.occurred_at) },
          { label: 'What', cell: (event) => event.type },
          { label: 'Who', cell: (event) => (event.actor_id ? <a href={`#/users/${event.actor_id}`}>{event.actor_id.slice(0, 8)}</a> : 'the service') },
          { label: 'Subject', cell: (event) => <a href={subjectLink(event)}>{event.subject_type} {event.subject_id.slice(0, 8)}</a> },
          {
            label: 'Details',
            cell: (event) => (
              <>
                {typeof event.data.reason === 'string' && <span>“{event.data.reason}” </span>}
                <details>
                  <summary>Data</summary>
                  <pre>{JSON.stringify(event.data, null, 2)}</pre>
                </details>
              </>
            ),
          },
        ]}
      />
      {pages.page?.items.length === 0 && <p>No event matches.</p>}
      <Pager pages={pages} noun="event" label="Events" />
    </section>
  );
}
