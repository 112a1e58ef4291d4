/** @jsxRuntime automatic */
/** @jsxImportSource preact */
// The pragmas keep the JSX settings of tsconfig.json wherever the file is run from (tsx reads the tsconfig of the working directory).
import { renderPage, type Brand } from './page-document.js';
import type { PageLocale } from './page-locale.js';
import { message } from './page-messages.js';

/** "Sign out of {brand}?": the confirmation a logout without an `id_token_hint` asks for (`action=logout`). */
export function signOutPage(locale: PageLocale, brand: Brand, csrfToken: string, formAction: string): string {
  return renderPage({
    locale,
    brand,
    heading: message(locale, 'signOut.title', { brand: brand.name }),
    children: (
      <form method="post" action={formAction}>
        <p>{message(locale, 'signOut.intro')}</p>
        <input type="hidden" name="csrf_token" value={csrfToken} />
        <button type="submit" name="action" value="logout">
          {message(locale, 'signOut.submit')}
        </button>
      </form>
    ),
  });
}

/** "You are signed out": where a logout ends when it may not send the browser back to the app. */
export function signedOutPage(locale: PageLocale, brand: Brand): string {
  return renderPage({ locale, brand, heading: message(locale, 'signedOut.title'), children: <p>{message(locale, 'signedOut.body')}</p> });
}

/** A logout that cannot be done: the reason, and nothing else (no link into an app that was not proved). */
export function logoutErrorPage(locale: PageLocale, brand: Brand, reason: 'error.badLogoutHint' | 'error.forbidden' | 'error.notAForm' | 'error.server'): string {
  return renderPage({ locale, brand, heading: message(locale, 'error.title'), children: <p role="alert">{message(locale, reason)}</p> });
}
