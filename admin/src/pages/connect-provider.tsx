import { useEffect, useState } from 'preact/hooks';
import { client, reply, type ApiError } from '../api';
import { ProblemMessage, asApiError } from '../components';
import { useRoute } from '../route';

interface ConnectableProvider {
  id: string;
  name: string;
  button_label: string;
}

/**
 * "Connect" (API.md section 20): staff link their account at another provider from here, as a
 * signed-in session must (their accounts are never linked by email). The service answers the
 * provider's URL, bound to this browser and this session; the browser goes there, and the
 * callback sends it back here (`#/profile?connected=<provider id>`) with the identity linked.
 * Providers already linked are left out.
 */
export function ConnectProvider(props: { linkedProviderIds: string[] }) {
  const route = useRoute();
  const [providers, setProviders] = useState<ConnectableProvider[]>();
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  // Said once: the hash drops the provider id at once, so a reload or a later visit says nothing.
  const [connectedId] = useState(() => route.query.get('connected'));
  useEffect(() => {
    if (connectedId) history.replaceState(null, '', '#/profile');
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
  const justConnected = providers?.find((provider) => provider.id === connectedId && props.linkedProviderIds.includes(provider.id));
  const offered = providers?.filter((provider) => !props.linkedProviderIds.includes(provider.id)) ?? [];
  return (
    <div class="connect-providers">
      {/* A live region there from the start, filled once the list is read, so a screen reader says it. */}
      <p role="status">{justConnected ? `Your ${justConnected.name} account is now linked: it signs you in.` : ''}</p>
      {offered.length > 0 && (
        <>
          <p>Link an account you have at another provider, to sign in with it:</p>
          <p class="actions">
            {offered.map((provider) => (
              <button key={provider.id} type="button" class="secondary" disabled={busy} onClick={() => void connect(provider)}>
                Connect {provider.name}
              </button>
            ))}
          </p>
        </>
      )}
      <ProblemMessage error={error} />
    </div>
  );
}
