import { useState } from 'preact/hooks';
import { signIn, type ApiError } from '../api';
import { Field, ProblemMessage, asApiError } from '../components';

export function LoginPage(props: { onSignedIn: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ApiError>();
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await signIn(email, password);
      setError(undefined);
      props.onSignedIn();
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <main class="login">
      <h1>Shop admin console</h1>
      <form onSubmit={submit} aria-label="Log in">
        <Field label="Email" name="email" value={email} onInput={setEmail} error={error} autoComplete="username" required />
        <Field label="Password" name="password" type="password" value={password} onInput={setPassword} error={error} autoComplete="current-password" required />
        <ProblemMessage error={error} />
        <button type="submit">Log in</button>
      </form>
    </main>
  );
}
