import { useEffect, useRef, useState } from 'preact/hooks';
import { client, finishSignIn, passkeyOptions, reply, signIn, type ApiError, type SecondFactorMethod } from '../api';
import { Field, ProblemMessage, asApiError } from '../components';
import { SecondFactorForm } from '../second-factor-form';

export function LoginPage(props: { onSignedIn: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ApiError>();
  const [forgotten, setForgotten] = useState(false);
  // After the password, for an account with a second factor (403 mfa_required): what it may answer with.
  const [secondStep, setSecondStep] = useState<{ mfaToken: string; methods: SecondFactorMethod[] }>();
  // Back from the reset form, focus returns to the login form's first field rather than to nowhere.
  const form = useRef<HTMLFormElement>(null);
  const cameBack = useRef(false);
  useEffect(() => {
    if (!forgotten && cameBack.current) form.current?.querySelector('input')?.focus();
    cameBack.current = forgotten;
  }, [forgotten]);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const needed = await signIn(email, password);
      setError(undefined);
      if (needed) {
        setPassword('');
        setSecondStep(needed);
      } else props.onSignedIn();
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <main class="login">
      <h1>Shop admin console</h1>
      {secondStep ? (
        <>
          <h2>Second factor</h2>
          <p>Your account is protected by a second factor: prove it is you.</p>
          <SecondFactorForm
            label="Second factor"
            methods={secondStep.methods}
            passkeyOptions={() => passkeyOptions(secondStep.mfaToken)}
            submit={async (proof) => {
              await finishSignIn(secondStep.mfaToken, proof);
              props.onSignedIn();
            }}
            submitLabel="Verify and log in"
            onCancel={() => setSecondStep(undefined)}
            cancelLabel="Back to log in"
          />
        </>
      ) : forgotten ? (
        <ForgottenPassword email={email} onBack={() => setForgotten(false)} />
      ) : (
        <form onSubmit={submit} aria-label="Log in" ref={form}>
          <Field label="Email" name="email" value={email} onInput={setEmail} error={error} autoComplete="username" required />
          <Field label="Password" name="password" type="password" value={password} onInput={setPassword} error={error} autoComplete="current-password" required />
          <ProblemMessage error={error} fields={['email', 'password']} />
          <div class="actions">
            <button type="submit">Log in</button>
            <button type="button" class="link" onClick={() => setForgotten(true)}>
              Forgot password?
            </button>
          </div>
        </form>
      )}
    </main>
  );
}

/** Asks for a reset link; the reply is the same whether or not the address has an account (API.md). */
function ForgottenPassword(props: { email: string; onBack: () => void }) {
  const [email, setEmail] = useState(props.email);
  const [error, setError] = useState<ApiError>();
  const [sentTo, setSentTo] = useState<string>();
  const heading = useRef<HTMLHeadingElement>(null);
  // The button that opened this form is gone: focus moves to the form's heading.
  useEffect(() => heading.current?.focus(), []);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await reply(client.POST('/api/auth/password-reset', { body: { email } }));
      setError(undefined);
      setSentTo(email.trim());
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <form onSubmit={submit} aria-label="Reset password">
      <h2 ref={heading} tabIndex={-1}>
        Reset your password
      </h2>
      <p>Enter your account's email address, and we send a link to choose a new password.</p>
      <Field label="Email" name="email" type="email" value={email} onInput={setEmail} error={error} autoComplete="username" required />
      <ProblemMessage error={error} fields={['email']} />
      {sentTo && <p role="status">If {sentTo} has an account, a link to choose a new password is on its way.</p>}
      <div class="actions">
        <button type="submit">Email me a link</button>
        <button type="button" class="link" onClick={props.onBack}>
          Back to log in
        </button>
      </div>
    </form>
  );
}
