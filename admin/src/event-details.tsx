import type { ShopEvent } from './api';
import { formatMoney } from './money';

/**
 * The fields of an event's data that hold money, in minor units (shown as money in the event's
 * currency, else the shop's). By type: a stock change's `delta` counts units, a balance's cents.
 */
function moneyFields(type: ShopEvent['type']): ReadonlySet<string> {
  if (type === 'user.balance_changed') return new Set(['balance', 'delta', 'balance_after']);
  if (type.startsWith('variant.')) return new Set(['price']);
  return new Set();
}

function shown(field: string, value: unknown, currency: string, money: ReadonlySet<string>): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'number' && money.has(field)) return formatMoney(value, currency);
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const asRecord = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/**
 * An event's data in words: `before` and `after` as a table of the fields that changed, the rest
 * as a list, amounts as money; the raw JSON stays a click away.
 */
export function EventDetails(props: { event: ShopEvent; currency: string }) {
  const { before, after, reason, ...rest } = props.event.data;
  const currency = typeof rest.currency === 'string' ? rest.currency : props.currency;
  const was = asRecord(before);
  const is = asRecord(after);
  const changed = [...new Set([...Object.keys(was), ...Object.keys(is)])].filter((field) => JSON.stringify(was[field]) !== JSON.stringify(is[field]));
  const others = Object.entries(rest).filter(([field]) => field !== 'currency');
  const money = moneyFields(props.event.type);
  return (
    <div class="event-details">
      {typeof reason === 'string' && <p>“{reason}”</p>}
      {changed.length > 0 && (
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
                <th scope="row">{field}</th>
                <td>{field in was ? shown(field, was[field], currency, money) : '—'}</td>
                <td>{field in is ? shown(field, is[field], currency, money) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {others.length > 0 && (
        <ul class="event-data">
          {others.map(([field, value]) => (
            <li key={field}>
              {field}: {shown(field, value, currency, money)}
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
