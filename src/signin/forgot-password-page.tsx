/** @jsxRuntime automatic */
/** @jsxImportSource preact */
// The pragmas keep the JSX settings of tsconfig.json wherever the file is run from (tsx reads the tsconfig of the working directory).
import { ERROR_ID, FormMessages, NOTICE_ID, renderPage } from './page-document.js';
import { message } from './page-messages.js';
import type { PageContext, PageMessage } from './signin-pages.js';


/**
 * The forgotten-password page (API.md sections 3 and 18): one email field posted with
 * `action=forgot_password`, and a link back to the sign-in page with the authorization request
 * it came from. After a post the notice says the same thing whether or not the email has an
 * account; the form stays, so a mistyped address can be corrected.
 */
export function forgotPasswordPage(context: PageContext, page: { email: string; error?: PageMessage; notice?: PageMessage }): string {
  const { locale } = context;
  const describedBy = ['forgot-intro', page.error ? ERROR_ID : undefined, page.notice ? NOTICE_ID : undefined].filter(Boolean).join(' ');
  return renderPage({
    locale,
    brand: context.brand,
    heading: message(locale, 'forgotPassword.title'),
    children: (
      <>
        <form method="post" action={context.formAction} class="stack">
          <FormMessages locale={locale} error={page.error} notice={page.notice} />
          <p id="forgot-intro">{message(locale, 'forgotPassword.intro')}</p>
          <input type="hidden" name="csrf_token" value={context.csrfToken} />
          <label for="email">{message(locale, 'field.email')}</label>
          <input id="email" name="email" type="email" autocomplete="email" value={page.email} required aria-invalid={page.error ? 'true' : undefined} aria-describedby={describedBy} />
          <button type="submit" name="action" value="forgot_password" class="primary">
            {message(locale, 'forgotPassword.submit')}
          </button>
        </form>
        <p>
          <a href={`/oauth/authorize${context.query}`}>{message(locale, 'forgotPassword.backToSignIn')}</a>
        </p>
      </>
    ),
  });
}
