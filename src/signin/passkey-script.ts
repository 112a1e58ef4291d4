import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The hosted pages' passkey script (API.md section 18: the pages work without JavaScript except
 * for passkeys), on the sign-in page and the second-factor page. It reads the request options from
 * the form's `data-webauthn-options`, shows the passkey button and runs the ceremony behind it, and
 * where the form has a field for the browser's passkey autofill (`autocomplete="username
 * webauthn"`, the sign-in page's email) offers the passkeys there too; it posts the assertion's
 * JSON in `webauthn` with `action=passkey`. A ceremony cancelled or failed leaves the page as it
 * was, for another try or another way. Plain ES2020, no module: it runs after SimpleWebAuthn's
 * bundle in the same file.
 */
const PAGE_SCRIPT = `
(() => {
  const webauthn = globalThis.SimpleWebAuthnBrowser;
  const form = document.querySelector('form[data-webauthn-options]');
  if (!form || !webauthn || !webauthn.browserSupportsWebAuthn()) return;
  const optionsJSON = JSON.parse(form.dataset.webauthnOptions);
  const field = form.querySelector('input[name="webauthn"]');
  const button = form.querySelector('button[name="action"][value="passkey"]');
  const post = (assertion) => {
    field.value = JSON.stringify(assertion);
    form.requestSubmit(button);
  };
  const stay = () => {};
  button.hidden = false;
  button.addEventListener('click', (event) => {
    event.preventDefault();
    webauthn.startAuthentication({ optionsJSON }).then(post, stay);
  });
  if (!form.querySelector('input[autocomplete~="webauthn"]')) return;
  webauthn.browserSupportsWebAuthnAutofill().then((autofill) => {
    if (autofill) webauthn.startAuthentication({ optionsJSON, useBrowserAutofill: true }).then(post, stay);
  });
})();
`;

/**
 * SimpleWebAuthn's browser bundle (a UMD file setting `globalThis.SimpleWebAuthnBrowser`)
 * followed by the page's script: one file from this origin, as the pages' policy wants
 * (`script-src 'self'`, nothing inline). Undefined when the package is not installed, and the
 * sign-in page then offers no passkey. Read once, when the pages are registered.
 */
export function passkeyScript(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
    const bundle = readFileSync(path.join(path.dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
    return `${bundle}\n${PAGE_SCRIPT}`;
  } catch {
    return undefined;
  }
}
