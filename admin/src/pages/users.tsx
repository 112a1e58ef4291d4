import { useState } from 'preact/hooks';
import { client } from '../api';
import type { operations } from '../../../client/api-types';
import { ROLES, STATUSES, Select, displayName, formatTime } from '../components';
import { DataTable } from '../data-table';
import { formatMoney } from '../money';
import { Pager, usePages } from '../pages-list';

type UserFilters = Pick<NonNullable<operations['listUsers']['parameters']['query']>, 'q' | 'role' | 'status'>;

export function UsersPage() {
  const [q, setQ] = useState('');
  const [role, setRole] = useState('');
  const [status, setStatus] = useState('');
  const [filters, setFilters] = useState<UserFilters>({});
  const pages = usePages(JSON.stringify(filters), (paging) => client.GET('/api/users', { params: { query: { ...filters, ...paging } } }));

  const search = (event: Event) => {
    event.preventDefault();
    const next: UserFilters = { ...(q ? { q } : {}), ...(role ? { role: role as UserFilters['role'] } : {}), ...(status ? { status: status as UserFilters['status'] } : {}) };
    if (JSON.stringify(next) === JSON.stringify(filters)) pages.restart();
    else setFilters(next);
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
        <DataTable
          items={pages.page.items}
          columns={[
            { label: 'Name', cell: (user) => <a href={`#/users/${user.id}`}>{displayName(user)}</a> },
            // A long address wraps inside its cell rather than pushing the page sideways on a phone (#56).
            { label: 'Email', wraps: true, cell: (user) => <>{user.email} {!user.email_verified && <span class="badge">not verified</span>}</> },
            { label: 'Role', cell: (user) => user.role },
            { label: 'Status', cell: (user) => user.status },
            { label: 'Balance', numeric: true, cell: (user) => formatMoney(user.balance, user.currency) },
            { label: 'Created', cell: (user) => formatTime(user.created_at) },
          ]}
        />
      )}
      <Pager pages={pages} noun="user" label="Users" />
    </section>
  );
}
