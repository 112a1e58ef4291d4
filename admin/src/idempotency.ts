import { useRef } from 'preact/hooks';

/**
 * The Idempotency-Key for a request body: the same body sent again (a retry after a lost reply)
 * reuses its key, so it acts once; an edited body gets a new key, because the API refuses a key
 * used with another body (422 `idempotency_key_reused`), even one it refused before. `forget`
 * after a success, so sending the same again is a new action, not a replay.
 */
export function useIdempotencyKey() {
  const last = useRef<{ body: string; key: string }>();
  return {
    keyFor: (body: unknown) => {
      const text = JSON.stringify(body);
      if (last.current?.body !== text) last.current = { body: text, key: crypto.randomUUID() };
      return last.current.key;
    },
    forget: () => {
      last.current = undefined;
    },
  };
}
