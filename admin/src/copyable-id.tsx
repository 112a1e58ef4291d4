import { useState } from 'preact/hooks';
import { copyText } from './clipboard';

/**
 * An id staff hand on to someone else (an API client's client_id, which POST /api/oauth/token
 * needs beside the secret): shown whole, with a button that copies it and says how that went.
 */
export function CopyableId(props: { id: string; what: string; testId?: string }) {
  const [copied, setCopied] = useState<string>();
  const copy = () => void copyText(props.id, props.what).then(setCopied);
  return (
    <span class="copyable-id">
      <code data-testid={props.testId}>{props.id}</code>{' '}
      <button type="button" class="secondary" aria-label={`Copy the ${props.what}`} onClick={copy}>
        Copy
      </button>
      {copied && <span role="status"> {copied}</span>}
    </span>
  );
}
