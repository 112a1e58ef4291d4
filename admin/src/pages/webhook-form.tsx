import { useEffect, useRef, useState } from 'preact/hooks';
import { client, entityTag, reply, type ApiError, type Webhook } from '../api';
import { Field, ProblemMessage, asApiError } from '../components';
import { OneTimeSecret } from '../one-time-secret';
import { ALL_EVENTS, EventChoice, noEventsChosen } from './webhook-events';

const WEBHOOK_FIELDS = ['url', 'events', 'description'];

/** Creation shows the signing secret once, with a copy button: the API never shows it again. */
export function NewWebhook(props: { onCreated: () => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Webhook['events']>(ALL_EVENTS);
  const [description, setDescription] = useState('');
  const [error, setError] = useState<ApiError>();
  const [eventsProblem, setEventsProblem] = useState<string>();
  const [secret, setSecret] = useState<string>();
  const create = async (event: Event) => {
    event.preventDefault();
    setEventsProblem(noEventsChosen(events));
    if (noEventsChosen(events)) return;
    const body = { url, events, ...(description.trim() ? { description } : {}) };
    try {
      const { body: created } = await reply(client.POST('/api/webhooks', { body }));
      setSecret(created.secret);
      setError(undefined);
      setUrl('');
      setEvents(ALL_EVENTS);
      setDescription('');
      props.onCreated();
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <form class="card" onSubmit={create} aria-label="Create webhook">
      <h2>New webhook</h2>
      <Field label="URL" name="url" value={url} onInput={setUrl} error={error} type="url" required />
      <EventChoice chosen={events} onChange={setEvents} error={error} message={eventsProblem} />
      <Field label="Description (optional)" name="description" value={description} onInput={setDescription} error={error} />
      <ProblemMessage error={error} fields={WEBHOOK_FIELDS} />
      <button type="submit">Create webhook</button>
      {secret && (
        <OneTimeSecret key={secret} secret={secret} testId="webhook-secret">
          The key that signs each delivery (HMAC-SHA256, Standard Webhooks) is the part after <code>whsec_</code>, <strong>base64-decoded</strong>: 32 bytes, not the
          text itself. The <code>standardwebhooks</code> libraries take the whole secret and decode it for you.
        </OneTimeSecret>
      )}
    </form>
  );
}

/** Changes a webhook's URL, events and description, guarded by its ETag; its state and secret stay. */
export function EditWebhook(props: { webhook: Webhook; onSaved: (webhook: Webhook) => void; onCancel: () => void; onStale: (fresh: Webhook) => void }) {
  const { webhook } = props;
  const heading = useRef<HTMLHeadingElement>(null);
  // The form opens above the list: focus, and the view, move to it.
  useEffect(() => {
    heading.current?.focus();
    heading.current?.scrollIntoView({ block: 'start' });
  }, []);
  const reload = async () => {
    try {
      props.onStale((await reply(client.GET('/api/webhooks/{id}', { params: { path: { id: webhook.id } } }))).body);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  const [url, setUrl] = useState(webhook.url);
  const [events, setEvents] = useState<Webhook['events']>(webhook.events);
  const [description, setDescription] = useState(webhook.description ?? '');
  const [error, setError] = useState<ApiError>();
  const [eventsProblem, setEventsProblem] = useState<string>();
  const save = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setEventsProblem(noEventsChosen(events));
    if (noEventsChosen(events)) return;
    const body = { url, events, ...(description.trim() ? { description } : {}), enabled: webhook.enabled };
    try {
      const params = { path: { id: webhook.id }, header: { 'if-match': entityTag(webhook) } };
      props.onSaved((await reply(client.PUT('/api/webhooks/{id}', { params, body }))).body);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <form class="card" onSubmit={save} aria-label="Edit webhook">
      <h2 ref={heading} tabIndex={-1}>
        Edit the webhook to {webhook.url}
      </h2>
      <Field label="URL" name="url" value={url} onInput={setUrl} error={error} type="url" required />
      <EventChoice chosen={events} onChange={setEvents} error={error} message={eventsProblem} />
      <Field label="Description (optional)" name="description" value={description} onInput={setDescription} error={error} />
      <ProblemMessage error={error} fields={WEBHOOK_FIELDS}>
        {error?.problem.code === 'precondition_failed' && (
          <>
            Someone else changed this webhook.{' '}
            <button type="button" class="secondary" onClick={() => void reload()}>
              Reload it
            </button>
          </>
        )}
      </ProblemMessage>
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit">Save webhook</button>
      </div>
    </form>
  );
}
