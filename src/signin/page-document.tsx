/** @jsxRuntime automatic */
/** @jsxImportSource preact */
// The pragmas keep the JSX settings of tsconfig.json wherever the file is run from (tsx reads the tsconfig of the working directory).
import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { message, type MessageKey, type MessageValues } from './page-messages.js';
import type { PageLocale } from './page-locale.js';

export interface Brand {
  /** SIGNIN_BRAND_NAME */
  name: string;
  /** SIGNIN_LOGO_URL */
  logoUrl: string | undefined;
}

export interface PageFrame {
  locale: PageLocale;
  brand: Brand;
  /** The page's heading, also its title after the brand's name. */
  heading: string;
  children?: ComponentChildren;
}

/**
 * A hosted page's HTML: one heading, the brand's logo, a main landmark the skip link leads to,
 * and the stylesheet and scripts from this origin only (the policy of page-policy.ts allows no
 * inline script or style). Preact escapes every value put into it.
 */
export function renderPage({ locale, brand, heading, children }: PageFrame): string {
  const body = renderToString(
    <html lang={locale}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${heading} · ${brand.name}`}</title>
        <link rel="stylesheet" href="/oauth/assets/pages.css" />
      </head>
      <body>
        <a class="skip" href="#content">
          {message(locale, 'page.skipToContent')}
        </a>
        <header>{brand.logoUrl === undefined ? <p class="brand">{brand.name}</p> : <img class="brand" src={brand.logoUrl} alt={brand.name} />}</header>
        <main id="content" tabIndex={-1}>
          <h1>{heading}</h1>
          {children}
        </main>
      </body>
    </html>,
  );
  return `<!doctype html>${body}`;
}

/** A sentence of the catalogue, with its values: what a page tells the person. */
export interface PageMessage {
  key: MessageKey;
  values?: MessageValues;
}

/** The ids of a form's error and notice, which its fields name in `aria-describedby`. */
export const ERROR_ID = 'form-error';
export const NOTICE_ID = 'form-notice';

/** What went wrong (read out at once: `alert`) and what was done (`status`), above a form's fields. */
export function FormMessages({ locale, error, notice }: { locale: PageLocale; error?: PageMessage; notice?: PageMessage }) {
  return (
    <>
      {error && (
        <p id={ERROR_ID} class="error" role="alert">
          {message(locale, error.key, error.values)}
        </p>
      )}
      {notice && (
        <p id={NOTICE_ID} class="notice" role="status">
          {message(locale, notice.key, notice.values)}
        </p>
      )}
    </>
  );
}
