import { useEffect, useState } from 'preact/hooks';
import { api, formatMoney, type ApiError, type Page, type User } from '../api';
import { ProblemMessage, ROLES, STATUSES, Select, asApiError } from '../components';

export function UsersPage() {
  const [q, setQ] = useState('');
  const [role, setRole] = useState('');
  const [status, setStatus] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<Page<User>>();
  const [error, setError] = useState<ApiError>();

  const load = async (cursor?: string) => {
    const query = new URLSearchParams({ limit: '20', include_total: 'true' });
    if (q) query.set('q', q);
    if (role) query.set('role', role);
    if (status) query.set('status', status);
    if (cursor) query.set('cursor', cursor);
    try {
      setPage((await api<Page<User>>('GET', `/api/users?${query}`)).body);
      setError(undefined);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void load(), []);

  const search = (event: Event) => {
    event.preventDefault();
    setCursors([]);
    void load();
  };
  const next = () => {
    if (!page?.next_cursor) return;
    setCursors([...cursors, page.next_cursor]);
    void load(page.next_cursor);
  };
  const previous = () => {
    const rest = cursors.slice(0, -1);
    setCursors(rest);
    void load(rest.at(-1));
  };

  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <form class="filters" onSubmit={search} role="search">
        <label>
          Search <input name="q" type="search" value={q} onInput={(event) => setQ((event.target as HTMLInputElement).value)} />
        </label>
        <Select label="Role" name="role" value={role} options={ROLES} onChange={setRole} anyLabel="any" />
        <Select label="Status" name="status" value={status} options={STATUSES} onChange={setStatus} anyLabel="any" />
        <button type="submit">Search</button>
      </form>
      <ProblemMessage error={error} />
      {page && (
        <>
          <p class="count">{page.total} users</p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Status</th>
                  <th scope="col">Balance</th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((user) => (
                  <tr key={user.id}>
                    <td>
                      <a href={`#/users/${user.id}`}>{user.name}</a>
                    </td>
                    <td>{user.email}</td>
                    <td>{user.role}</td>
                    <td>{user.status}</td>
                    <td class="number">{formatMoney(user.balance, user.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="pager">
            <button type="button" onClick={previous} disabled={cursors.length === 0}>
              Previous page
            </button>
            <button type="button" onClick={next} disabled={!page.next_cursor}>
              Next page
            </button>
          </div>
        </>
      )}
    </section>
  );
}
