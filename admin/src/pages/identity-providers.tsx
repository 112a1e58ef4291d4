import { useEffect, useState } from 'preact/hooks';
import { client, entityTag, reply, type ApiError } from '../api';
import { ProblemMessage, asApiError } from '../components';
import { useConfirmation } from '../confirmation';
import { CopyableId } from '../copyable-id';
import { DataTable } from '../data-table';
import type { IdentityProvider } from '../sign-in-types';
import { NewIdentityProvider } from './identity-provider-form';

/**
 * Where the provider sends people back (API.md section 20: `{PUBLIC_URL}/oauth/callback/{id}`),
 * to register at the provider. The console is served by the service, so its origin is the
 * service's own.
 */
const callbackUrl = (provider: IdentityProvider) => `${location.origin}/oauth/callback/${provider.id}`;

const credentialOf = (provider: IdentityProvider) => (provider.apple_team_id ? `Apple key ${provider.apple_key_id} (team ${provider.apple_team_id})` : 'client secret');

/** The OpenID providers people may sign in with (admins): added after a discovery check, enabled, disabled, deleted. Every write may ask for a step-up. */
export function IdentityProvidersPage() {
  const [providers, setProviders] = useState<IdentityProvider[]>();
  const [error, setError] = useState<ApiError>();
  const confirmation = useConfirmation();
  const load = async () => {
    try {
      setProviders((await reply(client.GET('/api/identity-providers'))).body.items);
      setError(undefined);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void load(), []);

  const toggle = (provider: IdentityProvider) => {
    const disabling = provider.enabled;
    confirmation.ask({
      title: `${disabling ? 'Disable' : 'Enable'} ${provider.name}`,
      message: (
        <p>
          {disabling
            ? 'Its button leaves the sign-in page and sign-ins already under way with it fail. Linked identities stay, and work again once it is enabled.'
            : 'Its button shows on the sign-in page again, and the identities linked to it sign their users in.'}
        </p>
      ),
      confirmLabel: disabling ? 'Disable' : 'Enable',
      danger: disabling,
      reason: 'none',
      run: async () => {
        const params = { path: { id: provider.id }, header: { 'if-match': entityTag(provider) } };
        await reply(client.PATCH('/api/identity-providers/{id}', { params, body: { enabled: !disabling } }));
        await load();
        return `${disabling ? 'Disabled' : 'Enabled'} ${provider.name}.`;
      },
    });
  };
  const remove = (provider: IdentityProvider) =>
    confirmation.ask({
      title: `Delete ${provider.name}`,
      message: <p>Its button goes, and every identity linked to it is removed: people who signed in only with it sign in by email code from then on.</p>,
      confirmLabel: 'Delete provider',
      danger: true,
      reason: 'none',
      typeToConfirm: provider.name,
      run: async () => {
        await reply(client.DELETE('/api/identity-providers/{id}', { params: { path: { id: provider.id }, header: { 'if-match': entityTag(provider) } } }));
        await load();
        return `Deleted ${provider.name}.`;
      },
    });

  return (
    <section aria-labelledby="providers-title">
      <h1 id="providers-title">Identity providers</h1>
      <p class="hint">People sign in to the shop with these providers' accounts (Google, Apple, Microsoft, any OpenID provider): each shows as a button on the sign-in page.</p>
      {confirmation.result}
      {confirmation.dialog}
      <NewIdentityProvider
        onCreated={(created) => {
          confirmation.announce(`Added ${created.name}. Register its callback URL at the provider.`);
          void load();
        }}
      />
      <ProblemMessage error={error} />
      <DataTable
        items={providers ?? []}
        columns={[
          {
            label: 'Name',
            cell: (provider) => (
              <>
                {provider.name}
                <br />
                <span class="hint">button “{provider.button_label}”</span>
              </>
            ),
          },
          { label: 'Issuer', wraps: true, cell: (provider) => provider.issuer },
          { label: 'Client id', wraps: true, cell: (provider) => provider.client_id },
          { label: 'Credential', cell: credentialOf },
          { label: 'Scopes', cell: (provider) => provider.scopes.join(' ') },
          { label: 'Links by email', cell: (provider) => (provider.link_by_verified_email ? 'yes, when verified' : 'no') },
          { label: 'Status', cell: (provider) => (provider.enabled ? 'enabled' : 'disabled') },
          { label: 'Callback URL', wraps: true, cell: (provider) => <CopyableId id={callbackUrl(provider)} what={`callback URL of ${provider.name}`} /> },
          {
            label: 'Actions',
            cell: (provider) => (
              <div class="actions">
                <button type="button" class="secondary" aria-label={`${provider.enabled ? 'Disable' : 'Enable'} ${provider.name}…`} onClick={() => toggle(provider)}>
                  {provider.enabled ? 'Disable…' : 'Enable…'}
                </button>
                <button type="button" class="danger" aria-label={`Delete ${provider.name}…`} onClick={() => remove(provider)}>
                  Delete…
                </button>
              </div>
            ),
          },
        ]}
      />
      {providers?.length === 0 && <p>No identity providers yet: people sign in with a password, an email code or a passkey.</p>}
    </section>
  );
}
