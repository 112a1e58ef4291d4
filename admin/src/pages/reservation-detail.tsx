import { useEffect, useState } from 'preact/hooks';
import { client, reply, type ApiError, type Reservation, type StockLocation } from '../api';
import { ProblemMessage, ResultLine, asApiError, formatTime } from '../components';
import { DataTable } from '../data-table';
import { useIdempotencyKey } from '../idempotency';
import { locationLabel, useLocations } from '../location-list';
import { NameOf } from '../names';

type Line = Reservation['lines'][number];

/** One reservation: its lines, where each holds its units, and (while active) a form per line to move them. */
export function ReservationDetail(props: { id: string; onChanged: () => void }) {
  const [reservation, setReservation] = useState<Reservation>();
  const [error, setError] = useState<ApiError>();
  // Said here, not in the line's form: the form is drawn anew from the allocations the reply gives.
  const [done, setDone] = useState<string>();
  const { locations, error: locationsError } = useLocations();
  useEffect(() => {
    reply(client.GET('/api/reservations/{id}', { params: { path: { id: props.id } } }))
      .then(({ body }) => setReservation(body))
      .catch((caught) => setError(asApiError(caught)));
  }, [props.id]);
  const title = reservation ? `Reservation ${reservation.reference ?? reservation.id}` : 'Reservation';
  const codeOf = (id: string) => locations?.find((location) => location.id === id)?.code ?? id.slice(0, 8);
  return (
    <section class="card" aria-labelledby="reservation-title">
      <div class="title-row">
        <h2 id="reservation-title" class="sku">
          {title}
        </h2>
        <a href="#/reservations">Close</a>
      </div>
      <ProblemMessage error={error ?? locationsError} />
      <ResultLine text={done} />
      {reservation && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{reservation.status}</dd>
            <dt>Expires</dt>
            <dd>{formatTime(reservation.expires_at)}</dd>
            <dt>Created</dt>
            <dd>{formatTime(reservation.created_at)}</dd>
          </dl>
          {reservation.lines.map((line, index) => (
            <section key={line.variant_id} aria-labelledby={`line-${index}-title`}>
              <h3 id={`line-${index}-title`}>
                Line {index + 1}: {line.quantity} × <NameOf kind="variant" id={line.variant_id} />
              </h3>
              <DataTable
                compact
                items={line.allocations.map((allocation) => ({ ...allocation, id: allocation.location_id }))}
                columns={[
                  { label: 'Held at', wraps: true, cell: (allocation) => codeOf(allocation.location_id) },
                  { label: 'Units', numeric: true, cell: (allocation) => allocation.quantity },
                ]}
              />
              {reservation.status === 'active' && locations && (
                <ReallocationForm
                  key={JSON.stringify(line.allocations)}
                  reservation={reservation}
                  line={line}
                  index={index}
                  locations={locations}
                  onDone={(changed, text) => {
                    setReservation(changed);
                    setDone(text);
                    props.onChanged();
                  }}
                />
              )}
            </section>
          ))}
        </>
      )}
    </section>
  );
}

/**
 * Where one line holds its units from now on: a number per location, summing to the line's
 * quantity. Offered: the active locations, and any inactive one the line holds units at already
 * (it may keep them there, or fewer, but receive no more).
 */
function ReallocationForm(props: { reservation: Reservation; line: Line; index: number; locations: StockLocation[]; onDone: (changed: Reservation, text: string) => void }) {
  const { line } = props;
  const held = (id: string) => line.allocations.find((allocation) => allocation.location_id === id)?.quantity ?? 0;
  const offered = props.locations.filter((location) => location.status === 'active' || held(location.id) > 0);
  const [units, setUnits] = useState<Record<string, string>>(() => Object.fromEntries(offered.map((location) => [location.id, String(held(location.id))])));
  const [error, setError] = useState<ApiError>();
  const idempotency = useIdempotencyKey();
  const typed = Object.entries(units).filter(([, value]) => value.trim() !== '' && value.trim() !== '0');
  const placed = typed.reduce((sum, [, value]) => sum + (/^\d+$/.test(value.trim()) ? Number(value) : 0), 0);

  const reallocate = async (event: Event) => {
    event.preventDefault();
    try {
      // A number that is not a whole one goes as typed, for the API to judge and name (hence the cast).
      const allocations = typed.map(([locationId, value]) => ({ location_id: locationId, quantity: (/^\d+$/.test(value.trim()) ? Number(value) : value) as number }));
      const body = { lines: [{ variant_id: line.variant_id, allocations }] };
      const params = { path: { id: props.reservation.id }, header: { 'idempotency-key': idempotency.keyFor(body) } };
      const { body: changed } = await reply(client.POST('/api/reservations/{id}/reallocate', { params, body }));
      setError(undefined);
      const where = allocations.map((allocation) => `${props.locations.find((location) => location.id === allocation.location_id)?.code}: ${allocation.quantity}`);
      props.onDone(changed, `Line ${props.index + 1} now holds its units at ${where.join(', ')}.`);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <form onSubmit={reallocate} aria-label={`Reallocate line ${props.index + 1}`}>
      <fieldset class="allocations">
        <legend>Hold line {props.index + 1}'s units at</legend>
        {offered.map((location) => (
          <label key={location.id} class="field">
            {locationLabel(location)}
            <input
              name={`units-${location.code}`}
              inputMode="numeric"
              value={units[location.id] ?? ''}
              onInput={(event) => setUnits({ ...units, [location.id]: (event.target as HTMLInputElement).value })}
            />
          </label>
        ))}
      </fieldset>
      <p class={placed === line.quantity ? 'hint' : 'hint problem'}>
        {placed} of {line.quantity} units placed.
      </p>
      <ProblemMessage error={error} />
      <button type="submit">Reallocate line {props.index + 1}</button>
    </form>
  );
}
