/** The channel every connection listens on; triggers notify `<topic>:<key>` on it (migration 0020). */
export const CHANGES_CHANNEL = 'changes';

/** A committed change of `key` under `topic`; `undefined`: anything may have changed unseen. */
export type ChangeListener = (key: string | undefined) => void;

/**
 * Changes other instances (and this one) committed, as PostgreSQL's LISTEN/NOTIFY delivers them.
 * Every connection of the pool listens from before its first statement, and PostgreSQL sends a
 * listening connection the notifications of every transaction that committed before a statement
 * of its own ends, ahead of that statement's result: whatever a request reads outside a
 * transaction, the changes committed before it began have reached this feed by the time its
 * rows do. Inside a transaction a connection is sent nothing until it ends, but what committed
 * before its BEGIN was sent while it sat idle or ended its previous transaction, ahead of that
 * answer: once BEGIN is answered, the changes committed before the write began are in this
 * feed. A connection that starts listening has missed what came before, so its start is
 * reported as a gap: listeners forget everything they built on earlier notifications.
 */
export class ChangeFeed {
  readonly #listeners = new Map<string, Set<ChangeListener>>();

  /** Calls `listener` with each changed key of `topic`, and with `undefined` after a gap. */
  subscribe(topic: string, listener: ChangeListener): () => void {
    let listeners = this.#listeners.get(topic);
    if (!listeners) this.#listeners.set(topic, (listeners = new Set()));
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** A notification's payload, `<topic>:<key>`, as it arrived on some connection. */
  deliver(payload: string): void {
    const colon = payload.indexOf(':');
    if (colon === -1) return;
    const listeners = this.#listeners.get(payload.slice(0, colon));
    if (!listeners) return;
    const key = payload.slice(colon + 1);
    for (const listener of listeners) listener(key);
  }

  /** Notifications may have been missed: every listener hears `undefined`. */
  gap(): void {
    for (const listeners of this.#listeners.values()) for (const listener of listeners) listener(undefined);
  }
}
