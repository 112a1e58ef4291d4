import { useEffect, useState } from 'preact/hooks';
import { ApiError, client, reply } from './api';
import { displayName, formatTime } from './components';

/** What a record is called where the API gives only its id: a user's name and email, a client's name, a variant's SKU. */
interface Named {
  label: string;
  href?: string;
}
export type NamedKind = 'user' | 'client' | 'variant' | 'reservation' | 'webhook' | 'signing_key' | 'import' | 'location' | 'identity_provider';
/** A movement or ledger entry names its actor without saying whether a user or an API client. */
type LookedUp = NamedKind | 'actor';

// One lookup per record while signed in: an audit log page names the same few people many
// times. Forgotten on sign-out, so the next person never sees the last one's lookups.
const known = new Map<string, Promise<Named>>();
export const forgetNames = () => known.clear();

/** A lookup that did not end in a name or a definite no (404, 403) is tried again next time. */
class NotNow extends Error {}

const unnamed = (_kind: NamedKind, id: string, what: string): Named => ({ label: `${what} ${id.slice(0, 8)}`, href: `#/events?subject_id=${id}` });

async function lookUp(kind: LookedUp, id: string): Promise<Named> {
  if (kind === 'actor') {
    const asUser = await lookUp('user', id);
    if (asUser.href?.startsWith('#/users/')) return asUser;
    const asClient = await lookUp('client', id);
    return asClient.href === '#/clients' ? asClient : unnamed('user', id, 'user or API client');
  }
  try {
    if (kind === 'user') {
      const { body } = await reply(client.GET('/api/users/{id}', { params: { path: { id } } }));
      return { label: body.name.trim() ? `${displayName(body)} (${body.email})` : body.email, href: `#/users/${id}` };
    }
    if (kind === 'client') {
      const { body } = await reply(client.GET('/api/clients/{id}', { params: { path: { id } } }));
      return { label: `${body.name} (API client)`, href: '#/clients' };
    }
    if (kind === 'variant') {
      const { body } = await reply(client.GET('/api/variants/{id}', { params: { path: { id } } }));
      return { label: body.sku, href: `#/events?subject_id=${id}` };
    }
    if (kind === 'location') {
      const { body } = await reply(client.GET('/api/locations/{id}', { params: { path: { id } } }));
      return { label: `${body.name} (${body.code})`, href: `#/events?subject_id=${id}` };
    }
    // #56: a reservation by its reference, a webhook by its URL, an import by when it started.
    if (kind === 'reservation') {
      const { body } = await reply(client.GET('/api/reservations/{id}', { params: { path: { id } } }));
      return { label: body.reference ? `reservation ${body.reference}` : `reservation of ${formatTime(body.created_at)}`, href: `#/events?subject_id=${id}` };
    }
    if (kind === 'webhook') {
      const { body } = await reply(client.GET('/api/webhooks/{id}', { params: { path: { id } } }));
      return { label: `webhook to ${body.url}`, href: '#/webhooks' };
    }
    if (kind === 'import') {
      const { body } = await reply(client.GET('/api/variants/imports/{id}', { params: { path: { id } } }));
      return { label: `${body.format.toUpperCase()} import of ${formatTime(body.created_at)}`, href: '#/imports' };
    }
    if (kind === 'identity_provider') {
      const { body } = await reply(client.GET('/api/identity-providers/{id}', { params: { path: { id } } }));
      return { label: `${body.name} (identity provider)`, href: `#/events?subject_id=${id}` };
    }
  } catch (caught) {
    // A deleted record (404), or one the reader may not see (403), keeps its kind and id.
    if (!(caught instanceof ApiError) || (caught.problem.status !== 404 && caught.problem.status !== 403)) throw new NotNow();
    const gone = caught.problem.status === 404;
    return unnamed(kind, id, gone ? `deleted ${kind === 'client' ? 'API client' : kind}` : kind === 'client' ? 'API client' : kind);
  }
  return unnamed(kind, id, kind.replace('_', ' '));
}

/** A record by its name, linked to its page; its kind and short id until the name is in. */
export function NameOf(props: { kind: LookedUp; id: string }) {
  const [named, setNamed] = useState<Named>();
  useEffect(() => {
    const key = `${props.kind}:${props.id}`;
    let lookup = known.get(key);
    if (!lookup) {
      lookup = lookUp(props.kind, props.id);
      known.set(key, lookup);
      // A failed lookup (no reply) is tried again next time.
      lookup.catch(() => known.delete(key));
    }
    let current = true;
    lookup.then((found) => current && setNamed(found)).catch(() => undefined);
    return () => {
      current = false;
    };
  }, [props.kind, props.id]);
  const label = named?.label ?? `${props.kind === 'actor' ? 'user' : props.kind.replace('_', ' ')} ${props.id.slice(0, 8)}`;
  return named?.href ? <a href={named.href}>{label}</a> : <span>{label}</span>;
}

/** Who made a change: a user or an API client (looked up as both when the type is not given), or the service itself. */
export function ActorName(props: { id: string | null; type?: 'user' | 'client' | null }) {
  if (!props.id) return <span>the service</span>;
  return <NameOf kind={props.type ?? 'actor'} id={props.id} />;
}

/**
 * The id of the user or API client a "who" filter names: an id as it is, an email by the users
 * search, a client by its name. Undefined when none matches.
 */
export async function actorIdOf(who: string): Promise<string | undefined> {
  const text = who.trim();
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text)) return text;
  if (text.includes('@')) {
    const { body } = await reply(client.GET('/api/users', { params: { query: { q: text, limit: 100 } } }));
    return body.items.find((user) => user.email.toLowerCase() === text.toLowerCase())?.id;
  }
  let cursor: string | undefined;
  do {
    const { body } = await reply(client.GET('/api/clients', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }));
    const found = body.items.find((apiClient) => apiClient.name.toLowerCase() === text.toLowerCase());
    if (found) return found.id;
    cursor = body.next_cursor ?? undefined;
  } while (cursor);
  return undefined;
}
