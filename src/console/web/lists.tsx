// Lists the server pages by cursor: the pager, the hooks that load one page (with or without a
// filter form) and a gallery of pictures.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { get, query } from "./api.js";
import { useLoad } from "./ui.js";

/** Keyset paging: the cursors of the pages seen so far, and the next one. */
export function usePager() {
  const [stack, setStack] = useState<string[]>([]);
  const after = stack[stack.length - 1];
  return {
    after,
    page: stack.length + 1,
    next: (cursor: string) => setStack((s) => [...s, cursor]),
    prev: () => setStack((s) => s.slice(0, -1)),
    reset: () => setStack([]),
  };
}

export function Pager({ pager, nextCursor }: { pager: ReturnType<typeof usePager>; nextCursor: string | null }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={pager.page === 1} onClick={pager.prev}>
        Previous
      </button>
      <span>Page {pager.page}</span>
      <button type="button" disabled={nextCursor === null} onClick={() => nextCursor && pager.next(nextCursor)}>
        Next
      </button>
    </nav>
  );
}

/**
 * One page of a list paged by cursor: `load` fetches up to `size` rows after the cursor it is
 * given, again when a dependency changes; `next` is the cursor of the next page (the last row's,
 * as `cursorOf` reads it), null on the last page.
 */
export function usePaged<T>(
  load: (after: string | undefined) => Promise<T[]>,
  deps: unknown[],
  size: number,
  cursorOf: (row: T) => unknown = (row) => (row as { id?: unknown }).id,
) {
  const pager = usePager();
  const rows = useLoad(() => load(pager.after), [...deps, pager.after]);
  const last = rows.data?.[rows.data.length - 1];
  const next = rows.data && rows.data.length === size && last !== undefined ? String(cursorOf(last)) : null;
  return { pager, rows, next };
}

/** A list the server pages by id: `path` with the filters, `size` rows a page. */
export function usePagedList<T extends { id: number }>(path: string, filters: Record<string, string>, size: number) {
  return usePaged<T>(
    (after) => get<T[]>(`${path}${query({ ...filters, after, limit: size })}`),
    [path, query(filters)],
    size,
  );
}

/**
 * A paged list with a filter form: what is typed (`form`, trimmed) is applied by `apply`, which
 * goes back to the first page.
 */
export function useFilteredList<T extends { id: number }, F extends Record<string, string>>(
  path: string,
  initial: F,
  size: number,
) {
  const [draft, setDraft] = useState(initial);
  const [filters, setFilters] = useState(initial);
  const list = usePagedList<T>(path, filters, size);
  const set = (k: keyof F) => (e: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [k]: e.currentTarget.value.trim() });
  const apply = () => {
    list.pager.reset();
    setFilters(draft);
  };
  return { ...list, form: { values: draft, set }, apply };
}

/** The pictures of a paged list, with its loading and empty lines and its pager. */
export function Gallery<T>({
  label,
  rows,
  empty,
  keyOf,
  item,
  pager,
  next,
}: {
  label: string;
  rows: T[] | null;
  empty: string;
  keyOf: (row: T) => string | number;
  item: (row: T) => ComponentChildren;
  pager: ReturnType<typeof usePager>;
  next: string | null;
}) {
  return (
    <>
      {rows === null ? <p>Loading…</p> : rows.length === 0 ? <p>{empty}</p> : null}
      <ul class="gallery" aria-label={label}>
        {(rows ?? []).map((row) => (
          <li key={keyOf(row)}>{item(row)}</li>
        ))}
      </ul>
      <Pager pager={pager} nextCursor={next} />
    </>
  );
}
