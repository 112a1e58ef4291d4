import { useState } from 'preact/hooks';
import { client, reply, signOut, type ApiError } from '../api';
import { Field, ProblemMessage, ResultLine, asApiError } from '../components';
import { saveDownload } from '../download';

/** Anyone's own account, staff or customer: their data as a file, or the account deleted (with the password). */
export function OwnAccount() {
  const [error, setError] = useState<ApiError>();
  const [saved, setSaved] = useState<string>();
  const [deleting, setDeleting] = useState(false);
  const [password, setPassword] = useState('');
  const exportData = async () => {
    setError(undefined);
    setSaved(undefined);
    try {
      // Unread (a stream), so the file is saved as the service sent it, under the name it gave.
      setSaved(`Saved ${await saveDownload(client.GET('/api/users/profile/export', { parseAs: 'stream' }), 'my-data.json')}.`);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  const deleteAccount = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      await reply(client.DELETE('/api/users/profile', { body: { password } }));
      await signOut();
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <section class="card" aria-labelledby="own-account-title">
      <h2 id="own-account-title">Your data and account</h2>
      <div class="actions">
        <button type="button" class="secondary" onClick={() => void exportData()}>
          Download my data
        </button>
        {!deleting && (
          <button type="button" class="danger" onClick={() => setDeleting(true)}>
            Delete my account…
          </button>
        )}
      </div>
      <ResultLine text={saved} />
      {deleting && (
        <form onSubmit={deleteAccount} aria-label="Delete my account">
          <p>Your account is deleted and every session ends; you cannot sign in again. Your data is erased after the shop's retention period.</p>
          <Field label="Your password" name="password" type="password" value={password} onInput={setPassword} error={error} autoComplete="current-password" required />
          <div class="actions">
            <button type="button" class="secondary" onClick={() => setDeleting(false)}>
              Cancel
            </button>
            <button type="submit" class="danger">
              Delete my account
            </button>
          </div>
        </form>
      )}
      <ProblemMessage error={error} fields={deleting ? ['password'] : []} />
    </section>
  );
}
