import type { Session } from './api';
import { formatTime } from './components';

/** Sessions with a sign-out button each; the session of this browser is marked, not offered. */
export function SessionsTable(props: { sessions: Session[]; onEnd: (session: Session) => void }) {
  return (
    <div class="table-wrap">
      <table class="cards">
        <thead>
          <tr>
            <th scope="col">Client</th>
            <th scope="col">Address</th>
            <th scope="col">Started</th>
            <th scope="col">Last used</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.sessions.map((session) => (
            <tr key={session.id}>
              <td data-label="Client">{session.user_agent ?? 'unknown'}</td>
              <td data-label="Address">{session.ip ?? '—'}</td>
              <td data-label="Started">{formatTime(session.created_at)}</td>
              <td data-label="Last used">{formatTime(session.last_used_at)}</td>
              <td data-label="Actions">
                {session.current ? (
                  'this browser'
                ) : (
                  <button type="button" class="secondary" onClick={() => props.onEnd(session)}>
                    Sign out
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The question asked before a session is ended. */
export const endSessionMessage = (session: Session) => <p>The session from {session.user_agent ?? 'an unknown client'} ends at once.</p>;
