import { useEffect, useRef, useState } from 'preact/hooks';
import { reply, type ApiError } from './api';
import { ProblemMessage, asApiError } from './components';

/** What usePages adds to a list's own filters. */
export interface Paging {
  limit: number;
  include_total: true;
  cursor?: string;
}

/** What usePages needs of a list's reply; the compiler checks each list operation's reply against it. */
interface Page<Item> {
  items: Item[];
  next_cursor: string | null;
  total?: number;
}

/**
 * A cursor-paged list of the API: `fetchPage` calls the list (through the typed client) with its
 * filters and the paging given; `key` names the list and its filters, and a new key starts again
 * at the first page. Replies that arrive after a newer request are dropped, so a slow first search
 * never overwrites a faster second one. A new `restartOn` value starts again too.
 */
export function usePages<Item>(
  key: string | undefined,
  fetchPage: (paging: Paging) => Promise<{ data?: Page<Item>; error?: unknown; response: Response }>,
  options: { limit?: number; restartOn?: unknown } = {},
) {
  const [earlierCursors, setEarlierCursors] = useState<(string | undefined)[]>([]);
  const [cursor, setCursor] = useState<string>();
  const [page, setPage] = useState<Page<Item>>();
  const [error, setError] = useState<ApiError>();
  const latest = useRef(0);

  const load = async (at: string | undefined) => {
    if (key === undefined) return;
    const request = (latest.current += 1);
    try {
      const { body } = await reply(fetchPage({ limit: options.limit ?? 20, include_total: true, ...(at ? { cursor: at } : {}) }));
      if (request !== latest.current) return;
      setPage(body);
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
  }, [key]);
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
    // From the page as it is when the update runs, not as this render saw it: a reload that lands
    // first (after a create, say) must not be overwritten by the older page.
    replace: (update: (items: Item[]) => Item[]) => setPage((current) => current && { ...current, items: update(current.items) }),
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
