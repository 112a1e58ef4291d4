import { useState } from 'preact/hooks';
import { client, entityTag, reply, SCOPES, type ApiClient, type ApiError } from '../api';
import { ProblemMessage, asApiError } from '../components';
import { CopyableId } from '../copyable-id';
import { ScopeChoice } from './api-client-form';
import { AppFields, CLIENT_TYPES, SIGN_IN_SCOPE_WORDS, appPatch, settingsOf } from './app-client-fields';

/** What a list says of a client's kind: "Public app" rather than `public`. */
export const clientTypeLabel = (type: ApiClient['type']) => CLIENT_TYPES.find((choice) => choice.type === type)?.label ?? type;

const uriList = (uris: readonly string[]) =>
  uris.length === 0 ? (
    'none'
  ) : (
    <ul class="uris">
      {uris.map((uri) => (
        <li key={uri}>
          <code>{uri}</code>
        </li>
      ))}
    </ul>
  );

/** An app's settings as its developers need them: the client id to copy, where users go back to, and what it may ask for. */
export function AppClientDetails(props: { app: ApiClient; onChanged: (app: ApiClient) => void }) {
  const { app } = props;
  const [editing, setEditing] = useState(false);
  return (
    <section class="card" aria-labelledby="app-details-title">
      <h2 id="app-details-title">App {app.name}</h2>
      <dl class="facts">
        <dt>Client id</dt>
        <dd>
          <CopyableId id={app.id} what={`client id of ${app.name}`} />
        </dd>
        <dt>Kind</dt>
        <dd>{app.type === 'public' ? 'Public app: no secret; it signs users in with PKCE alone.' : 'Confidential app: its back end authenticates with a secret.'}</dd>
        <dt>Redirect URIs</dt>
        <dd>{uriList(app.redirect_uris)}</dd>
        <dt>After signing out</dt>
        <dd>{uriList(app.post_logout_redirect_uris)}</dd>
        <dt>Consent</dt>
        <dd>{app.first_party ? "First-party: the shop's own app, users are never asked" : 'Third-party: users are asked once for the scopes it wants'}</dd>
        <dt>Logo</dt>
        <dd>{app.logo_uri ? <code class="uris">{app.logo_uri}</code> : 'none'}</dd>
        <dt>May ask for</dt>
        <dd>{app.scopes.map((scope) => (SIGN_IN_SCOPE_WORDS[scope] ? `${scope} (${SIGN_IN_SCOPE_WORDS[scope]})` : scope)).join(', ')}</dd>
        <dt>ID tokens</dt>
        <dd>signed with {app.id_token_signed_response_alg ?? 'RS256'}</dd>
      </dl>
      {editing ? (
        <EditApp
          app={app}
          onDone={(changed) => {
            setEditing(false);
            if (changed) props.onChanged(changed);
          }}
        />
      ) : (
        <div class="actions">
          <button type="button" class="secondary" onClick={() => setEditing(true)}>
            Edit settings
          </button>
        </div>
      )}
    </section>
  );
}

/** The app's settings and scopes, changed as one merge patch against the version shown (a change made meanwhile is refused, 412). */
function EditApp(props: { app: ApiClient; onDone: (changed: ApiClient | undefined) => void }) {
  const [settings, setSettings] = useState(() => settingsOf(props.app));
  const [scopes, setScopes] = useState<string[]>(props.app.scopes);
  const [error, setError] = useState<ApiError>();
  const save = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      const params = { path: { id: props.app.id }, header: { 'if-match': entityTag(props.app) } };
      const body = { ...appPatch(settings), scopes: scopes as (typeof SCOPES)[number][] };
      props.onDone((await reply(client.PATCH('/api/clients/{id}', { params, body }))).body);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <form onSubmit={save} aria-label={`Settings of ${props.app.name}`}>
      <AppFields settings={settings} onChange={setSettings} error={error} />
      <ScopeChoice chosen={scopes} onChange={setScopes} error={error} forApp />
      <ProblemMessage error={error} fields={['redirect_uris', 'post_logout_redirect_uris', 'logo_uri', 'scopes']} />
      <div class="actions">
        <button type="button" class="secondary" onClick={() => props.onDone(undefined)}>
          Cancel
        </button>
        <button type="submit">Save settings</button>
      </div>
    </form>
  );
}
