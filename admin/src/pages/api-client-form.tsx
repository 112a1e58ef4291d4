import { useState } from 'preact/hooks';
import { client, reply, SCOPES, type ApiClient, type ApiError } from '../api';
import { Field, ProblemMessage, asApiError } from '../components';
import { CopyableId } from '../copyable-id';
import { OneTimeSecret } from '../one-time-secret';

/**
 * The console makes service clients, so it offers the scopes of an area (`area:access`), by area
 * (`variants:read` and `variants:write` under "variants"), as the API lists them; an app's sign-in
 * scopes (`openid`, `email`, …), which a service client may not hold, have no area.
 */
const SERVICE_SCOPES = SCOPES.filter((scope) => scope.includes(':'));
const SCOPE_AREAS = [...new Set(SERVICE_SCOPES.map((scope) => scope.split(':')[0]!))].map((area) => ({ area, scopes: SERVICE_SCOPES.filter((scope) => scope.startsWith(`${area}:`)) }));

/** Scopes as checkboxes grouped by area; what the API says of `scopes` shows under them. */
export function ScopeChoice(props: { chosen: readonly string[]; onChange: (scopes: string[]) => void; error: ApiError | undefined }) {
  const message = props.error?.fieldMessage('scopes');
  const toggle = (scope: string) => props.onChange(props.chosen.includes(scope) ? props.chosen.filter((each) => each !== scope) : [...props.chosen, scope]);
  return (
    <fieldset class="scopes" aria-invalid={message ? 'true' : undefined}>
      <legend>Scopes (what the client may do)</legend>
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

/** A new client: its first secret is shown once. */
export function NewApiClient(props: { onCreated: (created: ApiClient) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [rateLimit, setRateLimit] = useState('');
  const [error, setError] = useState<ApiError>();
  const [made, setMade] = useState<{ id: string; secret: string }>();
  const create = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    const body = {
      name,
      scopes: scopes as (typeof SCOPES)[number][],
      ...(description.trim() ? { description } : {}),
      // Anything but digits goes as typed, for the API to judge and name the field (hence the cast).
      ...(rateLimit.trim() ? { rate_limit: /^\d+$/.test(rateLimit.trim()) ? Number(rateLimit) : (rateLimit as unknown as number) } : {}),
    };
    try {
      const { body: created } = await reply(client.POST('/api/clients', { body }));
      setMade(created.secret ? { id: created.id, secret: created.secret } : undefined);
      setName('');
      setDescription('');
      setScopes([]);
      setRateLimit('');
      props.onCreated(created);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <form class="card" onSubmit={create} aria-label="Create API client">
      <h2>New API client</h2>
      <Field label="Name" name="name" value={name} onInput={setName} error={error} required />
      <Field label="Description (optional)" name="description" value={description} onInput={setDescription} error={error} />
      <ScopeChoice chosen={scopes} onChange={setScopes} error={error} />
      <Field label="Requests a minute (optional; empty: the service's default)" name="rate_limit" value={rateLimit} onInput={setRateLimit} error={error} inputMode="numeric" />
      <ProblemMessage error={error} fields={['name', 'description', 'scopes', 'rate_limit']} />
      <button type="submit">Create API client</button>
      {made && (
        <OneTimeSecret key={made.secret} secret={made.secret} testId="client-secret">
          The service sends it as <code>Authorization: Bearer …</code>, or trades it for an access token at <code>POST /api/oauth/token</code> (client credentials)
          with its client id: <CopyableId id={made.id} what="client id" testId="client-id" />
        </OneTimeSecret>
      )}
    </form>
  );
}
