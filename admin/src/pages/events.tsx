import { useState } from 'preact/hooks';
import { client, type ApiError } from '../api';
import type { operations } from '../../../client/api-types';
import { eventTypeValues } from '../../../client/api-types';
import { AlertLine, ProblemMessage, Select, asApiError, formatTime } from '../components';
import { DataTable } from '../data-table';
import { EventDetails } from '../event-details';
import { ActorName, NameOf, actorIdOf } from '../names';
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

/**
 * The audit log with its filters in the address (#/events?subject_id=…), so a record's
 * "history" link and the browser's back button both work; main.tsx remounts it per address.
 */
export function EventsPage(props: { initial: URLSearchParams; currency: string }) {
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
  const [whoError, setWhoError] = useState<ApiError>();
  const [whoUnknown, setWhoUnknown] = useState<string>();

  const search = async (event: Event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const name of FILTERS) {
      const value = name === 'since' || name === 'until' ? fromLocalInput(filters[name]) : filters[name].trim();
      if (value) next.set(name, value);
    }
    // "Who" is typed as an email or an API client's name (or an id), and sent as the actor's id.
    setWhoUnknown(undefined);
    setWhoError(undefined);
    if (filters.actor_id.trim()) {
      try {
        const actorId = await actorIdOf(filters.actor_id);
        if (!actorId) return setWhoUnknown(`No user or API client is ${filters.actor_id.trim()}.`);
        next.set('actor_id', actorId);
      } catch (caught) {
        return setWhoError(asApiError(caught));
      }
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
          Who (email or API client) <input name="actor_id" value={filters.actor_id} onInput={(event) => set('actor_id')((event.target as HTMLInputElement).value)} />
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
      <AlertLine text={whoUnknown} />
      <ProblemMessage error={whoError} />
      <DataTable
        className="events"
        items={pages.page?.items ?? []}
        columns={[
          { label: 'When', cell: (event) => formatTime(event.occurred_at) },
          { label: 'What', cell: (event) => event.type },
          { label: 'Who', cell: (event) => <ActorName id={event.actor_id} type={event.actor_type} /> },
          { label: 'Subject', cell: (event) => <NameOf kind={event.subject_type} id={event.subject_id} /> },
          { label: 'Details', cell: (event) => <EventDetails event={event} currency={props.currency} /> },
        ]}
      />
      {pages.page?.items.length === 0 && <p>No event matches.</p>}
      <Pager pages={pages} noun="event" label="Events" />
    </section>
  );
}
