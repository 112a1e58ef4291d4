import { useEffect, useState } from 'preact/hooks';
import { client, reply, type ApiError, type ShopEvent, type User } from '../api';
import { ProblemMessage, asApiError, formatTime } from '../components';
import { DataTable } from '../data-table';
import { ActorName, NameOf } from '../names';
import { Pager, usePages } from '../pages-list';
import type { AppConsent, LinkedIdentity } from '../sign-in-types';

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
 * 19), and, for admins, the accounts of other providers and the apps linked to it now (GET
 * /api/users/{id}/identities and /apps, read only: unlinking and withdrawing are the person's),
 * with their history from the audit log.
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
      {props.isAdmin && <LinkedNow user={user} />}
      {props.isAdmin && <LinkHistory user={user} />}
    </section>
  );
}

function LinkHistory(props: { user: User }) {
  const pages = usePages(`sign-in-links-${props.user.id}`, (paging) => client.GET('/api/events', { params: { query: { ...paging, subject_id: props.user.id, type: LINK_EVENTS } } }));
  return (
    <section aria-labelledby="link-history-title">
      <h3 id="link-history-title">Linked accounts and apps: history</h3>
      <p class="hint">What the audit log recorded: accounts linked and unlinked, apps allowed and withdrawn. Only the person unlinks or withdraws.</p>
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

/** The accounts of other providers and the apps linked to the user now. */
function LinkedNow(props: { user: User }) {
  const [identities, setIdentities] = useState<LinkedIdentity[]>();
  const [apps, setApps] = useState<AppConsent[]>();
  const [error, setError] = useState<ApiError>();
  useEffect(() => {
    const path = { params: { path: { id: props.user.id } } };
    Promise.all([reply(client.GET('/api/users/{id}/identities', path)), reply(client.GET('/api/users/{id}/apps', path))])
      .then(([linked, allowed]) => {
        setIdentities(linked.body.items);
        setApps(allowed.body.items);
      })
      .catch((caught) => setError(asApiError(caught)));
  }, [props.user.id]);
  return (
    <section aria-labelledby="linked-now-title">
      <h3 id="linked-now-title">Linked now</h3>
      <ProblemMessage error={error} />
      {identities?.length === 0 && <p>No account of another provider.</p>}
      {identities && identities.length > 0 && (
        <DataTable
          compact
          items={identities}
          columns={[
            { label: 'Provider', cell: (identity) => identity.provider_name },
            { label: 'Email there', wraps: true, cell: (identity) => identity.email ?? '—' },
            { label: 'Linked', cell: (identity) => formatTime(identity.linked_at) },
            { label: 'Last sign-in', cell: (identity) => formatTime(identity.last_used_at) },
          ]}
        />
      )}
      {apps?.length === 0 && <p>No app allowed.</p>}
      {apps && apps.length > 0 && (
        <DataTable
          compact
          items={apps.map((app) => ({ ...app, id: app.client_id }))}
          columns={[
            { label: 'App', cell: (app) => app.name },
            { label: 'Scopes', wraps: true, cell: (app) => app.scopes.join(', ') },
            { label: 'Allowed', cell: (app) => formatTime(app.granted_at) },
          ]}
        />
      )}
    </section>
  );
}
