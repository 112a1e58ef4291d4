import { useState } from 'preact/hooks';
import type { User } from '../api';
import { ROLES, STATUSES, Select, displayName, formatTime } from '../components';
import { formatMoney } from '../money';
import { Pager, usePages } from '../pages-list';

export function UsersPage() {
  const [q, setQ] = useState('');
  const [role, setRole] = useState('');
  const [status, setStatus] = useState('');
  const [path, setPath] = useState('/api/users');
  const pages = usePages<User>(path);

  const search = (event: Event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    if (q) query.set('q', q);
    if (role) query.set('role', role);
    if (status) query.set('status', status);
    const next = query.size > 0 ? `/api/users?${query}` : '/api/users';
    if (next === path) pages.restart();
    else setPath(next);
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
      {pages.page && (
        <div class="table-wrap">
          <table class="cards">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Balance</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {pages.page.items.map((user) => (
                <tr key={user.id}>
                  <td data-label="Name">
                    <a href={`#/users/${user.id}`}>{displayName(user)}</a>
                  </td>
                  <td data-label="Email">
                    {user.email} {!user.email_verified && <span class="badge">not verified</span>}
                  </td>
                  <td data-label="Role">{user.role}</td>
                  <td data-label="Status">{user.status}</td>
                  <td data-label="Balance" class="number">
                    {formatMoney(user.balance, user.currency)}
                  </td>
                  <td data-label="Created">{formatTime(user.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} noun="user" label="Users" />
    </section>
  );
}
