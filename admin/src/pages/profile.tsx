import { useEffect, useState } from 'preact/hooks';
import { ApiError, client, newPasswordLength, replaceTokens, reply, type Session, type User } from '../api';
import { useConfirmation } from '../confirmation';
import { Field, ProblemMessage, asApiError } from '../components';
import { SessionsTable, endSessionMessage } from '../sessions-table';
import { OwnAccount } from './own-account';
import { OwnAppConsents } from './own-app-consents';
import { OwnSignIn } from './own-sign-in';
import { SecondFactors } from './second-factors';

export function ProfilePage(props: { me: User; onChanged: (user: User) => void }) {
  const [name, setName] = useState(props.me.name);
  const [email, setEmail] = useState(props.me.email);
  const [phone, setPhone] = useState(props.me.phone ?? '');
  const [profileError, setProfileError] = useState<ApiError>();
  const [saved, setSaved] = useState(false);
  // A new email address is accepted only with the current password (a stolen session cannot take the account over).
  const [emailPassword, setEmailPassword] = useState('');
  const emailChanges = email.trim() !== props.me.email;
  const [currentPassword, setCurrentPassword] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const [passwordError, setPasswordError] = useState<ApiError>();
  const [passwordChanged, setPasswordChanged] = useState(false);

  const saveProfile = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    try {
      const body = { name, email, phone: phone === '' ? null : phone, ...(emailChanges ? { current_password: emailPassword } : {}) };
      const { body: changed } = await reply(client.PUT('/api/users/profile', { body }));
      props.onChanged(changed);
      setEmailPassword('');
      setProfileError(undefined);
      setSaved(true);
    } catch (caught) {
      setProfileError(asApiError(caught));
      setSaved(false);
    }
  };

  const changePassword = async (event: Event) => {
    event.preventDefault();
    try {
      const { body: tokens } = await reply(client.PUT('/api/users/change-password', { body: { current_password: currentPassword, new_password: newPassword } }));
      replaceTokens(tokens);
      setPasswordError(undefined);
      setPasswordChanged(true);
      setCurrentPassword('');
      setNewPassword('');
    } catch (caught) {
      setPasswordError(asApiError(caught));
      setPasswordChanged(false);
    }
  };

  return (
    <section aria-labelledby="profile-title">
      <h1 id="profile-title">My profile</h1>
      <Verification me={props.me} />
      <form class="card" onSubmit={saveProfile} aria-label="Profile">
        <Field label="Name" name="name" value={name} onInput={setName} error={profileError} required />
        <Field label="Email" name="email" value={email} onInput={setEmail} error={profileError} type="email" required />
        {emailChanges && (
          <Field label="Current password (to change the email)" name="current_password" type="password" value={emailPassword} onInput={setEmailPassword} error={profileError} autoComplete="current-password" required />
        )}
        <Field label="Phone" name="phone" value={phone} onInput={setPhone} error={profileError} />
        <ProblemMessage error={profileError} fields={['name', 'email', 'phone', 'current_password']} />
        {saved && <p role="status">Saved.</p>}
        <button type="submit">Save profile</button>
      </form>
      <form class="card" onSubmit={changePassword} aria-label="Change password">
        <h2>Change password</h2>
        <Field label="Current password" name="current_password" type="password" value={currentPassword} onInput={setCurrentPassword} error={passwordError} autoComplete="current-password" required />
        <Field label={`New password (${newPasswordLength.min} to ${newPasswordLength.max} characters)`} name="new_password" type="password" value={newPassword} onInput={setNewPassword} error={passwordError} autoComplete="new-password" required />
        <ProblemMessage error={passwordError} fields={['current_password', 'new_password']} />
        {passwordChanged && <p role="status">Password changed; other sessions were signed out.</p>}
        <button type="submit">Change password</button>
      </form>
      <OwnSignIn me={props.me} />
      <MySessions />
      <SecondFactors />
      <OwnAppConsents />
      <OwnAccount />
    </section>
  );
}

function Verification(props: { me: User }) {
  const [sent, setSent] = useState<string>();
  const [error, setError] = useState<ApiError>();
  if (props.me.email_verified) return <p>Your email address is verified.</p>;
  const resend = async () => {
    try {
      await reply(client.POST('/api/auth/verify-email/resend'));
      setSent(`A verification link is on its way to ${props.me.email}.`);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <div class="actions">
      <span class="badge">email not verified</span>
      <button type="button" class="secondary" onClick={() => void resend()}>
        Send me a verification link
      </button>
      <ProblemMessage error={error} />
      {sent && <p role="status">{sent}</p>}
    </div>
  );
}

/** The caller's own sessions: a lost phone is signed out from here. */
function MySessions() {
  const [sessions, setSessions] = useState<Session[]>();
  const [error, setError] = useState<ApiError>();
  const confirmation = useConfirmation();
  const load = async () => {
    try {
      setSessions((await reply(client.GET('/api/auth/sessions'))).body.items);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void load(), []);
  const end = (session: Session) =>
    confirmation.ask({
      title: 'Sign out of this session',
      message: endSessionMessage(session),
      confirmLabel: 'Sign out this session',
      danger: true,
      reason: 'none',
      run: async () => {
        await reply(client.DELETE('/api/auth/sessions/{id}', { params: { path: { id: session.id } } }));
        await load();
        return 'The session has ended.';
      },
    });
  const others = (sessions ?? []).filter((session) => !session.current);
  // The API ends one of one's own sessions at a time; a session already gone (404) is as good as ended.
  const endOthers = () =>
    confirmation.ask({
      title: 'Sign out everywhere else',
      message: <p>Every other session of yours ({others.length}) ends at once; this browser stays signed in.</p>,
      confirmLabel: 'Sign out all others',
      danger: true,
      reason: 'none',
      run: async () => {
        for (const session of others) {
          await reply(client.DELETE('/api/auth/sessions/{id}', { params: { path: { id: session.id } } })).catch((caught: unknown) => {
            if (!(caught instanceof ApiError && caught.problem.status === 404)) throw caught;
          });
        }
        await load();
        return others.length === 1 ? 'The other session has ended.' : `The ${others.length} other sessions have ended.`;
      },
    });
  return (
    <section aria-labelledby="my-sessions-title">
      <h2 id="my-sessions-title">My sessions</h2>
      {confirmation.result}
      {confirmation.dialog}
      <ProblemMessage error={error} />
      {others.length > 0 && (
        <div class="actions">
          <button type="button" class="danger" onClick={endOthers}>
            Sign out all others…
          </button>
        </div>
      )}
      {sessions && <SessionsTable sessions={sessions} onEnd={end} />}
    </section>
  );
}
