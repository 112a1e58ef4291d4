import { client, type ShopEvent, type User } from '../api';
import { formatTime } from '../components';
import { DataTable } from '../data-table';
import { ActorName, NameOf } from '../names';
import { Pager, usePages } from '../pages-list';

/** The audit events of a person's linked accounts and app consents (API.md sections 18 and 20). */
const LINK_EVENTS = 'user.identity_linked,user.identity_unlinked,user.app_authorized,user.app_revoked';

const idIn = (event: ShopEvent, key: string) => (typeof event.data[key] === 'string' ? (event.data[key] as string) : undefined);

/** One line of that history: what changed and with which provider or app, named when it still exists. */
function WhatHappened(props: { event: ShopEvent }) {
  const { event } = props;
  const providerId = idIn(event, 'provider_id');
  const clientId = idIn(event, 'client_id');
  const scopes = Array.isArray(event.data.scopes) ? ` (${(event.data.scopes as string[]).join(', ')})` : '';
  if (event.type === 'user.identity_linked' || event.type === 'user.identity_unlinked') {
    return (
      <span>
        {event.type === 'user.identity_linked' ? 'Linked an account of ' : 'Unlinked the account of '}
        {providerId ? <NameOf kind="identity_provider" id={providerId} /> : 'a provider'}
      </span>
    );
  }
  return (
    <span>
      {event.type === 'user.app_authorized' ? 'Allowed ' : 'Withdrew the consent of '}
      {clientId ? <NameOf kind="client" id={clientId} /> : 'an app'}
      {event.type === 'user.app_authorized' ? scopes : ''}
    </span>
  );
}

/**
 * How a user signs in, as staff may see it: whether the account has a password (API.md section
 * 19), and, for admins, the history of its linked accounts and app consents from the audit log.
 * The API lists a person's current linked accounts and consents to that person only (their
 * profile), so this page shows what happened rather than what is linked now.
 */
export function UserSignIn(props: { user: User; isAdmin: boolean }) {
  const { user } = props;
  return (
    <section aria-labelledby="user-sign-in-title">
      <h2 id="user-sign-in-title">Sign-in</h2>
      <dl class="facts">
        <dt>Password</dt>
        <dd data-testid="has-password">{user.has_password ? 'set' : 'none: signs in by email code, a passkey or a linked account (a password reset sets one)'}</dd>
      </dl>
      {props.isAdmin && <LinkHistory user={user} />}
    </section>
  );
}

function LinkHistory(props: { user: User }) {
  const pages = usePages(`sign-in-links-${props.user.id}`, (paging) => client.GET('/api/events', { params: { query: { ...paging, subject_id: props.user.id, type: LINK_EVENTS } } }));
  return (
    <section aria-labelledby="link-history-title">
      <h3 id="link-history-title">Linked accounts and apps: history</h3>
      <p class="hint">Only the person sees which accounts and apps are linked now (on their profile); this is what the audit log recorded.</p>
      {pages.page?.items.length === 0 && <p>No account of another provider was ever linked, and no app was ever allowed.</p>}
      <DataTable
        compact
        items={pages.page?.items ?? []}
        columns={[
          { label: 'When', cell: (event) => formatTime(event.occurred_at) },
          { label: 'What', cell: (event) => <WhatHappened event={event} /> },
          { label: 'Who', cell: (event) => <ActorName id={event.actor_id} type={event.actor_type} /> },
        ]}
      />
      <Pager pages={pages} noun="event" label="Linked accounts and apps: history" />
    </section>
  );
}
