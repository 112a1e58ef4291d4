import { useState } from 'preact/hooks';
import { client, reply, SCOPES, type ApiClient, type ApiError } from '../api';
import { Field, ProblemMessage, asApiError } from '../components';
import { CopyableId } from '../copyable-id';
import { OneTimeSecret } from '../one-time-secret';
import { AppFields, ClientTypeChoice, NO_APP_SETTINGS, SIGN_IN_SCOPE_WORDS, appBody, type AppSettings, type ClientType } from './app-client-fields';

/**
 * The scopes of an area (`area:access`), by area (`variants:read` and `variants:write` under
 * "variants"), as the API lists them; an app's sign-in scopes (`openid`, `email`, …), which a
 * service client may not hold, have no area and are offered to apps only, first.
 */
const SERVICE_SCOPES = SCOPES.filter((scope) => scope.includes(':'));
const SIGN_IN_SCOPES = SCOPES.filter((scope) => !scope.includes(':'));
const SCOPE_AREAS = [...new Set(SERVICE_SCOPES.map((scope) => scope.split(':')[0]!))].map((area) => ({ area, scopes: SERVICE_SCOPES.filter((scope) => scope.startsWith(`${area}:`)) }));

/** Scopes as checkboxes grouped by area; what the API says of `scopes` shows under them. */
export function ScopeChoice(props: { chosen: readonly string[]; onChange: (scopes: string[]) => void; error: ApiError | undefined; forApp?: boolean }) {
  const message = props.error?.fieldMessage('scopes');
  const toggle = (scope: string) => props.onChange(props.chosen.includes(scope) ? props.chosen.filter((each) => each !== scope) : [...props.chosen, scope]);
  return (
    <fieldset class="scopes" aria-invalid={message ? 'true' : undefined}>
      <legend>{props.forApp ? 'Scopes (what the app may ask a user for)' : 'Scopes (what the client may do)'}</legend>
      {props.forApp && (
        <div class="scope-area" role="group" aria-label="sign-in">
          <strong>sign-in</strong>
          {SIGN_IN_SCOPES.map((scope) => (
            <label class="checkbox" key={scope}>
              <input type="checkbox" checked={props.chosen.includes(scope)} onChange={() => toggle(scope)} /> {scope}{' '}
              <span class="hint">({SIGN_IN_SCOPE_WORDS[scope] ?? scope})</span>
            </label>
          ))}
        </div>
      )}
      {SCOPE_AREAS.map(({ area, scopes }) => (
        <div class="scope-area" role="group" aria-label={area} key={area}>
          <strong>{area}</strong>
          {scopes.map((scope) => (
            <label class="checkbox" key={scope}>
              <input type="checkbox" checked={props.chosen.includes(scope)} onChange={() => toggle(scope)} /> {scope.split(':')[1]}
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

/** What a new client's reply showed once: its id, for an app's configuration, and a secret unless it is public. */
interface Created {
  id: string;
  type: ClientType;
  secret: string | undefined;
}

/** A new client, service or app: its first secret (none for a public app) is shown once. */
export function NewApiClient(props: { onCreated: (created: ApiClient) => void }) {
  const [type, setType] = useState<ClientType>('service');
  const [app, setApp] = useState<AppSettings>(NO_APP_SETTINGS);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [rateLimit, setRateLimit] = useState('');
  const [error, setError] = useState<ApiError>();
  const [created, setCreated] = useState<Created>();
  const isApp = type !== 'service';
  // A service client may not hold the sign-in scopes: they go when the choice goes back to service.
  const chooseType = (next: ClientType) => {
    setType(next);
    if (next === 'service') setScopes((chosen) => chosen.filter((scope) => scope.includes(':')));
  };
  const create = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    const body = {
      name,
      type,
      ...(isApp ? appBody(app) : {}),
      scopes: scopes as (typeof SCOPES)[number][],
      ...(description.trim() ? { description } : {}),
      // Anything but digits goes as typed, for the API to judge and name the field (hence the cast).
      ...(rateLimit.trim() ? { rate_limit: /^\d+$/.test(rateLimit.trim()) ? Number(rateLimit) : (rateLimit as unknown as number) } : {}),
    };
    try {
      const { body: made } = await reply(client.POST('/api/clients', { body }));
      setCreated({ id: made.id, type: made.type, secret: made.secret });
      setName('');
      setDescription('');
      setScopes([]);
      setRateLimit('');
      setApp(NO_APP_SETTINGS);
      props.onCreated(made);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <form class="card" onSubmit={create} aria-label="Create API client">
      <h2>New API client</h2>
      <ClientTypeChoice value={type} onChange={chooseType} />
      <Field label="Name" name="name" value={name} onInput={setName} error={error} required />
      <Field label="Description (optional)" name="description" value={description} onInput={setDescription} error={error} />
      {isApp && <AppFields settings={app} onChange={setApp} error={error} />}
      <ScopeChoice chosen={scopes} onChange={setScopes} error={error} forApp={isApp} />
      <Field label="Requests a minute (optional; empty: the service's default)" name="rate_limit" value={rateLimit} onInput={setRateLimit} error={error} inputMode="numeric" />
      <ProblemMessage error={error} fields={['name', 'description', 'scopes', 'rate_limit', ...(isApp ? ['redirect_uris', 'post_logout_redirect_uris', 'logo_uri'] : [])]} />
      <button type="submit">Create API client</button>
      {created && created.type !== 'service' && (
        <p class="notice" data-testid="new-client-id">
          Client id of the new app: <CopyableId id={created.id} what="client id" />
        </p>
      )}
      {created?.type === 'public' && <p class="hint">A public app has no secret: it proves each sign-in with PKCE, sending its client id alone.</p>}
      {created?.secret && (
        <OneTimeSecret key={created.secret} secret={created.secret} testId="client-secret">
          {created.type === 'service' ? (
            <>
              The service sends it as <code>Authorization: Bearer …</code>, or trades it for an access token at <code>POST /api/oauth/token</code> (client credentials)
              with its client id: <CopyableId id={created.id} what="client id" testId="client-id" />
            </>
          ) : (
            <>The app's back end sends it with the client id at <code>POST /api/oauth/token</code> when it exchanges a sign-in's code.</>
          )}
        </OneTimeSecret>
      )}
    </form>
  );
}
