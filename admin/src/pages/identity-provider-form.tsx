import { useState } from 'preact/hooks';
import { client, reply, type ApiError } from '../api';
import { Field, ProblemMessage, asApiError } from '../components';
import type { IdentityProvider } from '../sign-in-types';

/** How the service proves itself to the provider: a client secret, or for Apple a key it signs its own secret with (API.md section 20). */
type Credential = 'client_secret' | 'apple';

const FIELDS = ['name', 'issuer', 'client_id', 'client_secret', 'apple_team_id', 'apple_key_id', 'apple_private_key', 'scopes', 'button_label'] as const;

/**
 * What the issuer field says when the service could not use the provider (400
 * `invalid_provider`): the API's reason, with what the service tried, so staff know where to look.
 */
function issuerMessage(error: ApiError | undefined, issuer: string): string | undefined {
  const message = error?.fieldMessage('issuer');
  if (!message || error?.problem.code !== 'invalid_provider') return message;
  const base = issuer.trim().replace(/\/+$/, '');
  return `The provider could not be used: ${message}. The service reads ${base}/.well-known/openid-configuration when the issuer is saved; check the issuer's spelling and that the provider answers there.`;
}

/** A new OpenID provider: its discovery document is read as it is saved, and a refusal says why under the issuer. */
export function NewIdentityProvider(props: { onCreated: (provider: IdentityProvider) => void }) {
  const [name, setName] = useState('');
  const [issuer, setIssuer] = useState('');
  const [clientId, setClientId] = useState('');
  const [credential, setCredential] = useState<Credential>('client_secret');
  const [clientSecret, setClientSecret] = useState('');
  const [appleTeamId, setAppleTeamId] = useState('');
  const [appleKeyId, setAppleKeyId] = useState('');
  const [applePrivateKey, setApplePrivateKey] = useState('');
  const [scopes, setScopes] = useState('openid email profile');
  const [buttonLabel, setButtonLabel] = useState('');
  const [linkByVerifiedEmail, setLinkByVerifiedEmail] = useState(false);
  const [enabled, setEnabled] = useState(true);
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const keyMessage = error?.fieldMessage('apple_private_key');

  const create = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(undefined);
    const body = {
      name,
      issuer: issuer.trim(),
      client_id: clientId.trim(),
      ...(credential === 'client_secret' ? { client_secret: clientSecret } : { apple_team_id: appleTeamId.trim(), apple_key_id: appleKeyId.trim(), apple_private_key: applePrivateKey }),
      scopes: scopes.split(/\s+/).filter(Boolean),
      button_label: buttonLabel,
      link_by_verified_email: linkByVerifiedEmail,
      enabled,
    };
    try {
      // Discovery is read while this waits (up to 10 s); a step-up may be asked first.
      const { body: created } = await reply(client.POST('/api/identity-providers', { body }));
      for (const clear of [setName, setIssuer, setClientId, setClientSecret, setAppleTeamId, setAppleKeyId, setApplePrivateKey, setButtonLabel]) clear('');
      setScopes('openid email profile');
      setLinkByVerifiedEmail(false);
      setEnabled(true);
      props.onCreated(created);
    } catch (caught) {
      setError(asApiError(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" onSubmit={create} aria-label="Add identity provider">
      <h2>New identity provider</h2>
      <Field label="Name (what staff call it)" name="name" value={name} onInput={setName} error={error} required />
      <Field label="Issuer (https URL, as the provider documents it)" name="issuer" value={issuer} onInput={setIssuer} message={issuerMessage(error, issuer)} type="url" required />
      <Field label="Client id (the provider gave it to the shop)" name="client_id" value={clientId} onInput={setClientId} error={error} autoComplete="off" required />
      <fieldset class="scopes client-types">
        <legend>How the shop proves itself to the provider</legend>
        <label>
          <input type="radio" name="credential" checked={credential === 'client_secret'} onChange={() => setCredential('client_secret')} /> Client secret{' '}
          <span class="hint">(Google, Microsoft, most providers)</span>
        </label>
        <label>
          <input type="radio" name="credential" checked={credential === 'apple'} onChange={() => setCredential('apple')} /> Apple key{' '}
          <span class="hint">(Sign in with Apple: the shop signs its own secret with the key)</span>
        </label>
      </fieldset>
      {credential === 'client_secret' ? (
        <Field label="Client secret (kept encrypted, never shown again)" name="client_secret" type="password" value={clientSecret} onInput={setClientSecret} error={error} autoComplete="new-password" required />
      ) : (
        <>
          <Field label="Apple team id (10 characters)" name="apple_team_id" value={appleTeamId} onInput={setAppleTeamId} error={error} autoComplete="off" required />
          <Field label="Apple key id (10 characters)" name="apple_key_id" value={appleKeyId} onInput={setAppleKeyId} error={error} autoComplete="off" required />
          <div class="field">
            <label for="apple-private-key">Apple private key (the .p8 file's text; kept encrypted, never shown again)</label>
            <textarea
              id="apple-private-key"
              name="apple_private_key"
              rows={5}
              value={applePrivateKey}
              required
              spellcheck={false}
              aria-invalid={keyMessage ? 'true' : undefined}
              aria-describedby={keyMessage ? 'apple-private-key-error' : undefined}
              onInput={(event) => setApplePrivateKey((event.target as HTMLTextAreaElement).value)}
            />
            {keyMessage && (
              <span class="field-error" id="apple-private-key-error" role="alert">
                {keyMessage}
              </span>
            )}
          </div>
        </>
      )}
      <Field label="Scopes asked of the provider (separated by spaces; openid is always asked)" name="scopes" value={scopes} onInput={setScopes} error={error} />
      <Field label="Button label (on the sign-in page)" name="button_label" value={buttonLabel} onInput={setButtonLabel} error={error} required />
      <label class="checkbox field">
        <input type="checkbox" name="link_by_verified_email" checked={linkByVerifiedEmail} onChange={(event) => setLinkByVerifiedEmail((event.target as HTMLInputElement).checked)} /> Link to the
        customer account with the same email when the provider says it is verified (only for a provider whose verification you trust)
      </label>
      <label class="checkbox field">
        <input type="checkbox" name="enabled" checked={enabled} onChange={(event) => setEnabled((event.target as HTMLInputElement).checked)} /> Enabled (its button shows on the sign-in page)
      </label>
      <ProblemMessage error={error} fields={FIELDS} />
      <button type="submit" disabled={busy}>
        {busy ? 'Checking the provider…' : 'Add identity provider'}
      </button>
    </form>
  );
}
