import { useState } from 'preact/hooks';
import type { ApiError } from '../api';

/** The kinds of API client (API.md sections 17 and 18), as staff choose among them. */
export const CLIENT_TYPES = [
  { type: 'service', label: 'Service', hint: 'another service, calling the API with its own scopes and a secret' },
  { type: 'confidential', label: 'Confidential app', hint: 'a web app with a back end that signs users in; it keeps a secret' },
  { type: 'public', label: 'Public app', hint: 'a single-page or mobile app that signs users in; it has no secret' },
] as const;
export type ClientType = (typeof CLIENT_TYPES)[number]['type'];

/** What an app may ask a user for, in the words of the consent page rather than the scope names. */
export const SIGN_IN_SCOPE_WORDS: Record<string, string> = {
  openid: 'sign the user in',
  profile: 'their name',
  email: 'their email address',
  phone: 'their phone number',
  offline_access: 'stay signed in',
  account: 'their own profile, sessions and ledger',
};

/** The fields only apps have, as typed: URIs one a line, so a list is pasted as it is. */
export interface AppSettings {
  redirectUris: string;
  postLogoutRedirectUris: string;
  firstParty: boolean;
  logoUri: string;
  idTokenAlgorithm: 'RS256' | 'EdDSA';
}
export const NO_APP_SETTINGS: AppSettings = { redirectUris: '', postLogoutRedirectUris: '', firstParty: false, logoUri: '', idTokenAlgorithm: 'RS256' };

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

/** The app's fields as the API takes them; what was left empty is left out, for the API's defaults. */
export function appBody(settings: AppSettings) {
  const postLogout = lines(settings.postLogoutRedirectUris);
  return {
    redirect_uris: lines(settings.redirectUris),
    ...(postLogout.length > 0 ? { post_logout_redirect_uris: postLogout } : {}),
    first_party: settings.firstParty,
    ...(settings.logoUri.trim() ? { logo_uri: settings.logoUri.trim() } : {}),
    id_token_signed_response_alg: settings.idTokenAlgorithm,
  };
}

/** An app's settings as a merge patch: what was emptied goes back to the API's default (no logo, no sign-out URIs). */
export function appPatch(settings: AppSettings) {
  return {
    redirect_uris: lines(settings.redirectUris),
    post_logout_redirect_uris: lines(settings.postLogoutRedirectUris),
    first_party: settings.firstParty,
    logo_uri: settings.logoUri.trim() || null,
    id_token_signed_response_alg: settings.idTokenAlgorithm,
  };
}

/** A saved app's settings as the form types them. */
export const settingsOf = (app: { redirect_uris: string[]; post_logout_redirect_uris: string[]; first_party: boolean; logo_uri: string | null; id_token_signed_response_alg: string | null }): AppSettings => ({
  redirectUris: app.redirect_uris.join('\n'),
  postLogoutRedirectUris: app.post_logout_redirect_uris.join('\n'),
  firstParty: app.first_party,
  logoUri: app.logo_uri ?? '',
  idTokenAlgorithm: app.id_token_signed_response_alg === 'EdDSA' ? 'EdDSA' : 'RS256',
});

/** Service, confidential app or public app: set once, when the client is made. */
export function ClientTypeChoice(props: { value: ClientType; onChange: (type: ClientType) => void }) {
  return (
    <fieldset class="scopes client-types">
      <legend>Kind of client</legend>
      {CLIENT_TYPES.map((choice) => (
        <label class="checkbox" key={choice.type}>
          <input type="radio" name="type" value={choice.type} checked={props.value === choice.type} onChange={() => props.onChange(choice.type)} /> {choice.label}{' '}
          <span class="hint">({choice.hint})</span>
        </label>
      ))}
    </fieldset>
  );
}

let textCounter = 0;

/** A list of URIs, one a line; the API's messages about its items show under it. */
function UriList(props: { label: string; name: string; value: string; onInput: (value: string) => void; error: ApiError | undefined; required?: boolean }) {
  const [id] = useState(() => `uris-${props.name}-${(textCounter += 1)}`);
  const message = props.error?.fieldMessage(props.name);
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        name={props.name}
        rows={2}
        value={props.value}
        required={props.required}
        aria-invalid={message ? 'true' : undefined}
        aria-describedby={message ? `${id}-error` : undefined}
        onInput={(event) => props.onInput((event.target as HTMLTextAreaElement).value)}
      />
      {message && (
        <span class="field-error" id={`${id}-error`} role="alert">
          {message}
        </span>
      )}
    </div>
  );
}

/** Where an app sends users back, whether it asks their consent, its logo and how its ID tokens are signed. */
export function AppFields(props: { settings: AppSettings; onChange: (settings: AppSettings) => void; error: ApiError | undefined }) {
  const { settings } = props;
  const set = <Key extends keyof AppSettings>(key: Key) => (value: AppSettings[Key]) => props.onChange({ ...settings, [key]: value });
  const logoMessage = props.error?.fieldMessage('logo_uri');
  const [logoId] = useState(() => `logo-uri-${(textCounter += 1)}`);
  return (
    <>
      <UriList label="Redirect URIs (one a line: https, http on 127.0.0.1 or localhost, or an app's own scheme)" name="redirect_uris" value={settings.redirectUris} onInput={set('redirectUris')} error={props.error} required />
      <UriList label="Redirect URIs after signing out (optional, one a line)" name="post_logout_redirect_uris" value={settings.postLogoutRedirectUris} onInput={set('postLogoutRedirectUris')} error={props.error} />
      <label class="checkbox field">
        <input type="checkbox" name="first_party" checked={settings.firstParty} onChange={(event) => set('firstParty')((event.target as HTMLInputElement).checked)} /> The shop's own app (first-party: never asks users for consent)
      </label>
      <div class="field">
        <label for={logoId}>Logo URL (optional, https: shown on the consent page)</label>
        <input
          id={logoId}
          name="logo_uri"
          type="url"
          value={settings.logoUri}
          aria-invalid={logoMessage ? 'true' : undefined}
          aria-describedby={logoMessage ? `${logoId}-error` : undefined}
          onInput={(event) => set('logoUri')((event.target as HTMLInputElement).value)}
        />
        {logoMessage && (
          <span class="field-error" id={`${logoId}-error`} role="alert">
            {logoMessage}
          </span>
        )}
      </div>
      <label class="field">
        <span>ID token signature</span>
        <select name="id_token_signed_response_alg" value={settings.idTokenAlgorithm} onChange={(event) => set('idTokenAlgorithm')((event.target as HTMLSelectElement).value as AppSettings['idTokenAlgorithm'])}>
          <option value="RS256">RS256 (what most libraries expect)</option>
          <option value="EdDSA">EdDSA</option>
        </select>
      </label>
    </>
  );
}
