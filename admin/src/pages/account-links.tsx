import { useEffect, useState } from 'preact/hooks';
import { client, newPasswordLength, reply, type ApiError } from '../api';
import { Field, ProblemMessage, asApiError } from '../components';

/** Where the links of the password-reset and verification emails land; no session needed. */
export function AccountLinkPage(props: { kind: 'reset' | 'verify'; token: string }) {
  return <main class="login" id="main">{props.kind === 'reset' ? <ResetPassword token={props.token} /> : <VerifyEmail token={props.token} />}</main>;
}

function ResetPassword(props: { token: string }) {
  const [password, setPassword] = useState('');
  const [repeated, setRepeated] = useState('');
  const [mismatch, setMismatch] = useState<string>();
  const [error, setError] = useState<ApiError>();
  const [done, setDone] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (password !== repeated) return setMismatch('The two passwords differ.');
    setMismatch(undefined);
    try {
      await reply(client.POST('/api/auth/password-reset/confirm', { body: { token: props.token, new_password: password } }));
      setDone(true);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  if (done) {
    return (
      <>
        <h1>Password changed</h1>
        <p role="status">Your password is changed and every session was signed out.</p>
        <a href="#/">Log in</a>
      </>
    );
  }
  return (
    <>
      <h1>Choose a new password</h1>
      <form onSubmit={submit} aria-label="Reset password">
        <Field label={`New password (${newPasswordLength.min} to ${newPasswordLength.max} characters)`} name="new_password" type="password" value={password} onInput={setPassword} error={error} autoComplete="new-password" required />
        <Field label="New password again" name="repeat" type="password" value={repeated} onInput={setRepeated} message={mismatch} autoComplete="new-password" required />
        <ProblemMessage error={error} fields={['new_password']}>{error?.problem.code === 'invalid_reset_token' && 'Ask for a new link: this one was used, has expired or was replaced.'}</ProblemMessage>
        <button type="submit">Set password</button>
      </form>
    </>
  );
}

function VerifyEmail(props: { token: string }) {
  const [state, setState] = useState<'verifying' | 'verified' | ApiError>('verifying');
  useEffect(() => {
    reply(client.POST('/api/auth/verify-email', { body: { token: props.token } }))
      .then(() => setState('verified'))
      .catch((caught) => setState(asApiError(caught)));
  }, []);
  return (
    <>
      <h1>Email verification</h1>
      {state === 'verifying' && <p>Verifying…</p>}
      {state === 'verified' && <p role="status">Your email address is verified. You can close this page.</p>}
      {typeof state === 'object' && <ProblemMessage error={state}>{state.problem.code === 'invalid_verification_token' && 'The link was used, has expired, or is for an address the account no longer has.'}</ProblemMessage>}
    </>
  );
}
