import { useEffect, useState } from 'preact/hooks';
import { ApiError, client, reply, type Session, type User } from '../api';
import { useConfirmation } from '../confirmation';
import { Field, ProblemMessage, ROLES, STATUSES, Select, asApiError, displayName, formatTime } from '../components';
import { DataTable } from '../data-table';
import { ActorName } from '../names';
import { formatMoney, parseAmount } from '../money';
import { Pager, usePages } from '../pages-list';
import { SessionsTable, endSessionMessage } from '../sessions-table';
import { UserPrivacy } from './user-privacy';
import { UserSignIn } from './user-sign-in';

/**
 * One user's page. main.tsx keys it by the user's id, so moving to another user starts from
 * a blank page: no amount, reason or choice typed for one customer can reach the next.
 */
export function UserDetailPage(props: { id: string; me: User }) {
  const isAdmin = props.me.role === 'admin';
  const [user, setUser] = useState<User>();
  const [error, setError] = useState<ApiError>();
  const confirmation = useConfirmation();

  const load = async () => {
    try {
      setUser((await reply(client.GET('/api/users/{id}', { params: { path: { id: props.id } } }))).body);
      setError(undefined);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void load(), []);

  if (error) return <ProblemMessage error={error} />;
  if (!user) return <p class="loading">Loading…</p>;
  const name = displayName(user);
  return (
    <section aria-labelledby="user-title">
      <h1 id="user-title">{name}</h1>
      {confirmation.result}
      {confirmation.dialog}
      <dl class="facts">
        <dt>Email</dt>
        <dd>
          {user.email} <span class={user.email_verified ? 'badge ok' : 'badge'}>{user.email_verified ? 'verified' : 'not verified'}</span>
        </dd>
        <dt>Phone</dt>
        <dd>{user.phone ?? '—'}</dd>
        <dt>Balance</dt>
        <dd data-testid="balance">{formatMoney(user.balance, user.currency)}</dd>
        <dt>Role</dt>
        <dd>{user.role}</dd>
        <dt>Status</dt>
        <dd>{user.status}</dd>
        <dt>Created</dt>
        <dd>{formatTime(user.created_at)}</dd>
      </dl>
      {isAdmin && (
        <p class="actions">
          <a href={`#/events?subject_id=${user.id}`}>History of this user</a>
          {user.role !== 'user' && <a href={`#/events?actor_id=${user.id}`}>Changes made by this user</a>}
        </p>
      )}
      {isAdmin && (
        <div class="actions">
          {!user.email_verified && (
            <button
              type="button"
              class="secondary"
              onClick={() =>
                confirmation.ask({
                  title: 'Resend the verification link',
                  message: <p>A new link goes to {user.email}.</p>,
                  confirmLabel: 'Send link',
                  reason: 'none',
                  run: async () => {
                    await reply(client.POST('/api/users/{id}/verify-email/resend', { params: { path: { id: user.id } } }));
                    return `A verification link is on its way to ${user.email}.`;
                  },
                })
              }
            >
              Resend verification link
            </button>
          )}
          <button
            type="button"
            class="secondary"
            onClick={() =>
              confirmation.ask({
                title: `Reset the second factors of ${name}`,
                message: (
                  <p>
                    Every authenticator app, passkey and recovery code of {user.email} is removed and every session ends; an email tells them. They sign in with
                    their password alone, and enrol again if their role requires a factor.
                  </p>
                ),
                confirmLabel: 'Reset second factors',
                danger: true,
                reason: 'none',
                run: async () => {
                  await reply(client.DELETE('/api/users/{id}/mfa', { params: { path: { id: user.id } } }));
                  return `The second factors of ${user.email} were reset.`;
                },
              })
            }
          >
            Reset second factors
          </button>
          <button
            type="button"
            class="danger"
            onClick={() =>
              confirmation.ask({
                title: `Delete ${name}`,
                message: <p>{user.email} will no longer be able to sign in, and every session ends. The balance history is kept.</p>,
                confirmLabel: 'Delete user',
                danger: true,
                reason: 'required',
                run: async (reason) => {
                  await reply(client.DELETE('/api/users/{id}', { params: { path: { id: user.id }, query: { reason } } }));
                  location.hash = '#/users';
                  return `Deleted ${user.email}.`;
                },
              })
            }
          >
            Delete user
          </button>
        </div>
      )}
      {isAdmin && <AccessForm user={user} onChanged={setUser} ask={confirmation.ask} />}
      {isAdmin && <BalanceForm user={user} onChanged={setUser} ask={confirmation.ask} />}
      <UserSignIn user={user} isAdmin={isAdmin} />
      {isAdmin && <Sessions user={user} ask={confirmation.ask} />}
      {isAdmin && <UserPrivacy user={user} ask={confirmation.ask} />}
      {(isAdmin || props.me.id === user.id) && <Ledger user={user} />}
    </section>
  );
}

type Ask = ReturnType<typeof useConfirmation>['ask'];

/** Role and status: chosen, then confirmed with a reason; nothing is saved on a mere change of the list. */
function AccessForm(props: { user: User; onChanged: (user: User) => void; ask: Ask }) {
  const { user } = props;
  const [role, setRole] = useState<string>(user.role);
  const [status, setStatus] = useState<string>(user.status);
  const submit = (field: 'role' | 'status', value: string) => (event: Event) => {
    event.preventDefault();
    if (value === user[field]) return;
    props.ask({
      title: field === 'role' ? `Change the role of ${displayName(user)}` : `${value === 'suspended' ? 'Suspend' : 'Reactivate'} ${displayName(user)}`,
      message:
        field === 'role' ? (
          <p>
            From {user.role} to <strong>{value}</strong>. It applies to their very next request.
          </p>
        ) : value === 'suspended' ? (
          <p>They are signed out everywhere and cannot sign in until reactivated.</p>
        ) : (
          <p>They can sign in again.</p>
        ),
      confirmLabel: field === 'role' ? `Make ${value}` : value === 'suspended' ? 'Suspend' : 'Reactivate',
      danger: value === 'suspended',
      reason: 'required',
      run: async (reason) => {
        const path = { path: { id: user.id } };
        const { body: changed } = await reply(
          field === 'role'
            ? client.PUT('/api/users/{id}/role', { params: path, body: { role: value as User['role'], reason } })
            : client.PUT('/api/users/{id}/status', { params: path, body: { status: value as User['status'], reason } }),
        );
        props.onChanged(changed);
        return field === 'role' ? `Role changed to ${changed.role}.` : `Status changed to ${changed.status}.`;
      },
    });
  };
  return (
    <div class="row">
      <form class="card" onSubmit={submit('role', role)} aria-label="Role">
        <Select label="Role" name="role" value={role} options={ROLES} onChange={setRole} />
        <button type="submit" disabled={role === user.role}>
          Change role…
        </button>
      </form>
      <form class="card" onSubmit={submit('status', status)} aria-label="Status">
        <Select label="Status" name="status" value={status} options={STATUSES} onChange={setStatus} />
        <button type="submit" disabled={status === user.status}>
          Change status…
        </button>
      </form>
    </div>
  );
}

/**
 * The API says the balance in minor units ("The balance is 1250"): the console says it as money,
 * read afresh, since the balance may have moved since the page was loaded.
 */
async function overdrawn(refusal: ApiError, user: User, debit: number, onChanged: (user: User) => void): Promise<ApiError> {
  const fresh = (await reply(client.GET('/api/users/{id}', { params: { path: { id: user.id } } })).catch(() => undefined))?.body;
  if (fresh) onChanged(fresh);
  const balance = (fresh ?? user).balance;
  const shown = (minorUnits: number) => formatMoney(minorUnits, user.currency);
  // The balance may have grown since the refusal: then say so rather than something now untrue.
  const detail =
    balance + debit >= 0
      ? `The balance changed meanwhile and is now ${shown(balance)}: try the debit of ${shown(-debit)} again.`
      : `The balance is ${shown(balance)}: a debit of ${shown(-debit)} would take it below zero.`;
  return new ApiError({ ...refusal.problem, detail });
}

/** A credit or debit typed in the currency's major unit, confirmed, sent once (one Idempotency-Key per intended change). */
function BalanceForm(props: { user: User; onChanged: (user: User) => void; ask: Ask }) {
  const { user } = props;
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string>();
  const submit = (event: Event) => {
    event.preventDefault();
    const parsed = parseAmount(amount, user.currency, { allowNegative: true });
    if (!parsed.ok || parsed.minorUnits === 0) {
      setProblem(parsed.ok ? 'Enter an amount other than zero.' : parsed.message);
      return;
    }
    const delta = parsed.minorUnits;
    // A debit beyond the balance is said here, before a confirmation the service would only refuse (#56);
    // the service still checks, for a balance that moved since the page was read.
    if (user.balance + delta < 0) {
      setProblem(`The balance is ${formatMoney(user.balance, user.currency)}: a debit of ${formatMoney(-delta, user.currency)} would take it below zero.`);
      return;
    }
    setProblem(undefined);
    const idempotencyKey = crypto.randomUUID();
    const shown = formatMoney(Math.abs(delta), user.currency);
    props.ask({
      title: delta > 0 ? `Credit ${shown}` : `Debit ${shown}`,
      message: (
        <p>
          {delta > 0 ? 'Credit' : 'Debit'} <strong>{shown}</strong> {delta > 0 ? 'to' : 'from'} <strong>{displayName(user)}</strong> ({user.email}) for
          “{reason}”. The balance becomes {formatMoney(user.balance + delta, user.currency)}.
        </p>
      ),
      confirmLabel: delta > 0 ? `Credit ${shown}` : `Debit ${shown}`,
      danger: delta < 0,
      reason: 'none',
      run: async () => {
        const { body: changed } = await reply(
          client.PUT('/api/users/{id}/balance', { params: { path: { id: user.id }, header: { 'idempotency-key': idempotencyKey } }, body: { delta, reason } }),
        ).catch(async (caught: unknown) => {
          throw caught instanceof ApiError && caught.problem.code === 'insufficient_funds' ? await overdrawn(caught, user, delta, props.onChanged) : caught;
        });
        props.onChanged(changed);
        setAmount('');
        setReason('');
        return `Balance changed by ${formatMoney(delta, user.currency)}; now ${formatMoney(changed.balance, user.currency)}.`;
      },
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Adjust balance">
      <h2>Adjust balance</h2>
      <Field label={`Amount in ${user.currency} (negative to debit)`} name="delta" value={amount} onInput={setAmount} message={problem} inputMode="decimal" required />
      <Field label="Reason" name="reason" value={reason} onInput={setReason} required />
      <button type="submit">Apply…</button>
    </form>
  );
}

function Sessions(props: { user: User; ask: Ask }) {
  const { user } = props;
  const [sessions, setSessions] = useState<Session[]>();
  const [error, setError] = useState<ApiError>();
  const load = async () => {
    try {
      setSessions((await reply(client.GET('/api/users/{id}/sessions', { params: { path: { id: user.id } } }))).body.items);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void load(), []);
  const end = (session?: Session) =>
    props.ask({
      title: session ? 'Sign out of one session' : `Sign ${displayName(user)} out everywhere`,
      message: session ? endSessionMessage(session) : <p>Every session ends at once; they must sign in again.</p>,
      confirmLabel: session ? 'Sign out this session' : 'Sign out everywhere',
      danger: true,
      reason: 'none',
      run: async () => {
        await reply(
          session
            ? client.DELETE('/api/users/{id}/sessions/{session_id}', { params: { path: { id: user.id, session_id: session.id } } })
            : client.DELETE('/api/users/{id}/sessions', { params: { path: { id: user.id } } }),
        );
        await load();
        return session ? 'The session has ended.' : `${displayName(user)} is signed out everywhere.`;
      },
    });
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <ProblemMessage error={error} />
      {sessions && sessions.length === 0 && <p>No open sessions.</p>}
      {sessions && sessions.length > 0 && (
        <>
          <SessionsTable sessions={sessions} onEnd={end} />
          <button type="button" class="danger" onClick={() => end()}>
            Sign out everywhere…
          </button>
        </>
      )}
    </section>
  );
}

function Ledger(props: { user: User }) {
  // A balance change moves the version; the list then shows the new entry.
  const pages = usePages(props.user.id, (paging) => client.GET('/api/users/{id}/balance/ledger', { params: { path: { id: props.user.id }, query: paging } }), {
    restartOn: props.user.version,
  });
  return (
    <section aria-labelledby="ledger-title">
      <h2 id="ledger-title">Ledger</h2>
      <DataTable
        items={pages.page?.items ?? []}
        columns={[
          { label: 'When', cell: (entry) => formatTime(entry.created_at) },
          { label: 'Change', numeric: true, cell: (entry) => formatMoney(entry.delta, entry.currency) },
          { label: 'Balance after', numeric: true, cell: (entry) => formatMoney(entry.balance_after, entry.currency) },
          { label: 'Reason', cell: (entry) => entry.reason },
          { label: 'Who', cell: (entry) => <ActorName id={entry.actor_id} /> },
        ]}
      />
      <Pager pages={pages} noun="entry" nouns="entries" label="Ledger" />
    </section>
  );
}
