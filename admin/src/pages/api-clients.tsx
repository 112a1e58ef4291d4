import { useState } from 'preact/hooks';
import { client, entityTag, reply, type ApiClient, type ClientSecret } from '../api';
import { formatTime } from '../components';
import { useConfirmation } from '../confirmation';
import { CopyableId } from '../copyable-id';
import { DataTable } from '../data-table';
import { OneTimeSecret } from '../one-time-secret';
import { Pager, usePages } from '../pages-list';
import { NewApiClient } from './api-client-form';
import { AppClientDetails, clientTypeLabel } from './app-client-details';

/** How long a client's other secrets keep working after a new one is made (API.md: `expire_others_in`). */
const OVERLAPS = [
  { seconds: 0, label: 'stop at once' },
  { seconds: 3600, label: 'work for 1 more hour' },
  { seconds: 86_400, label: 'work for 24 more hours' },
  { seconds: 604_800, label: 'work for 7 more days' },
];

/** Other services' access (admins): each client's scopes, state and secrets, by prefix. */
export function ApiClientsPage() {
  const pages = usePages('clients', (paging) => client.GET('/api/clients', { params: { query: paging } }));
  const confirmation = useConfirmation();
  const [newSecret, setNewSecret] = useState<{ clientName: string; clientId: string; secret: string }>();
  const [open, setOpen] = useState<string>();
  const replaceRow = (changed: ApiClient) => pages.replace((rows) => rows.map((row) => (row.id === changed.id ? changed : row)));
  const reloadClient = async (id: string) => replaceRow((await reply(client.GET('/api/clients/{id}', { params: { path: { id } } }))).body);

  const toggle = (apiClient: ApiClient) => {
    const disabling = apiClient.status === 'active';
    confirmation.ask({
      title: `${disabling ? 'Disable' : 'Enable'} ${apiClient.name}`,
      message: <p>{disabling ? 'Its secrets and access tokens are refused from the next request on.' : 'Its secrets work again; tokens issued before it was disabled stay refused.'}</p>,
      confirmLabel: disabling ? 'Disable' : 'Enable',
      danger: disabling,
      reason: 'none',
      run: async () => {
        const params = { path: { id: apiClient.id }, header: { 'if-match': entityTag(apiClient) } };
        replaceRow((await reply(client.PATCH('/api/clients/{id}', { params, body: { status: disabling ? 'disabled' : 'active' } }))).body);
        return `${disabling ? 'Disabled' : 'Enabled'} ${apiClient.name}.`;
      },
    });
  };
  const remove = (apiClient: ApiClient) =>
    confirmation.ask({
      title: `Delete ${apiClient.name}`,
      message: <p>Its secrets and tokens are refused from the next request on, for good.</p>,
      confirmLabel: 'Delete client',
      danger: true,
      reason: 'none',
      run: async () => {
        await reply(client.DELETE('/api/clients/{id}', { params: { path: { id: apiClient.id }, header: { 'if-match': entityTag(apiClient) } } }));
        await pages.reload();
        return `Deleted ${apiClient.name}.`;
      },
    });
  const roll = (apiClient: ApiClient) => {
    // The dialog's choice, read when the roll is confirmed.
    let overlap = 86_400;
    confirmation.ask({
      title: `New secret for ${apiClient.name}`,
      message: (
        <label>
          Its other secrets{' '}
          <select name="expire_others_in" onChange={(event) => (overlap = Number((event.target as HTMLSelectElement).value))}>
            {OVERLAPS.map((choice) => (
              <option key={choice.seconds} value={choice.seconds} selected={choice.seconds === 86_400}>
                {choice.label}
              </option>
            ))}
          </select>
        </label>
      ),
      confirmLabel: 'Make a new secret',
      reason: 'none',
      run: async () => {
        const { body: made } = await reply(client.POST('/api/clients/{id}/secrets', { params: { path: { id: apiClient.id } }, body: { expire_others_in: overlap } }));
        setNewSecret({ clientName: apiClient.name, clientId: apiClient.id, secret: made.secret });
        setOpen(apiClient.id);
        await reloadClient(apiClient.id);
        return `Made a new secret for ${apiClient.name} (${made.prefix}…).`;
      },
    });
  };
  const removeSecret = (apiClient: ApiClient, secret: ClientSecret) =>
    confirmation.ask({
      title: `Delete the secret ${secret.prefix}… of ${apiClient.name}`,
      message: <p>It is refused from the next request on; tokens already obtained with it live until they expire.</p>,
      confirmLabel: 'Delete secret',
      danger: true,
      reason: 'none',
      run: async () => {
        await reply(client.DELETE('/api/clients/{id}/secrets/{secret_id}', { params: { path: { id: apiClient.id, secret_id: secret.id } } }));
        await reloadClient(apiClient.id);
        return `Deleted the secret ${secret.prefix}… of ${apiClient.name}.`;
      },
    });

  const shown = pages.page?.items.find((apiClient) => apiClient.id === open);
  return (
    <section aria-labelledby="clients-title">
      <h1 id="clients-title">API clients</h1>
      {confirmation.result}
      {confirmation.dialog}
      {newSecret && (
        <OneTimeSecret key={newSecret.secret} secret={newSecret.secret} testId="rolled-secret">
          The new secret of {newSecret.clientName}, whose client id is <CopyableId id={newSecret.clientId} what="client id" testId="rolled-client-id" />
        </OneTimeSecret>
      )}
      <NewApiClient onCreated={() => void pages.restart()} />
      <DataTable
        items={pages.page?.items ?? []}
        columns={[
          { label: 'Name', cell: (apiClient) => apiClient.name },
          { label: 'Kind', cell: (apiClient) => clientTypeLabel(apiClient.type) },
          // The client_id that POST /api/oauth/token takes with a secret.
          { label: 'Client id', wraps: true, cell: (apiClient) => <CopyableId id={apiClient.id} what={`client id of ${apiClient.name}`} /> },
          { label: 'Secrets', cell: (apiClient) => (apiClient.type === 'public' ? 'none (public app)' : apiClient.secrets.map((secret) => `${secret.prefix}…`).join(', ') || 'none') },
          { label: 'Scopes', cell: (apiClient) => apiClient.scopes.join(', ') },
          { label: 'Status', cell: (apiClient) => apiClient.status },
          { label: 'Last used', cell: (apiClient) => formatTime(apiClient.last_used_at) },
          {
            label: 'Actions',
            cell: (apiClient) => (
              <div class="actions">
                {/* An app's button opens its settings (and a confidential app's secrets); a public app has no secret to make. */}
                <button
                  type="button"
                  class="secondary"
                  aria-expanded={open === apiClient.id}
                  aria-label={`${apiClient.type === 'service' ? 'Secrets' : 'Details'} of ${apiClient.name}`}
                  onClick={() => setOpen(open === apiClient.id ? undefined : apiClient.id)}
                >
                  {apiClient.type === 'service' ? 'Secrets' : 'Details'}
                </button>
                {apiClient.type !== 'public' && (
                  <button type="button" class="secondary" aria-label={`New secret for ${apiClient.name}…`} onClick={() => roll(apiClient)}>
                    New secret…
                  </button>
                )}
                <button type="button" class="secondary" aria-label={`${apiClient.status === 'active' ? 'Disable' : 'Enable'} ${apiClient.name}…`} onClick={() => toggle(apiClient)}>
                  {apiClient.status === 'active' ? 'Disable…' : 'Enable…'}
                </button>
                <button type="button" class="danger" aria-label={`Delete ${apiClient.name}…`} onClick={() => remove(apiClient)}>
                  Delete…
                </button>
              </div>
            ),
          },
        ]}
      />
      {pages.page?.items.length === 0 && <p>No API clients yet.</p>}
      <Pager pages={pages} noun="API client" label="API clients" />
      {shown && shown.type !== 'service' && <AppClientDetails key={shown.id} app={shown} onChanged={replaceRow} />}
      {shown && shown.type !== 'public' && (
        <section class="card" aria-labelledby="secrets-title">
          <h2 id="secrets-title">Secrets of {shown.name}</h2>
          <p>
            Client id: <CopyableId id={shown.id} what={`client id of ${shown.name}`} testId="shown-client-id" />
          </p>
          {shown.secrets.length === 0 && <p>None: the client cannot authenticate until it gets a new secret.</p>}
          <DataTable
            compact
            items={shown.secrets}
            columns={[
              { label: 'Prefix', cell: (secret) => <code>{secret.prefix}…</code> },
              { label: 'Created', cell: (secret) => formatTime(secret.created_at) },
              { label: 'Expires', cell: (secret) => (secret.expires_at ? formatTime(secret.expires_at) : 'never') },
              { label: 'Last used', cell: (secret) => formatTime(secret.last_used_at) },
              {
                label: 'Actions',
                cell: (secret) => (
                  <button type="button" class="danger" aria-label={`Delete the secret ${secret.prefix}…`} onClick={() => removeSecret(shown, secret)}>
                    Delete…
                  </button>
                ),
              },
            ]}
          />
        </section>
      )}
    </section>
  );
}
