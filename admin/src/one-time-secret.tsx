import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** A secret the API shows once: in full, with a copy button and what to do with it. */
export function OneTimeSecret(props: { secret: string; testId: string; children?: ComponentChildren }) {
  const [copied, setCopied] = useState<string>();
  // The clipboard exists only on secure origins (https, localhost): elsewhere the text is there to select.
  const copy = () => {
    if (!navigator.clipboard) return setCopied('Copying needs https: select the secret and copy it.');
    navigator.clipboard
      .writeText(props.secret)
      .then(() => setCopied('Copied.'))
      .catch(() => setCopied('Copy failed: select the secret and copy it.'));
  };
  return (
    <div class="secret" role="status">
      <p>Shown only now: store it where it is used.</p>
      <code data-testid={props.testId}>{props.secret}</code>{' '}
      <button type="button" class="secondary" onClick={copy}>
        Copy secret
      </button>
      {copied && <span> {copied}</span>}
      {props.children && <p class="hint">{props.children}</p>}
    </div>
  );
}
