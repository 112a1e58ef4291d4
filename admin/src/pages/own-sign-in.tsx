import { useEffect, useState } from 'preact/hooks';
import { client, reply, type ApiError, type SecondFactorStatus, type User } from '../api';
import { ProblemMessage, asApiError, formatTime } from '../components';
import { useConfirmation } from '../confirmation';
import { DataTable } from '../data-table';
import { ConnectProvider } from './connect-provider';
import type { LinkedIdentity } from '../sign-in-types';

const count = (number: number, one: string, many: string) => `${number} ${number === 1 ? one : many}`;

/** How the caller's second factor stands, in one line: what a person checks before losing a phone. */
function secondFactorSummary(status: SecondFactorStatus): string {
  if (!status.enabled) return status.required ? 'none yet: your role requires one, add it below' : 'none: signing in asks for nothing more';
  const apps = status.factors.filter((factor) => factor.type === 'totp').length;
  const passkeys = status.factors.filter((factor) => factor.type === 'webauthn').length;
  const parts = [apps > 0 ? count(apps, 'authenticator app', 'authenticator apps') : '', passkeys > 0 ? count(passkeys, 'passkey', 'passkeys') : '', count(status.recovery_codes_left, 'recovery code left', 'recovery codes left')];
  return `on: ${parts.filter(Boolean).join(', ')}`;
}

/**
 * The ways the caller can sign in (API.md sections 19 and 20): a password or none, email codes,
 * passkeys, second factors, and the accounts of other providers linked to theirs, which they can
 * unlink (an email code still signs them in, so no one is locked out by it).
 */
export function OwnSignIn(props: { me: User }) {
  const [identities, setIdentities] = useState<LinkedIdentity[]>();
  const [factors, setFactors] = useState<SecondFactorStatus>();
  const [error, setError] = useState<ApiError>();
  const confirmation = useConfirmation();
  const load = async () => {
    try {
      const [linked, status] = await Promise.all([reply(client.GET('/api/users/profile/identities')), reply(client.GET('/api/auth/mfa'))]);
      setIdentities(linked.body.items);
      setFactors(status.body);
      setError(undefined);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void load(), []);

  const unlink = (identity: LinkedIdentity) =>
    confirmation.ask({
      title: `Unlink your ${identity.provider_name} account`,
      message: (
        <p>
          You can no longer sign in with {identity.provider_name}
          {identity.email ? ` (${identity.email})` : ''}. {props.me.has_password ? 'Your password' : 'An email code'} still signs you in.
        </p>
      ),
      confirmLabel: 'Unlink',
      danger: true,
      reason: 'none',
      run: async () => {
        await reply(client.DELETE('/api/users/profile/identities/{id}', { params: { path: { id: identity.id } } }));
        await load();
        return `Unlinked ${identity.provider_name}.`;
      },
    });

  const passkeys = factors?.factors.filter((factor) => factor.type === 'webauthn').length;
  return (
    <section class="card" aria-labelledby="own-sign-in-title">
      <h2 id="own-sign-in-title">How you sign in</h2>
      {confirmation.result}
      {confirmation.dialog}
      <ProblemMessage error={error} />
      <dl class="facts" data-testid="sign-in-methods">
        <dt>Password</dt>
        <dd>{props.me.has_password ? 'set' : 'none: to set one, use “Forgot password” on the sign-in page'}</dd>
        <dt>Email code</dt>
        <dd>a code sent to {props.me.email} always signs you in</dd>
        <dt>Passkeys</dt>
        <dd>{passkeys === undefined ? '…' : passkeys === 0 ? 'none' : `${passkeys}: each signs you in on its own`}</dd>
        <dt>Second factor</dt>
        <dd>{factors ? secondFactorSummary(factors) : '…'}</dd>
        <dt>Other accounts</dt>
        <dd>{identities === undefined ? '…' : identities.length === 0 ? 'none linked' : identities.map((identity) => identity.provider_name).join(', ')}</dd>
      </dl>
      <section aria-labelledby="identities-title">
        <h3 id="identities-title">Linked accounts</h3>
        {identities?.length === 0 && <p>No account of another provider (Google, Apple, …) is linked to yours.</p>}
        {identities && identities.length > 0 && (
          <DataTable
            compact
            items={identities}
            columns={[
              { label: 'Provider', cell: (identity) => identity.provider_name },
              { label: 'Email there', cell: (identity) => identity.email ?? '—' },
              { label: 'Linked', cell: (identity) => formatTime(identity.linked_at) },
              { label: 'Last sign-in', cell: (identity) => formatTime(identity.last_used_at) },
              {
                label: 'Actions',
                cell: (identity) => (
                  <button type="button" class="danger" aria-label={`Unlink ${identity.provider_name}…`} onClick={() => unlink(identity)}>
                    Unlink…
                  </button>
                ),
              },
            ]}
          />
        )}
        {identities && <ConnectProvider linkedProviderIds={identities.map((identity) => identity.provider_id)} />}
      </section>
    </section>
  );
}
