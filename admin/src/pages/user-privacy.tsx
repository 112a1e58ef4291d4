import { useState } from 'preact/hooks';
import { client, reply, type ApiError, type User } from '../api';
import { ProblemMessage, ResultLine, asApiError, displayName } from '../components';
import type { useConfirmation } from '../confirmation';
import { saveDownload } from '../download';

type Ask = ReturnType<typeof useConfirmation>['ask'];

/** A privacy request about one user, served by an admin: their data as a file, or their erasure. */
export function UserPrivacy(props: { user: User; ask: Ask }) {
  const { user } = props;
  const [error, setError] = useState<ApiError>();
  const [saved, setSaved] = useState<string>();
  const exportData = async () => {
    setError(undefined);
    setSaved(undefined);
    try {
      // Unread (a stream), so the file is saved as the service sent it, under the name it gave.
      setSaved(`Saved ${await saveDownload(client.GET('/api/users/{id}/export', { params: { path: { id: user.id } }, parseAs: 'stream' }), `user-${user.id}.json`)}.`);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  const erase = () =>
    props.ask({
      title: `Erase ${displayName(user)}`,
      message: (
        <p>
          The account is deleted, and its name, email, phone, sessions and factors are removed for good; the audit log keeps no personal data of it. Ledger entries and
          reservations stay. This cannot be undone.
        </p>
      ),
      confirmLabel: 'Erase for good',
      danger: true,
      reason: 'required',
      typeToConfirm: user.email,
      run: async (reason) => {
        await reply(client.POST('/api/users/{id}/erase', { params: { path: { id: user.id } }, body: { reason } }));
        location.hash = '#/users';
        return `Erased ${user.email}.`;
      },
    });
  return (
    <section class="card" aria-labelledby="privacy-title">
      <h2 id="privacy-title">Privacy requests</h2>
      <div class="actions">
        <button type="button" class="secondary" onClick={() => void exportData()}>
          Export their data
        </button>
        <button type="button" class="danger" onClick={erase}>
          Erase…
        </button>
      </div>
      <ProblemMessage error={error} />
      <ResultLine text={saved} />
    </section>
  );
}
