import { useEffect, useState } from 'preact/hooks';
import { api, formatMoney, type ApiError, type LedgerEntry, type Page, type User } from '../api';
import { Field, ProblemMessage, ROLES, STATUSES, Select, asApiError } from '../components';

export function UserDetailPage(props: { id: string; me: User }) {
  const isAdmin = props.me.role === 'admin';
  const [user, setUser] = useState<User>();
  const [etag, setEtag] = useState<string | null>(null);
  const [ledger, setLedger] = useState<LedgerEntry[]>([]);
  const [error, setError] = useState<ApiError>();
  const [actionError, setActionError] = useState<ApiError>();
  const [delta, setDelta] = useState('');
  const [reason, setReason] = useState('');
  const [balanceError, setBalanceError] = useState<ApiError>();
  // One key per intended change: a double click or a retry replays instead of changing twice.
  const [idempotencyKey, setIdempotencyKey] = useState(() => crypto.randomUUID());

  const load = async () => {
    try {
      const reply = await api<User>('GET', `/api/users/${props.id}`);
      setUser(reply.body);
      setEtag(reply.etag);
      if (isAdmin || props.me.id === props.id) {
        setLedger((await api<Page<LedgerEntry>>('GET', `/api/users/${props.id}/balance/ledger?limit=50`)).body.items);
      }
      setError(undefined);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void load(), [props.id]);

  const change = async (field: 'role' | 'status', value: string) => {
    try {
      const reply = await api<User>('PUT', `/api/users/${props.id}/${field}`, { [field]: value }, etag ? { 'if-match': etag } : {});
      setUser(reply.body);
      setEtag(reply.etag);
      setActionError(undefined);
    } catch (caught) {
      setActionError(asApiError(caught));
    }
  };

  const adjustBalance = async (event: Event) => {
    event.preventDefault();
    const amount = Number(delta);
    try {
      const body = { delta: Number.isInteger(amount) ? amount : delta, reason };
      const reply = await api<User>('PUT', `/api/users/${props.id}/balance`, body, { 'idempotency-key': idempotencyKey });
      setUser(reply.body);
      setEtag(reply.etag);
      setBalanceError(undefined);
      setDelta('');
      setReason('');
      setIdempotencyKey(crypto.randomUUID());
      setLedger((await api<Page<LedgerEntry>>('GET', `/api/users/${props.id}/balance/ledger?limit=50`)).body.items);
    } catch (caught) {
      setBalanceError(asApiError(caught));
    }
  };

  const remove = async () => {
    if (!user || !confirm(`Delete ${user.email}? They will no longer be able to sign in.`)) return;
    try {
      await api('DELETE', `/api/users/${props.id}`, undefined, etag ? { 'if-match': etag } : {});
      location.hash = '#/users';
    } catch (caught) {
      setActionError(asApiError(caught));
    }
  };

  if (error) return <ProblemMessage error={error} />;
  if (!user) return <p class="loading">Loading…</p>;
  return (
    <section aria-labelledby="user-title">
      <h1 id="user-title">{user.name}</h1>
      <dl class="facts">
        <dt>Email</dt>
        <dd>{user.email}</dd>
        <dt>Phone</dt>
        <dd>{user.phone ?? '—'}</dd>
        <dt>Balance</dt>
        <dd data-testid="balance">{formatMoney(user.balance, user.currency)}</dd>
        <dt>Role</dt>
        <dd>
          {isAdmin ? (
            <Select label="Role" name="role" value={user.role} options={ROLES} onChange={(value) => void change('role', value)} hideLabel />
          ) : (
            user.role
          )}
        </dd>
        <dt>Status</dt>
        <dd>
          {isAdmin ? (
            <Select label="Status" name="status" value={user.status} options={STATUSES} onChange={(value) => void change('status', value)} hideLabel />
          ) : (
            user.status
          )}
        </dd>
      </dl>
      <ProblemMessage error={actionError} />
      {isAdmin && (
        <form class="card" onSubmit={adjustBalance} aria-label="Adjust balance">
          <h2>Adjust balance</h2>
          <Field label="Amount in cents (negative to debit)" name="delta" value={delta} onInput={setDelta} error={balanceError} required />
          <Field label="Reason" name="reason" value={reason} onInput={setReason} error={balanceError} required />
          <ProblemMessage error={balanceError} />
          <button type="submit">Apply</button>
        </form>
      )}
      {(isAdmin || props.me.id === user.id) && (
        <>
          <h2>Ledger</h2>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Change</th>
                  <th scope="col">Balance after</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {ledger.map((entry) => (
                  <tr key={entry.id}>
                    <td>{new Date(entry.created_at).toLocaleString()}</td>
                    <td class="number">{formatMoney(entry.delta, entry.currency)}</td>
                    <td class="number">{formatMoney(entry.balance_after, entry.currency)}</td>
                    <td>{entry.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      {isAdmin && (
        <button type="button" class="danger" onClick={() => void remove()}>
          Delete user
        </button>
      )}
    </section>
  );
}
