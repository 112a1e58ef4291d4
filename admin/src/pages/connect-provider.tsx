import { useEffect, useState } from 'preact/hooks';
import { client, reply, type ApiError } from '../api';
import { ProblemMessage, asApiError } from '../components';

interface ConnectableProvider {
  id: string;
  name: string;
  button_label: string;
}

/** The provider the callback just linked, from the hash it sent the browser back to (`#/profile?connected=<id>`). */
function connectedProviderId(): string | null {
  const [, query = ''] = location.hash.split('?');
  return new URLSearchParams(query).get('connected');
}

/**
 * "Connect" (API.md section 20): staff link their account at another provider from here, as a
 * signed-in session must (their accounts are never linked by email). The service answers the
 * provider's URL, bound to this browser and this session; the browser goes there, and the
 * callback sends it back here with the identity linked. Providers already linked are left out.
 */
export function ConnectProvider(props: { linkedProviderIds: string[] }) {
  const [providers, setProviders] = useState<ConnectableProvider[]>();
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    reply(client.GET('/api/users/profile/connectable-providers'))
      .then(({ body }) => setProviders(body.items))
      .catch((caught) => setError(asApiError(caught)));
  }, []);
  const connect = async (provider: ConnectableProvider) => {
    setBusy(true);
    setError(undefined);
    try {
      const { body } = await reply(client.POST('/api/users/profile/identities/connect', { body: { provider_id: provider.id } }));
      location.assign(body.authorization_url);
    } catch (caught) {
      setError(asApiError(caught));
      setBusy(false);
    }
  };
  const justConnected = providers?.find((provider) => provider.id === connectedProviderId());
  const offered = providers?.filter((provider) => !props.linkedProviderIds.includes(provider.id)) ?? [];
  return (
    <div class="connect-providers">
      {justConnected && props.linkedProviderIds.includes(justConnected.id) && <p role="status">Your {justConnected.name} account is now linked: it signs you in.</p>}
      {offered.length > 0 && (
        <>
          <p>Link an account you have at another provider, to sign in with it:</p>
          <p class="actions">
            {offered.map((provider) => (
              <button key={provider.id} type="button" class="secondary" disabled={busy} onClick={() => void connect(provider)}>
                Connect: {provider.button_label}
              </button>
            ))}
          </p>
        </>
      )}
      <ProblemMessage error={error} />
    </div>
  );
}
