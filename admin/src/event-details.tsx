import type { ComponentChildren } from 'preact';
import type { ShopEvent } from './api';
import { formatTime } from './components';
import { formatMoney } from './money';
import { NameOf, type NamedKind } from './names';

/**
 * The fields of an event's data that hold money, in minor units (shown as money in the event's
 * currency, else the shop's). By type: a stock change's `delta` counts units, a balance's cents.
 */
function moneyFields(type: ShopEvent['type']): ReadonlySet<string> {
  if (type === 'user.balance_changed') return new Set(['balance', 'delta', 'balance_after']);
  if (type.startsWith('variant.')) return new Set(['price']);
  return new Set();
}

/** The record an `…_id` field points at, so it shows by name rather than as a UUID. */
const KIND_OF_ID_FIELD: Record<string, NamedKind> = {
  variant_id: 'variant',
  user_id: 'user',
  client_id: 'client',
  reservation_id: 'reservation',
  webhook_id: 'webhook',
  import_id: 'import',
  location_id: 'location',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

type Shown = { currency: string; money: ReadonlySet<string> };

/** A field's name in words: `rate_limit` → "rate limit". */
const fieldName = (field: string) => field.replaceAll('_', ' ');

/**
 * One value as staff read it: money as money, an id as the record's name, a time as a local time,
 * a list as its items, a reservation's lines as "2 × SKU", an object as "name: value" pairs; never JSON.
 */
function Value(props: { field: string; value: unknown; shown: Shown }): ComponentChildren {
  const { field, value, shown } = props;
  if (value === null || value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return shown.money.has(field) ? formatMoney(value, shown.currency) : String(value);
  if (typeof value === 'string') {
    const kind = KIND_OF_ID_FIELD[field];
    if (kind && UUID.test(value)) return <NameOf kind={kind} id={value} />;
    if ((field.endsWith('_at') || field === 'failing_since') && TIMESTAMP.test(value)) return formatTime(value);
    return value;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return 'none';
    // Session ids name nothing staff can open: how many is what matters.
    if (field.startsWith('session_ids')) return `${value.length} session${value.length === 1 ? '' : 's'}`;
    return (
      <>
        {value.map((item, index) => (
          <span key={index}>
            {index > 0 && (isLine(item) ? '; ' : ', ')}
            {isLine(item) ? <Line line={item} shown={shown} /> : <Value field={field} value={item} shown={shown} />}
          </span>
        ))}
      </>
    );
  }
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    // A client's secret is named by its prefix, as the API clients page shows it.
    if (typeof record.prefix === 'string') return `${record.prefix}…`;
    if (Object.keys(record).length === 0) return 'none';
    return (
      <>
        {Object.entries(record).map(([key, inner], index) => (
          <span key={key}>
            {index > 0 && ', '}
            {fieldName(key)}: <Value field={key} value={inner} shown={shown} />
          </span>
        ))}
      </>
    );
  }
  return String(value);
}

/** A reservation's line: so many units of a variant, maybe at a location. */
type ReservationLine = { variant_id: string; quantity: number; location_id?: string };
const isLine = (item: unknown): item is ReservationLine =>
  typeof item === 'object' && item !== null && typeof (item as ReservationLine).variant_id === 'string' && typeof (item as ReservationLine).quantity === 'number';

function Line(props: { line: ReservationLine; shown: Shown }) {
  const { line } = props;
  return (
    <>
      {line.quantity} × <NameOf kind="variant" id={line.variant_id} />
      {line.location_id && (
        <>
          {' '}
          at <NameOf kind="location" id={line.location_id} />
        </>
      )}
    </>
  );
}

const asRecord = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/**
 * An event's data in words: `before` and `after` as a table of the fields that changed (each
 * value labelled, so the narrow screen's cards keep "Before" and "After"), the rest as a list,
 * amounts as money, ids as names; the raw JSON stays a click away.
 */
export function EventDetails(props: { event: ShopEvent; currency: string }) {
  const { before, after, reason, ...rest } = props.event.data;
  const shown: Shown = { currency: typeof rest.currency === 'string' ? rest.currency : props.currency, money: moneyFields(props.event.type) };
  const was = asRecord(before);
  const is = asRecord(after);
  const changed = [...new Set([...Object.keys(was), ...Object.keys(is)])].filter((field) => JSON.stringify(was[field]) !== JSON.stringify(is[field]));
  const others = Object.entries(rest).filter(([field]) => field !== 'currency');
  // A creation has only `after`, a deletion only `before`: a column of dashes beside it says nothing, so it is a plain list.
  const oneSided = Object.keys(was).length === 0 || Object.keys(is).length === 0;
  const side = Object.keys(was).length === 0 ? is : was;
  return (
    <div class="event-details">
      {typeof reason === 'string' && <p>“{reason}”</p>}
      {changed.length > 0 && oneSided && (
        <>
          {side === was && <p>Before:</p>}
          <ul class="event-data">
            {changed.map((field) => (
              <li key={field}>
                {fieldName(field)}: <Value field={field} value={side[field]} shown={shown} />
              </li>
            ))}
          </ul>
        </>
      )}
      {changed.length > 0 && !oneSided && (
        <table class="diff">
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {changed.map((field) => (
              <tr key={field}>
                <th scope="row">{fieldName(field)}</th>
                <td data-label="Before">{field in was ? <Value field={field} value={was[field]} shown={shown} /> : '—'}</td>
                <td data-label="After">{field in is ? <Value field={field} value={is[field]} shown={shown} /> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {others.length > 0 && (
        <ul class="event-data">
          {others.map(([field, value]) => (
            <li key={field}>
              {fieldName(field)}: <Value field={field} value={value} shown={shown} />
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>Raw data</summary>
        <pre>{JSON.stringify(props.event.data, null, 2)}</pre>
      </details>
    </div>
  );
}
