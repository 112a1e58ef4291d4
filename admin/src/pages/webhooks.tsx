import { useState } from 'preact/hooks';
import { client, entityTag, reply, type Webhook } from '../api';
import { useConfirmation } from '../confirmation';
import { DataTable } from '../data-table';
import { Pager, usePages } from '../pages-list';
import { Deliveries } from './webhook-deliveries';
import { EditWebhook, NewWebhook } from './webhook-form';

export function WebhooksPage() {
  const pages = usePages('webhooks', (paging) => client.GET('/api/webhooks', { params: { query: paging } }));
  const confirmation = useConfirmation();
  // The webhook whose deliveries are shown, and a count of pings sent to it, which reloads them.
  const [open, setOpen] = useState<string>();
  const [pings, setPings] = useState(0);
  const [editing, setEditing] = useState<Webhook>();
  const replaceRow = (changed: Webhook) => pages.replace((rows) => rows.map((row) => (row.id === changed.id ? changed : row)));

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
        replaceRow(changed);
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

  const ping = (webhook: Webhook) =>
    confirmation.ask({
      title: `Send a ping to ${webhook.url}`,
      message: <p>A webhook.ping event goes to this webhook alone, whatever it subscribes to; its delivery shows below.</p>,
      confirmLabel: 'Send ping',
      reason: 'none',
      run: async () => {
        await reply(client.POST('/api/webhooks/{id}/ping', { params: { path: { id: webhook.id } } }));
        setOpen(webhook.id);
        setPings((count) => count + 1);
        return `A ping is on its way to ${webhook.url}.`;
      },
    });

  const shown = pages.page?.items.find((webhook) => webhook.id === open);
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      {confirmation.result}
      {confirmation.dialog}
      {editing ? (
        <EditWebhook
          key={`${editing.id} ${editing.version}`}
          webhook={editing}
          onCancel={() => setEditing(undefined)}
          onStale={(fresh) => {
            replaceRow(fresh);
            setEditing(fresh);
          }}
          onSaved={(saved) => {
            replaceRow(saved);
            setEditing(undefined);
            confirmation.announce(`Saved the webhook to ${saved.url}.`);
          }}
        />
      ) : (
        <NewWebhook onCreated={() => void pages.restart()} />
      )}
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
                <button type="button" class="secondary" onClick={() => setEditing(webhook)}>
                  Edit
                </button>
                <button type="button" class="secondary" onClick={() => ping(webhook)} disabled={!webhook.enabled} title={webhook.enabled ? undefined : 'A disabled webhook gets no events'}>
                  Ping…
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
      {shown && <Deliveries key={shown.id} webhook={shown} shown={pings} />}
    </section>
  );
}

