import { startRegistration, type PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { useEffect, useState } from 'preact/hooks';
import { client, reply, type ApiError, type MfaFactor, type SecondFactorStatus } from '../api';
import { copyText } from '../clipboard';
import { AlertLine, Field, ProblemMessage, asApiError, formatTime } from '../components';
import { useConfirmation } from '../confirmation';
import { saveText } from '../download';
import { passkeyRefusal } from '../passkey-refusal';
import { QrCode } from '../qr-code';

type SecondFactorState = SecondFactorStatus;
type Factor = MfaFactor;
type Enrolment = { id: string; secret: string; otpauth_url: string };

/**
 * The caller's own second factors (API.md section 12): an authenticator app enrolled from a QR
 * code or its secret in text, passkeys, recovery codes shown once, and removal. Removing a
 * factor and new recovery codes need a recent second factor: the step-up dialog asks for it.
 */
export function SecondFactors() {
  const [state, setState] = useState<SecondFactorState>();
  const [error, setError] = useState<ApiError>();
  const [name, setName] = useState('');
  const [enrolment, setEnrolment] = useState<Enrolment>();
  const [code, setCode] = useState('');
  const [codeError, setCodeError] = useState<ApiError>();
  const [passkeyMessage, setPasskeyMessage] = useState<string>();
  const [recoveryCodes, setRecoveryCodes] = useState<string[]>();
  const confirmation = useConfirmation();

  const load = async () => {
    try {
      setState((await reply(client.GET('/api/auth/mfa'))).body);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void load(), []);
  const attempt = async (action: () => Promise<void>) => {
    try {
      setPasskeyMessage(undefined);
      await action();
      setError(undefined);
    } catch (caught) {
      const refusal = passkeyRefusal(caught);
      if (refusal) setPasskeyMessage(`The passkey was not added: ${refusal}`);
      else setError(asApiError(caught));
    }
  };
  const added = async (factor: { recovery_codes?: string[] }) => {
    setName('');
    if (factor.recovery_codes) setRecoveryCodes(factor.recovery_codes);
    await load();
  };

  const startAuthenticatorApp = () =>
    attempt(async () => {
      const { body } = await reply(client.POST('/api/auth/mfa/totp', { body: name.trim() ? { name: name.trim() } : {} }));
      setCode('');
      setCodeError(undefined);
      setEnrolment(body);
    });
  const confirmAuthenticatorApp = async (event: Event) => {
    event.preventDefault();
    if (!enrolment) return;
    try {
      const { body } = await reply(client.POST('/api/auth/mfa/totp/{id}/confirm', { params: { path: { id: enrolment.id } }, body: { code: code.trim() } }));
      setEnrolment(undefined);
      setCodeError(undefined);
      await added(body);
    } catch (caught) {
      setCodeError(asApiError(caught));
    }
  };
  const addPasskey = () =>
    attempt(async () => {
      const { body: options } = await reply(client.POST('/api/auth/mfa/webauthn/registration-options'));
      const response = await startRegistration({ optionsJSON: options as PublicKeyCredentialCreationOptionsJSON });
      // The browser's RegistrationResponseJSON is the shape the schema states, typed without its open members.
      const { body } = await reply(client.POST('/api/auth/mfa/webauthn', { body: { ...(name.trim() ? { name: name.trim() } : {}), response: response as never } }));
      await added(body);
    });
  const remove = (factor: Factor) =>
    confirmation.ask({
      title: `Remove ${factor.name}`,
      message: <p>The {factor.type === 'totp' ? 'authenticator app' : 'passkey'} "{factor.name}" no longer proves it is you.</p>,
      confirmLabel: 'Remove factor',
      danger: true,
      reason: 'none',
      run: async () => {
        await reply(client.DELETE('/api/auth/mfa/factors/{id}', { params: { path: { id: factor.id } } }));
        await load();
        return `${factor.name} was removed.`;
      },
    });
  const regenerate = () =>
    confirmation.ask({
      title: 'New recovery codes',
      message: <p>Ten new codes replace the old ones, which stop working at once.</p>,
      confirmLabel: 'Make new codes',
      reason: 'none',
      run: async () => {
        const { body } = await reply(client.POST('/api/auth/mfa/recovery-codes'));
        setRecoveryCodes(body.recovery_codes);
        await load();
        return 'New recovery codes are shown below.';
      },
    });

  return (
    <section aria-labelledby="second-factors-title" class="card">
      <h2 id="second-factors-title">Second factors</h2>
      {confirmation.result}
      {confirmation.dialog}
      <ProblemMessage error={error} fields={['name']} />
      {state && (
        <p>
          {state.enabled ? 'A second factor protects your account.' : 'No second factor protects your account yet.'}
          {state.required && ' Your role requires one.'}
        </p>
      )}
      {state && state.factors.length > 0 && (
        <ul class="factors">
          {state.factors.map((factor) => (
            <li key={factor.id}>
              <strong>{factor.name}</strong> ({factor.type === 'totp' ? 'authenticator app' : 'passkey'}), added {formatTime(factor.created_at)}, last used{' '}
              {formatTime(factor.last_used_at)}{' '}
              <button type="button" class="danger" onClick={() => remove(factor)}>
                Remove…
              </button>
            </li>
          ))}
        </ul>
      )}
      {enrolment ? (
        <form onSubmit={confirmAuthenticatorApp} aria-label="Confirm authenticator app">
          <p>Scan the code with your authenticator app, or type the secret into it, then enter the code it shows.</p>
          <QrCode text={enrolment.otpauth_url} label="QR code of the authenticator app's secret" />
          <p>
            Secret: <code data-testid="totp-secret">{enrolment.secret}</code>
          </p>
          <Field label="Code from the app" name="code" value={code} onInput={setCode} error={codeError} autoComplete="one-time-code" inputMode="numeric" required />
          <ProblemMessage error={codeError} fields={['code']} />
          <div class="actions">
            <button type="submit">Confirm</button>
            <button type="button" class="secondary" onClick={() => setEnrolment(undefined)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <div>
          <Field label="Name of the new factor (optional)" name="name" value={name} onInput={setName} error={error} />
          <div class="actions">
            <button type="button" onClick={() => void startAuthenticatorApp()}>
              Add authenticator app
            </button>
            <button type="button" onClick={() => void addPasskey()}>
              Add passkey
            </button>
          </div>
          <AlertLine text={passkeyMessage} />
        </div>
      )}
      {state?.enabled && (
        <div class="actions">
          <span>Recovery codes left: {state.recovery_codes_left}</span>
          <button type="button" class="secondary" onClick={regenerate}>
            New recovery codes…
          </button>
        </div>
      )}
      {recoveryCodes && <RecoveryCodes codes={recoveryCodes} onDone={() => setRecoveryCodes(undefined)} />}
    </section>
  );
}

/** Recovery codes, shown once: each signs in once when no other factor is at hand. */
function RecoveryCodes(props: { codes: string[]; onDone: () => void }) {
  const [told, setTold] = useState<string>();
  const text = `${props.codes.join('\n')}\n`;
  const copy = () => void copyText(text, 'codes').then(setTold);
  return (
    <div class="secret" role="status" aria-label="Recovery codes">
      <p>Your recovery codes, shown only now. Keep them somewhere safe: each one works once, when you have no other factor at hand.</p>
      <ul class="recovery-codes" data-testid="recovery-codes">
        {props.codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <button type="button" class="secondary" onClick={copy}>
          Copy codes
        </button>
        <button type="button" class="secondary" onClick={() => saveText(text, 'recovery-codes.txt')}>
          Download codes
        </button>
        <button type="button" onClick={props.onDone}>
          I have stored them
        </button>
        {told && <span>{told}</span>}
      </div>
    </div>
  );
}
