import { useEffect, useState } from 'preact/hooks';
import { client, reply, type ApiError } from '../api';
import { ProblemMessage, asApiError, formatTime } from '../components';
import { useConfirmation } from '../confirmation';
import { DataTable } from '../data-table';
import type { AppConsent } from '../sign-in-types';
import { SIGN_IN_SCOPE_WORDS } from './app-client-fields';

/** A granted scope in the consent page's words when it has them (`email`: their email address), else its name. */
const scopeWords = (scope: string) => SIGN_IN_SCOPE_WORDS[scope]?.replace('their', 'your').replace('the user', 'you') ?? scope;

/**
 * The apps the caller let act for them (API.md section 18, consent): what each may do and since
 * when; withdrawing ends every session the app holds for them, and it asks again next time.
 */
export function OwnAppConsents() {
  const [consents, setConsents] = useState<AppConsent[]>();
  const [error, setError] = useState<ApiError>();
  const confirmation = useConfirmation();
  const load = async () => {
    try {
      setConsents((await reply(client.GET('/api/users/profile/apps'))).body.items);
      setError(undefined);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void load(), []);
  const withdraw = (consent: AppConsent) =>
    confirmation.ask({
      title: `Withdraw ${consent.name}'s access`,
      message: <p>{consent.name} is signed out of your account at once, and asks for your consent again if you use it later.</p>,
      confirmLabel: 'Withdraw access',
      danger: true,
      reason: 'none',
      run: async () => {
        await reply(client.DELETE('/api/users/profile/apps/{client_id}', { params: { path: { client_id: consent.client_id } } }));
        await load();
        return `Withdrew ${consent.name}'s access.`;
      },
    });
  return (
    <section class="card" aria-labelledby="own-apps-title">
      <h2 id="own-apps-title">Apps you allowed</h2>
      {confirmation.result}
      {confirmation.dialog}
      <ProblemMessage error={error} />
      {consents?.length === 0 && <p>No app has your consent. The shop's own apps never ask for it.</p>}
      {consents && consents.length > 0 && (
        <DataTable
          compact
          items={consents.map((consent) => ({ ...consent, id: consent.client_id }))}
          columns={[
            // By name only: the console's Content-Security-Policy loads no image from another origin, so an app's logo is not shown here.
            { label: 'App', cell: (consent) => consent.name },
            { label: 'May', cell: (consent) => consent.scopes.map(scopeWords).join('; ') },
            { label: 'Since', cell: (consent) => formatTime(consent.granted_at) },
            {
              label: 'Actions',
              cell: (consent) => (
                <button type="button" class="danger" aria-label={`Withdraw ${consent.name}'s access…`} onClick={() => withdraw(consent)}>
                  Withdraw…
                </button>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
