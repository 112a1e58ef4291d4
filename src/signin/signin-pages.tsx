/** @jsxRuntime automatic */
/** @jsxImportSource preact */
// The pragmas keep the JSX settings of tsconfig.json wherever the file is run from (tsx reads the tsconfig of the working directory).
import type { Scope, SignInScope } from '../sessions/access-rule.js';
import { ERROR_ID, FormMessages, NOTICE_ID, renderPage, type Brand, type PageMessage } from './page-document.js';
import type { PageLocale } from './page-locale.js';
import { message, type MessageKey } from './page-messages.js';

/** What every page of an authorization request knows: its language, the brand, and the URL its forms post to. */
export interface PageContext {
  locale: PageLocale;
  brand: Brand;
  /** The page's own URL (`/oauth/authorize?…`, the request's query as it came). */
  formAction: string;
  /** The request's query as it came (`?…`, or empty): the pages' links to each other keep it, so the person can come back. */
  query: string;
  csrfToken: string;
  /** The create-account page of this request (its `prompt` set to `create`), while ALLOW_REGISTRATION is on. */
  createAccountUrl?: string;
  /** The sign-in page of this request (`create` taken out of its `prompt`), for the create-account page. */
  signInUrl?: string;
  /** This request with `prompt=login`, for the consent page's "use another account". */
  otherAccountUrl?: string;
}

export type { PageMessage };


export interface SignInPage {
  stage: 'password' | 'code';
  email: string;
  error?: PageMessage;
  notice?: PageMessage;
  /** The JSON of a passkey sign-in's request options; none, no passkey on the page. */
  webauthnOptions?: string;
  /** The enabled identity providers (API.md section 20), a button each on the password stage. */
  providers?: { id: string; label: string }[];
}

/**
 * The sign-in page (API.md section 18): email and password on one page, or an emailed code.
 * `stage: 'code'` is the page after a code was sent: the code's field instead of the password's.
 * One form, whose buttons say what is done (`action`); an error is read out and tied to the
 * fields it is about. Without JavaScript it works as it is. With passkey options (the password
 * stage), the form carries them in `data-webauthn-options`, the email field offers passkeys in its
 * autofill (`webauthn`), and the script of passkey-script.ts shows the hidden passkey button and
 * posts the assertion in `webauthn` with `action=passkey`.
 */
export function signInPage(context: PageContext, page: SignInPage): string {
  const { locale } = context;
  const passkey = page.stage === 'password' ? page.webauthnOptions : undefined;
  const describedBy = [page.error ? ERROR_ID : undefined, page.notice ? NOTICE_ID : undefined].filter(Boolean).join(' ') || undefined;
  const invalid = page.error ? 'true' : undefined;
  return renderPage({
    locale,
    brand: context.brand,
    heading: message(locale, 'signIn.title', { brand: context.brand.name }),
    children: (
      <>
        <form method="post" action={context.formAction} class="stack" data-webauthn-options={passkey}>
          <FormMessages locale={locale} error={page.error} notice={page.notice} />
          <input type="hidden" name="csrf_token" value={context.csrfToken} />
          {passkey && <input type="hidden" name="webauthn" value="" />}
          <label for="email">{message(locale, 'field.email')}</label>
          <input id="email" name="email" type="email" autocomplete={passkey ? 'username webauthn' : 'username'} value={page.email} required aria-invalid={invalid} aria-describedby={describedBy} />
          {page.stage === 'password' ? (
            <>
              <label for="password">{message(locale, 'field.password')}</label>
              <input id="password" name="password" type="password" autocomplete="current-password" aria-invalid={invalid} aria-describedby={page.error ? ERROR_ID : undefined} />
              <button type="submit" name="action" value="password" class="primary">
                {message(locale, 'signIn.withPassword')}
              </button>
              {passkey && (
                <button type="submit" name="action" value="passkey" formNoValidate hidden>
                  {message(locale, 'signIn.withPasskey')}
                </button>
              )}
              <button type="submit" name="action" value="send_code" formNoValidate>
                {message(locale, 'signIn.sendCode')}
              </button>
              <p>
                <a href={`/oauth/forgot-password${context.query}`}>{message(locale, 'signIn.forgotPassword')}</a>
              </p>
              {context.createAccountUrl && (
                <p>
                  <a href={context.createAccountUrl}>{message(locale, 'signIn.createAccount')}</a>
                </p>
              )}
            </>
          ) : (
            <>
              <label for="code">{message(locale, 'field.code')}</label>
              <input id="code" name="code" type="text" inputMode="numeric" autocomplete="one-time-code" maxLength={16} aria-invalid={invalid} aria-describedby={describedBy} />
              <button type="submit" name="action" value="email_code" class="primary">
                {message(locale, 'signIn.withCode')}
              </button>
              <button type="submit" name="action" value="send_code" formNoValidate>
                {message(locale, 'signIn.sendCode')}
              </button>
            </>
          )}
        </form>
        {page.stage === 'password' && page.providers && page.providers.length > 0 && (
          // A form per provider, posting `action=provider` with its id and the CSRF token: a link (a GET) could be followed by another site, and the start writes a row.
          <section class="stack" aria-label={message(locale, 'signIn.orWith')}>
            <p>{message(locale, 'signIn.orWith')}</p>
            {page.providers.map((provider) => (
              <form method="post" action={context.formAction}>
                <input type="hidden" name="csrf_token" value={context.csrfToken} />
                <input type="hidden" name="provider_id" value={provider.id} />
                <button type="submit" name="action" value="provider">
                  {provider.label}
                </button>
              </form>
            ))}
          </section>
        )}
        {passkey && <script src="/oauth/assets/passkey.js" defer />}
      </>
    ),
  });
}

/**
 * The consent page of a third-party app (API.md section 18): the app's name and logo, each scope
 * in plain words, and the two buttons. The logo is beside the app's name in the heading, so it
 * says nothing more to a screen reader (empty `alt`).
 */
export function consentPage(context: PageContext, app: { name: string; logoUri: string | null; scopes: string[]; signedInAs: string }): string {
  const { locale } = context;
  return renderPage({
    locale,
    brand: context.brand,
    heading: message(locale, 'consent.title', { app: app.name, brand: context.brand.name }),
    children: (
      <form method="post" action={context.formAction} class="stack">
        {app.logoUri !== null && <img class="app-logo" src={app.logoUri} alt="" width={64} height={64} />}
        <p id="consent-intro">{message(locale, 'consent.intro', { app: app.name })}</p>
        <ul aria-labelledby="consent-intro">
          {app.scopes.map((scope) => (
            <li key={scope}>{scopeWords(locale, scope)}</li>
          ))}
        </ul>
        <input type="hidden" name="csrf_token" value={context.csrfToken} />
        <p>
          {message(locale, 'consent.signedInAs', { email: app.signedInAs })}{' '}
          {context.otherAccountUrl && <a href={context.otherAccountUrl}>{message(locale, 'consent.otherAccount')}</a>}
        </p>
        <div class="buttons">
          <button type="submit" name="action" value="allow" class="primary">
            {message(locale, 'consent.allow')}
          </button>
          <button type="submit" name="action" value="deny">
            {message(locale, 'consent.deny')}
          </button>
        </div>
      </form>
    ),
  });
}

// Typed by the scope lists, so a scope added to either has no page until it has its words.
const SCOPE_KEYS: Record<Scope | SignInScope, MessageKey> = {
  openid: 'scope.openid',
  profile: 'scope.profile',
  email: 'scope.email',
  phone: 'scope.phone',
  offline_access: 'scope.offline_access',
  account: 'scope.account',
  'variants:read': 'scope.variants_read',
  'variants:write': 'scope.variants_write',
  'inventory:read': 'scope.inventory_read',
  'inventory:write': 'scope.inventory_write',
  'reservations:write': 'scope.reservations_write',
  'users:read': 'scope.users_read',
  'users:write': 'scope.users_write',
  'balance:read': 'scope.balance_read',
  'balance:write': 'scope.balance_write',
  'events:read': 'scope.events_read',
};

/** A scope in plain words (every scope an app may hold has its words; `scope.other` only guards a scope added later). */
const scopeWords = (locale: PageLocale, scope: string) => {
  const key = (SCOPE_KEYS as Record<string, MessageKey | undefined>)[scope];
  return key ? message(locale, key) : message(locale, 'scope.other', { scope });
};

/** The error page: what went wrong, and what to do; no form, nothing sent anywhere. */
export function errorPage(locale: PageLocale, brand: Brand, text: PageMessage, advice: MessageKey = 'error.tryAgain'): string {
  return renderPage({
    locale,
    brand,
    heading: message(locale, 'error.title'),
    children: (
      <>
        <p class="error">{message(locale, text.key, text.values)}</p>
        <p>{message(locale, advice)}</p>
      </>
    ),
  });
}

/**
 * The second step of a sign-in whose user has a second factor (API.md sections 12 and 18): a
 * code of the authenticator app (`action=totp`), a recovery code (`action=recovery_code`), or,
 * with `webauthnOptions`, a passkey (`action=passkey` with `step=second_factor`, the assertion
 * in `webauthn`, posted by the script of passkey-script.ts, which shows its button), each its own
 * form so Enter sends the field it is in.
 */
export function secondFactorPage(context: PageContext, page: { methods: string[]; error?: PageMessage; webauthnOptions?: string }): string {
  const { locale } = context;
  const describedBy = page.error ? ERROR_ID : undefined;
  const invalid = page.error ? 'true' : undefined;
  const passkey = page.methods.includes('webauthn') ? page.webauthnOptions : undefined;
  return renderPage({
    locale,
    brand: context.brand,
    heading: message(locale, 'secondFactor.title'),
    children: (
      <>
        <FormMessages locale={locale} error={page.error} />
        {passkey && (
          <form method="post" action={context.formAction} class="stack" data-webauthn-options={passkey}>
            <input type="hidden" name="csrf_token" value={context.csrfToken} />
            <input type="hidden" name="step" value="second_factor" />
            <input type="hidden" name="webauthn" value="" />
            <p>{message(locale, 'secondFactor.passkey')}</p>
            <button type="submit" name="action" value="passkey" class="primary" hidden>
              {message(locale, 'secondFactor.withPasskey')}
            </button>
          </form>
        )}
        {page.methods.includes('totp') && (
          <form method="post" action={context.formAction} class="stack">
            <input type="hidden" name="csrf_token" value={context.csrfToken} />
            <p id="totp-help">{message(locale, 'secondFactor.totp')}</p>
            <label for="code">{message(locale, 'field.code')}</label>
            <input id="code" name="code" type="text" inputMode="numeric" autocomplete="one-time-code" maxLength={16} aria-invalid={invalid} aria-describedby={['totp-help', describedBy].filter(Boolean).join(' ')} />
            <button type="submit" name="action" value="totp" class={passkey ? undefined : 'primary'}>
              {message(locale, 'secondFactor.confirm')}
            </button>
          </form>
        )}
        {page.methods.includes('recovery_code') && (
          <form method="post" action={context.formAction} class="stack">
            <input type="hidden" name="csrf_token" value={context.csrfToken} />
            <p id="recovery-help">{message(locale, 'secondFactor.useRecoveryCode')}</p>
            <label for="recovery_code">{message(locale, 'field.recoveryCode')}</label>
            <input id="recovery_code" name="recovery_code" type="text" autocomplete="one-time-code" maxLength={64} aria-invalid={invalid} aria-describedby={['recovery-help', describedBy].filter(Boolean).join(' ')} />
            <button type="submit" name="action" value="recovery_code">
              {message(locale, 'secondFactor.withRecoveryCode')}
            </button>
          </form>
        )}
        {passkey && <script src="/oauth/assets/passkey.js" defer />}
      </>
    ),
  });
}

/**
 * The create-account page (API.md section 18, `prompt=create`, while ALLOW_REGISTRATION is on):
 * name, email and a new password, posted with `action=create`.
 */
export function createAccountPage(context: PageContext, page: { email: string; name: string; error?: PageMessage }): string {
  const { locale } = context;
  const invalid = page.error ? 'true' : undefined;
  const withError = (id: string) => [id, page.error ? ERROR_ID : undefined].filter(Boolean).join(' ') || undefined;
  return renderPage({
    locale,
    brand: context.brand,
    heading: message(locale, 'createAccount.title', { brand: context.brand.name }),
    children: (
      <form method="post" action={context.formAction} class="stack">
        <FormMessages locale={locale} error={page.error} />
        <input type="hidden" name="csrf_token" value={context.csrfToken} />
        <label for="name">{message(locale, 'field.name')}</label>
        <input id="name" name="name" type="text" autocomplete="name" maxLength={100} value={page.name} required aria-invalid={invalid} aria-describedby={withError('')} />
        <label for="email">{message(locale, 'field.email')}</label>
        <input id="email" name="email" type="email" autocomplete="email" value={page.email} required aria-invalid={invalid} aria-describedby={withError('')} />
        <label for="password">{message(locale, 'field.newPassword')}</label>
        <input id="password" name="password" type="password" autocomplete="new-password" minLength={8} maxLength={128} required aria-invalid={invalid} aria-describedby={withError('password-rules')} />
        <p id="password-rules" class="hint">{message(locale, 'createAccount.passwordRules')}</p>
        <button type="submit" name="action" value="create" class="primary">
          {message(locale, 'createAccount.submit')}
        </button>
        {context.signInUrl && (
          <p>
            <a href={context.signInUrl}>{message(locale, 'createAccount.signInInstead')}</a>
          </p>
        )}
      </form>
    ),
  });
}
