import { useState } from 'preact/hooks';
import { client, entityTag, reply, type ApiError, type Delivery, type Webhook } from '../api';
import { useConfirmation } from '../confirmation';
import { Field, ProblemMessage, asApiError, formatTime } from '../components';
import { DataTable } from '../data-table';
import { Pager, usePages } from '../pages-list';

export function WebhooksPage() {
  const pages = usePages('webhooks', (paging) => client.GET('/api/webhooks', { params: { query: paging } }));
  const confirmation = useConfirmation();
  const [open, setOpen] = useState<string>();

  const toggle = (webhook: Webhook) =>
    confirmation.ask({
      title: `${webhook.enabled ? 'Disable' : 'Enable'} the webhook to ${webhook.url}`,
      message: <p>{webhook.enabled ? 'No event is sent to it until it is enabled again.' : 'Events that occur from now on are sent to it.'}</p>,
      confirmLabel: webhook.enabled ? 'Disable' : 'Enable',
      danger: webhook.enabled,
      reason: 'none',
      run: async () => {
        const body = { url: webhook.url, events: webhook.events, description: webhook.description ?? undefined, enabled: !webhook.enabled };
        const { body: changed } = await reply(client.PUT('/api/webhooks/{id}', { params: { path: { id: webhook.id }, header: { 'if-match': entityTag(webhook) } }, body }));
        pages.replace((rows) => rows.map((row) => (row.id === webhook.id ? changed : row)));
        return `${changed.enabled ? 'Enabled' : 'Disabled'} the webhook to ${webhook.url}.`;
      },
    });
  const remove = (webhook: Webhook) =>
    confirmation.ask({
      title: `Delete the webhook to ${webhook.url}`,
      message: <p>Its deliveries stop, pending ones included.</p>,
      confirmLabel: 'Delete webhook',
      danger: true,
      reason: 'none',
      run: async () => {
        await reply(client.DELETE('/api/webhooks/{id}', { params: { path: { id: webhook.id }, header: { 'if-match': entityTag(webhook) } } }));
        await pages.reload();
        return `Deleted the webhook to ${webhook.url}.`;
      },
    });

  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      {confirmation.result}
      {confirmation.dialog}
      <NewWebhook onCreated={() => void pages.restart()} />
      <DataTable
        items={pages.page?.items ?? []}
        columns={[
          { label: 'URL', wraps: true, cell: (webhook) => webhook.url },
          { label: 'Events', cell: (webhook) => webhook.events.join(', ') },
          { label: 'Description', cell: (webhook) => webhook.description ?? '—' },
          { label: 'State', cell: (webhook) => (webhook.enabled ? 'enabled' : 'disabled') },
          {
            label: 'Actions',
            cell: (webhook) => (
              <div class="actions">
                <button type="button" class="secondary" aria-expanded={open === webhook.id} onClick={() => setOpen(open === webhook.id ? undefined : webhook.id)}>
                  Deliveries
                </button>
                <button type="button" class="secondary" onClick={() => toggle(webhook)}>
                  {webhook.enabled ? 'Disable…' : 'Enable…'}
                </button>
                <button type="button" class="danger" onClick={() => remove(webhook)}>
                  Delete…
                </button>
              </div>
            ),
          },
        ]}
      />
      {pages.page?.items.length === 0 && <p>No webhooks yet.</p>}
      <Pager pages={pages} noun="webhook" label="Webhooks" />
      {open && <Deliveries key={open} webhookId={open} />}
    </section>
  );
}

/** Creation shows the signing secret once, with a copy button: the API never shows it again. */
function NewWebhook(props: { onCreated: () => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('*');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<ApiError>();
  const [secret, setSecret] = useState<string>();
  const [copied, setCopied] = useState(false);
  const create = async (event: Event) => {
    event.preventDefault();
    const body = {
      url,
      // Typed as the service's event types: an unknown one is the service's 400, shown by the field.
      events: events.split(',').map((type) => type.trim()).filter(Boolean) as Webhook['events'],
      ...(description.trim() ? { description } : {}),
    };
    try {
      const { body: created } = await reply(client.POST('/api/webhooks', { body }));
      setSecret(created.secret);
      setCopied(false);
      setError(undefined);
      setUrl('');
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
      <Field label="Events (comma-separated types, or * for all)" name="events" value={events} onInput={setEvents} error={error} required />
      <Field label="Description (optional)" name="description" value={description} onInput={setDescription} error={error} />
      <ProblemMessage error={error} />
      <button type="submit">Create webhook</button>
      {secret && (
        <div class="secret" role="status">
          <p>Signing secret, shown only now: store it with the receiver.</p>
          <code data-testid="webhook-secret">{secret}</code>{' '}
          <button
            type="button"
            class="secondary"
            onClick={() =>
              void navigator.clipboard
                .writeText(secret)
                .then(() => setCopied(true))
                .catch(() => setCopied(false))
            }
          >
            Copy secret
          </button>
          {copied && <span> Copied.</span>}
        </div>
      )}
    </form>
  );
}

function Deliveries(props: { webhookId: string }) {
  const pages = usePages(props.webhookId, (paging) => client.GET('/api/webhooks/{id}/deliveries', { params: { path: { id: props.webhookId }, query: paging } }));
  return (
    <section aria-labelledby="deliveries-title" class="card">
      <h2 id="deliveries-title">Deliveries</h2>
      <DataTable
        compact
        items={pages.page?.items ?? []}
        columns={[
          { label: 'Event', cell: (delivery) => delivery.event_type },
          { label: 'Status', cell: (delivery) => delivery.status },
          { label: 'Attempts', numeric: true, cell: (delivery) => delivery.attempts },
          { label: 'Last answer', cell: (delivery) => delivery.last_error ?? delivery.last_status_code ?? '—' },
          { label: 'Next attempt', cell: (delivery) => formatTime(delivery.next_attempt_at) },
          { label: 'Created', cell: (delivery) => formatTime(delivery.created_at) },
        ]}
      />
      {pages.page?.items.length === 0 && <p>No deliveries yet.</p>}
      <Pager pages={pages} noun="delivery" nouns="deliveries" label="Deliveries" />
    </section>
  );
}
