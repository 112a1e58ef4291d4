import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { copyText } from './clipboard';

/** A secret the API shows once: in full, with a copy button and what to do with it. */
export function OneTimeSecret(props: { secret: string; testId: string; children?: ComponentChildren }) {
  const [copied, setCopied] = useState<string>();
  const copy = () => void copyText(props.secret, 'secret').then(setCopied);
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
