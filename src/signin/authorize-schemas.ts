import { Type } from '@sinclair/typebox';

const text = (description: string, examples?: string[]) => Type.Optional(Type.String({ description, ...(examples ? { examples } : {}) }));

/**
 * The authorization request (API.md section 18). Documentation only: the route reads its query
 * from the URL itself, where a repeated parameter is an OAuth error sent to the app, not a
 * schema error.
 */
export const AuthorizeQuery = Type.Object({
  response_type: text('`code`, the only response type.', ['code']),
  client_id: text("The app's id (an API client of type `confidential` or `public`)."),
  redirect_uri: text('One of the redirect URIs registered for the app, character for character (a loopback http URI in any port).', ['https://shop.example.com/callback']),
  scope: text('Space-separated scopes the app may ask for: `openid`, `profile`, `email`, `phone`, `offline_access`, `account` and those of section 11.', ['openid email offline_access']),
  state: text('Sent back as it came, with the code or the error.'),
  nonce: text('Put into the ID token as it came.'),
  code_challenge: text('PKCE (RFC 7636): the base64url SHA-256 of the code verifier, 43 characters.'),
  code_challenge_method: text('`S256`, the only method.', ['S256']),
  prompt: text('`none` (never a page), `login` (sign in again), `consent` (ask again; third-party apps only), `create` (the create-account page).', ['login']),
  max_age: text('Seconds: a sign-in older than this is asked again.', ['3600']),
  login_hint: text('An email to fill in on the sign-in page.'),
  ui_locales: text('Space-separated language tags, by preference: `en`, `de`.', ['de en']),
});

/** The fields of the hosted pages' forms (API.md section 18). */
export const AuthorizeForm = Type.Object(
  {
    action: text('The button pressed: `password`, `send_code`, `email_code`, `passkey`, `totp`, `recovery_code`, `create`, `allow`, `deny`, `provider`.', ['password']),
    csrf_token: text("The form's CSRF token (from the page; bound to the browser by a cookie)."),
    email: text('The email (`password`, `send_code`, `email_code`).'),
    password: text('The password (`password`), or the new one (`create`).'),
    name: text('The name of a new account (`create`).'),
    code: text('The 6-digit code of the email (`email_code`) or of the authenticator app (`totp`).'),
    recovery_code: text('A recovery code (`recovery_code`).'),
    webauthn: text("The JSON of a passkey's assertion (AuthenticationResponseJSON) answering the page's `data-webauthn-options` (`passkey`)."),
    provider_id: text("The identity provider whose button was pressed (`provider`): the browser is sent to its authorization endpoint (API.md section 20)."),
    step: text('`second_factor` on the second-factor page\'s passkey form: the assertion proves the second factor of the login under way, not a first sign-in.', ['second_factor']),
  },
  { examples: [{ action: 'password', csrf_token: 'Zq3t0Jx2Vw8yR1uK5mN7pQ9sT4vX6zA2bC8dE0fG1hI', email: 'ada@example.com', password: 'correct-horse-battery' }] },
);

/** A hosted page's reply. */
export const HtmlPage = (description: string, headers?: Record<string, unknown>) => ({
  description: `${description} \`Cache-Control: no-store\` and a strict Content-Security-Policy.`,
  ...(headers ? { headers } : {}),
  content: { 'text/html': { schema: Type.String() } },
});

export const RETRY_AFTER = { 'retry-after': { type: 'integer', description: 'Seconds until the budget refills.' } };

export const REDIRECT_303 = {
  description: "To the app's redirect URI: with `code`, `state` and `iss`, or with `error`, `error_description`, `state` and `iss`.",
  headers: { location: { type: 'string', description: 'The redirect URI with the reply in its query.' } },
};
