import type { ApiError, Webhook } from '../api';
import { webhookEventsValues } from '../../../client/api-types';

type Subscription = Webhook['events'][number];

/** Every type a webhook may be sent, as the API lists them (src/events/event-types.ts, less `webhook.ping`). */
const EVENT_TYPES = webhookEventsValues.filter((type) => type !== '*');

/** The areas in words, in the API's order; a type's area is what comes before its dot. */
const AREA_NAMES: Record<string, string> = {
  user: 'Users',
  variant: 'Variants',
  reservation: 'Reservations',
  webhook: 'Webhooks',
  signing_key: 'Signing keys',
  client: 'API clients',
  import: 'Imports',
  location: 'Locations',
  identity_provider: 'Identity providers',
};
const areaOf = (type: string) => type.split('.')[0]!;
const AREAS = [...new Set(EVENT_TYPES.map(areaOf))].map((area) => ({ area, name: AREA_NAMES[area] ?? area.replaceAll('_', ' '), types: EVENT_TYPES.filter((type) => areaOf(type) === area) }));

/** What a new webhook is sent until staff choose otherwise, and what the form goes back to after Create. */
export const ALL_EVENTS: Subscription[] = ['*'];

/** The chosen types in the API's order, so the same choice is always stored alike. */
const inOrder = (chosen: readonly Subscription[]) => EVENT_TYPES.filter((type) => chosen.includes(type));

/** The console's own word on a choice of nothing, before any request. */
export const noEventsChosen = (chosen: readonly Subscription[]) => (chosen.length === 0 ? 'Choose at least one event, or every event.' : undefined);

/**
 * The events a webhook is sent, as checkboxes grouped by area (#56: a typed list let a typo
 * through to a wall of 37 types in red): every event (`*`, types added later included), or some.
 */
export function EventChoice(props: { chosen: readonly Subscription[]; onChange: (events: Subscription[]) => void; error: ApiError | undefined; message?: string | undefined }) {
  const every = props.chosen.includes('*');
  const message = props.message ?? props.error?.fieldMessage('events');
  const toggle = (type: Subscription) => props.onChange(inOrder(props.chosen.includes(type) ? props.chosen.filter((each) => each !== type) : [...props.chosen, type]));
  return (
    <fieldset class="scopes" aria-invalid={message ? 'true' : undefined}>
      <legend>Events to send</legend>
      <label class="checkbox">
        <input type="checkbox" checked={every} onChange={() => props.onChange(every ? [] : ALL_EVENTS)} /> Every event, including types added later
      </label>
      {AREAS.map(({ area, name, types }) => (
        <div class="scope-area" role="group" aria-label={name} key={area}>
          <strong>{name}</strong>
          {types.map((type) => (
            <label class="checkbox" key={type}>
              <input type="checkbox" checked={every || props.chosen.includes(type)} disabled={every} onChange={() => toggle(type)} /> {type.slice(area.length + 1).replaceAll('_', ' ')}
            </label>
          ))}
        </div>
      ))}
      {message && (
        <span class="field-error" role="alert">
          {message}
        </span>
      )}
    </fieldset>
  );
}
