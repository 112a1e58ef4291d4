import type { ChangeFeed } from '../db/change-feed.js';
import type { CallerColumns, CallerKey } from './caller-query.js';

/** Past this many, the instance starts over: callers in use come back with their next read. */
const MOST_KNOWN = 50_000;
/** A known caller is read again after this long even if nothing notified a change: a bound, not a rule. */
const LONGEST_KNOWN_MS = 5 * 60_000;
/** How often a session or client in use is noted as used (`last_used_at`), as the caller check does. */
const TOUCH_EVERY_MS = 60_000;

/** A caller as its row was read, live and active then, and when this instance must look again. */
export interface KnownCaller {
  readonly row: CallerColumns;
  /** `performance.now()` when the row was read. */
  readonly readAt: number;
  /** Past this the row is read again: the credential's own end, or LONGEST_KNOWN_MS. */
  readonly validUntil: number;
  /** When its use is next noted; moved forward each time. */
  touchDueAt: number;
  /** Set when a change of its user or client is heard. */
  forgotten: boolean;
  /** The instance's generation it was kept in: a gap of the feed starts a new one. */
  readonly generation: number;
}

/**
 * The callers this instance admitted, so that a read of theirs needs no caller row beside its data.
 * A caller is forgotten as soon as the change feed says its user or client changed (a trigger
 * notifies every change of what the caller check reads, migration 0020), and everything is
 * forgotten at a gap of the feed. A read that used a known caller asks `isCurrent` once its rows
 * are in: PostgreSQL hands a connection the notifications of every transaction that committed
 * before the read's statement ended, ahead of its rows (change-feed.ts), so a change committed
 * before the request began has made the caller unknown by then, and the request reads again
 * with the caller's row. Time alone (a session's end, a step-up's age) is worked out from the
 * row's own figures on this instance's monotonic clock.
 *
 * Callers are kept under their credentials' key object, which the admission gives out once per
 * access token or secret (authenticate.ts), so a lookup by an access token hashes no string.
 */
export class KnownCallers {
  readonly #known = new WeakMap<CallerKey, KnownCaller>();
  /** The known callers of each user or client, to forget them together. */
  readonly #callersOf = new Map<string, Set<KnownCaller>>();
  #count = 0;
  #generation = 0;
  /** Moves on every change heard, so a row read while one arrived is not kept. */
  #changes = 0;

  constructor(feed: ChangeFeed) {
    feed.subscribe('caller', (id) => (id === undefined ? this.forgetAll() : this.forget(id)));
  }

  /** The caller of these credentials, known and still current; undefined: read its row. */
  get(key: CallerKey, now = performance.now()): KnownCaller | undefined {
    const known = this.#known.get(key);
    if (!known || !this.isCurrent(known)) return undefined;
    if (now >= known.validUntil) {
      this.#drop(known);
      return undefined;
    }
    return known;
  }

  /** Whether nothing changed `known` since it was taken from here. */
  isCurrent(known: KnownCaller): boolean {
    return !known.forgotten && known.generation === this.#generation;
  }

  /** Taken before a caller's row is read; `remember` keeps the row only if no change came since. */
  mark(): number {
    return this.#changes;
  }

  /** Keeps a caller's row read at `readAt`, if it was live and active and nothing changed since `mark`. */
  remember(key: CallerKey, row: CallerColumns, mark: number, readAt = performance.now()): void {
    if (mark !== this.#changes || !row.caller__live || row.caller__status !== 'active') return;
    const expiresIn = row.caller__expires_in === null ? Infinity : row.caller__expires_in * 1000;
    const validUntil = readAt + Math.min(expiresIn, LONGEST_KNOWN_MS);
    // Noted as used now if it was stale (the read notes it); else when its last use turns a minute old.
    const touchDueAt = row.caller__stale || row.caller__idle_for === null ? readAt + TOUCH_EVERY_MS : readAt + TOUCH_EVERY_MS - row.caller__idle_for * 1000;
    // Callers whose key is gone (a token no longer in use) stay counted until their time is up.
    if (this.#count >= MOST_KNOWN) this.#dropExpired(readAt);
    if (this.#count >= MOST_KNOWN) this.forgetAll();
    const previous = this.#known.get(key);
    if (previous) this.#drop(previous);
    const known: KnownCaller = { row, readAt, validUntil, touchDueAt, forgotten: false, generation: this.#generation };
    this.#known.set(key, known);
    let callers = this.#callersOf.get(row.caller__id);
    if (!callers) this.#callersOf.set(row.caller__id, (callers = new Set()));
    callers.add(known);
    this.#count++;
  }

  /** Every caller of a user or client: its role, status, sessions, factors, scopes or secrets changed. */
  forget(id: string): void {
    this.#changes++;
    const callers = this.#callersOf.get(id);
    if (!callers) return;
    this.#callersOf.delete(id);
    for (const known of callers) known.forgotten = true;
    this.#count -= callers.size;
  }

  /** The caller of these credentials, which the database has just refused: it is read again next time. */
  forgetKey(key: CallerKey): void {
    const known = this.#known.get(key);
    if (known) this.#drop(known);
  }

  forgetAll(): void {
    this.#changes++;
    this.#generation++;
    this.#callersOf.clear();
    this.#count = 0;
  }

  /** Whether `key` has a caller kept, current or not: its key is worth keeping. */
  has(key: CallerKey): boolean {
    return this.#known.has(key);
  }

  #dropExpired(now: number): void {
    for (const callers of this.#callersOf.values()) for (const known of callers) if (now >= known.validUntil) this.#drop(known);
  }

  #drop(known: KnownCaller): void {
    if (known.forgotten || known.generation !== this.#generation) return;
    known.forgotten = true;
    const callers = this.#callersOf.get(known.row.caller__id);
    if (callers?.delete(known)) this.#count--;
    if (callers?.size === 0) this.#callersOf.delete(known.row.caller__id);
  }
}

/** The row as it stands now: the second factor's age grown by the time since it was read (rounded up). */
export function rowNow(known: KnownCaller, now = performance.now()): CallerColumns {
  const age = known.row.caller__mfa_age;
  if (age === null) return known.row;
  return { ...known.row, caller__mfa_age: age + Math.ceil((now - known.readAt) / 1000) };
}

/** Whether the caller's use is due to be noted; if so, the next note is a minute away. */
export function takeTouchDue(known: KnownCaller, now = performance.now()): boolean {
  if (now < known.touchDueAt) return false;
  known.touchDueAt = now + TOUCH_EVERY_MS;
  return true;
}
