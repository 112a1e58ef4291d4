import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError, SecondFactorMethod, SecondFactorProof } from './api';
import { AlertLine, Field, ProblemMessage, asApiError } from './components';
import { passkeyRefusal } from './passkey-refusal';

/**
 * Asks for one second factor, the way the person has one: a code from the authenticator app, a
 * passkey, or a recovery code. Used by the login's second step and by the step-up dialog; what
 * the answer is sent to, and where the passkey's challenge comes from, is theirs.
 */
export function SecondFactorForm(props: {
  label: string;
  methods: readonly SecondFactorMethod[];
  /** The passkey challenge: for a login tied to its mfa_token, for a step-up to the session. */
  passkeyOptions: () => Promise<PublicKeyCredentialRequestOptionsJSON>;
  submit: (proof: SecondFactorProof) => Promise<void>;
  submitLabel: string;
  onCancel: () => void;
  cancelLabel: string;
}) {
  const { methods } = props;
  const [mode, setMode] = useState<'code' | 'recovery'>(methods.includes('totp') ? 'code' : 'recovery');
  const [code, setCode] = useState('');
  const [error, setError] = useState<ApiError>();
  // What the browser said when a passkey was not used (cancelled, no matching passkey).
  const [passkeyMessage, setPasskeyMessage] = useState<string>();
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => form.current?.querySelector('input')?.focus(), [mode]);

  const send = async (proof: () => Promise<SecondFactorProof>) => {
    if (busy) return;
    setBusy(true);
    setPasskeyMessage(undefined);
    try {
      await props.submit(await proof());
      setError(undefined);
    } catch (caught) {
      const refusal = passkeyRefusal(caught);
      if (refusal) setPasskeyMessage(`The passkey was not used: ${refusal}`);
      else setError(asApiError(caught));
    } finally {
      setBusy(false);
    }
  };
  const submitCode = (event: Event) => {
    event.preventDefault();
    const typed = code.trim();
    void send(async () => (mode === 'code' ? { code: typed } : { recovery_code: typed }));
  };
  // The browser's AuthenticationResponseJSON is the shape the schema states (with its members open), typed as an interface without an index signature.
  const usePasskey = () => void send(async () => ({ webauthn: (await startAuthentication({ optionsJSON: await props.passkeyOptions() })) as never }));

  return (
    <form onSubmit={submitCode} aria-label={props.label} ref={form}>
      {methods.includes('webauthn') && (
        <div class="actions">
          <button type="button" onClick={usePasskey} disabled={busy}>
            Use a passkey
          </button>
        </div>
      )}
      <AlertLine text={passkeyMessage} />
      {mode === 'code' ? (
        <Field label="Code from your authenticator app" name="code" value={code} onInput={setCode} error={error} autoComplete="one-time-code" inputMode="numeric" required />
      ) : (
        methods.includes('recovery_code') && <Field label="Recovery code" name="recovery_code" value={code} onInput={setCode} error={error} autoComplete="off" required />
      )}
      <ProblemMessage error={error} fields={['code', 'recovery_code']} />
      <div class="actions">
        {(mode === 'code' || methods.includes('recovery_code')) && (
          <button type="submit" disabled={busy}>
            {props.submitLabel}
          </button>
        )}
        {methods.includes('totp') && methods.includes('recovery_code') && (
          <button
            type="button"
            class="link"
            onClick={() => {
              setCode('');
              setError(undefined);
              setMode(mode === 'code' ? 'recovery' : 'code');
            }}
          >
            {mode === 'code' ? 'Use a recovery code instead' : 'Use the authenticator app instead'}
          </button>
        )}
        <button type="button" class="secondary" onClick={props.onCancel}>
          {props.cancelLabel}
        </button>
      </div>
    </form>
  );
}
