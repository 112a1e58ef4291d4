import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiError, type Page } from './api';
import { ProblemMessage, asApiError } from './components';

/**
 * A cursor-paged list of the API: `path` is the list's URL with its filters (no cursor); a new
 * path starts again at the first page. Replies that arrive after a newer request are dropped,
 * so a slow first search never overwrites a faster second one. A new `restartOn` value starts
 * again too.
 */
export function usePages<Item>(path: string | undefined, options: { limit?: number; restartOn?: unknown } = {}) {
  const [earlierCursors, setEarlierCursors] = useState<(string | undefined)[]>([]);
  const [cursor, setCursor] = useState<string>();
  const [page, setPage] = useState<Page<Item>>();
  const [error, setError] = useState<ApiError>();
  const latest = useRef(0);

  const load = async (at: string | undefined) => {
    if (!path) return;
    const request = (latest.current += 1);
    const separator = path.includes('?') ? '&' : '?';
    const query = new URLSearchParams({ limit: String(options.limit ?? 20), include_total: 'true' });
    if (at) query.set('cursor', at);
    try {
      const reply = await api<Page<Item>>('GET', `${path}${separator}${query}`);
      if (request !== latest.current) return;
      setPage(reply.body);
      setCursor(at);
      setError(undefined);
    } catch (caught) {
      if (request === latest.current) setError(asApiError(caught));
    }
  };
  const restart = () => {
    setEarlierCursors([]);
    void load(undefined);
  };
  useEffect(() => {
    setPage(undefined);
    restart();
  }, [path]);
  // A change elsewhere on the page (the record's version, say) can add rows: show the newest.
  const shown = useRef(options.restartOn);
  useEffect(() => {
    if (shown.current === options.restartOn) return;
    shown.current = options.restartOn;
    restart();
  }, [options.restartOn]);

  return {
    page,
    error,
    reload: () => load(cursor),
    restart,
    replace: (update: (items: Item[]) => Item[]) => page && setPage({ ...page, items: update(page.items) }),
    next: () => {
      if (!page?.next_cursor) return;
      setEarlierCursors([...earlierCursors, cursor]);
      void load(page.next_cursor);
    },
    previous: () => {
      setEarlierCursors(earlierCursors.slice(0, -1));
      void load(earlierCursors.at(-1));
    },
    hasPrevious: earlierCursors.length > 0,
  };
}

export const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** The count and the previous/next buttons of a paged list. */
export function Pager(props: { pages: ReturnType<typeof usePages<any>>; noun: string; nouns?: string; label: string }) {
  const { pages } = props;
  return (
    <>
      <ProblemMessage error={pages.error} />
      <div class="pager" role="group" aria-label={`${props.label} pages`}>
        {pages.page?.total !== undefined && pages.page.total !== null && <span class="count">{plural(pages.page.total, props.noun, props.nouns)}</span>}
        <button type="button" class="secondary" onClick={pages.previous} disabled={!pages.hasPrevious}>
          Previous page
        </button>
        <button type="button" class="secondary" onClick={pages.next} disabled={!pages.page?.next_cursor}>
          Next page
        </button>
      </div>
    </>
  );
}
