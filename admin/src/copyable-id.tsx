import { useState } from 'preact/hooks';
import { copyText } from './clipboard';

/**
 * An id someone pastes elsewhere (an app's `client_id` into its configuration): shown in full,
 * with a copy button named after what it copies, since a page may hold several.
 */
export function CopyableId(props: { id: string; what: string }) {
  const [copied, setCopied] = useState<string>();
  return (
    <span class="copyable-id">
      <code>{props.id}</code>{' '}
      <button type="button" class="secondary" aria-label={`Copy ${props.what}`} onClick={() => void copyText(props.id, props.what).then(setCopied)}>
        Copy
      </button>
      {copied && <span role="status"> {copied}</span>}
    </span>
  );
}
