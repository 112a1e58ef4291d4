import type { Session } from './api';
import { formatTime } from './components';
import { DataTable } from './data-table';
import { browserAndSystem } from './user-agent';

/** Sessions with a sign-out button each; the session of this browser is marked, not offered. */
export function SessionsTable(props: { sessions: Session[]; onEnd: (session: Session) => void }) {
  return (
    <DataTable
      items={props.sessions}
      columns={[
        {
          label: 'Client',
          // The full User-Agent stays at hand for the rare case where the name is not enough.
          cell: (session) => <span title={session.user_agent ?? undefined}>{browserAndSystem(session.user_agent)}</span>,
        },
        { label: 'Address', cell: (session) => session.ip ?? '—' },
        { label: 'Started', cell: (session) => formatTime(session.created_at) },
        { label: 'Last used', cell: (session) => formatTime(session.last_used_at) },
        {
          label: 'Actions',
          cell: (session) =>
            session.current ? (
              'this browser'
            ) : (
              <button type="button" class="secondary" onClick={() => props.onEnd(session)}>
                Sign out
              </button>
            ),
        },
      ]}
    />
  );
}

/** The question asked before a session is ended. */
export const endSessionMessage = (session: Session) => <p>The session from {browserAndSystem(session.user_agent)} ends at once.</p>;
