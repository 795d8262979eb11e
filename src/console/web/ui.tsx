// The small parts every page uses: labelled fields, tables that scroll inside themselves,
// notices read out to screen readers, a loader hook and the formatters.
import type { TSchema } from "@sinclair/typebox";
import { Errors } from "@sinclair/typebox/errors";
import type { ComponentChildren, JSX } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "./api.js";

let nextId = 0;
const newId = () => `f${++nextId}`;

export function useFieldId(): string {
  const [id] = useState(newId);
  return id;
}

export type InputProps = JSX.InputHTMLAttributes<HTMLInputElement> & { label: string; hint?: string };

/** An input with its visible label. */
export function Input({ label, hint, ...rest }: InputProps) {
  const id = useFieldId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} {...rest} />
      {hint ? <small>{hint}</small> : null}
    </div>
  );
}

export type SelectProps = JSX.SelectHTMLAttributes<HTMLSelectElement> & {
  label: string;
  options: Array<[string, string]>;
};

export function Select({ label, options, ...rest }: SelectProps) {
  const id = useFieldId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} {...rest}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

export type AreaProps = JSX.TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string };

export function TextArea({ label, ...rest }: AreaProps) {
  const id = useFieldId();
  return (
    <div class="field wide">
      <label for={id}>{label}</label>
      <textarea id={id} {...rest} />
    </div>
  );
}

export function Notice({ error, ok }: { error?: string | null; ok?: string | null }) {
  return (
    <p class={error ? "notice error" : ok ? "notice ok" : "notice"} role={error ? "alert" : "status"}>
      {error ?? ok ?? ""}
    </p>
  );
}

export interface Column<T> {
  title: string;
  cell: (row: T) => ComponentChildren;
  numeric?: boolean;
}

export function Table<T>({
  columns,
  rows,
  caption,
  empty,
}: {
  columns: Column<T>[];
  rows: T[] | null;
  caption: string;
  empty?: string;
}) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.title} scope="col" class={c.numeric ? "num" : undefined}>
                {c.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows === null ? (
            <tr>
              <td colSpan={columns.length}>Loading…</td>
            </tr>
          ) : rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length}>{empty ?? "Nothing here yet."}</td>
            </tr>
          ) : (
            rows.map((row, i) => (
              <tr key={i}>
                {columns.map((c) => (
                  <td key={c.title} class={c.numeric ? "num" : undefined}>
                    {c.cell(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

/** Loads on mount and whenever a dependency changes; `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(null);
      },
      (e: unknown) => {
        if (live) setError(messageOf(e));
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, reload };
}

/** Runs a state change, keeping its error or success line. */
export function useAction() {
  const [error, setError] = useState<string | null>(null);
  const [ok, setOk] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    setOk(null);
    try {
      const done = await work();
      if (typeof done === "string") setOk(done);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return { error, ok, busy, run, setError };
}

export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.field ? `${e.message} (${e.field})` : e.message;
  return e instanceof Error ? e.message : String(e);
}

/** The first problem of a form's value against its schema, as "field: message", or null. */
export function check(schema: TSchema, value: unknown): string | null {
  const first = Errors(schema, value).First();
  if (!first) return null;
  const field = first.path.replace(/^\//, "").replace(/\//g, ".");
  return field ? `${field}: ${first.message}` : first.message;
}

export const fmtQuota = (n: number | null | undefined) =>
  n === null || n === undefined ? "—" : n.toLocaleString("en");
export const fmtTime = (unixSeconds: number | null | undefined) =>
  !unixSeconds ? "—" : new Date(unixSeconds * 1000).toISOString().replace("T", " ").slice(0, 19);
export const fmtPercent = (x: number | null | undefined) =>
  x === null || x === undefined ? "—" : `${Math.round(x * 100)}%`;

export function Page({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  useEffect(() => {
    document.title = `${title} · media-gateway console`;
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {title}
        </h1>
        {actions}
      </header>
      {children}
    </section>
  );
}

export interface Stat {
  label: string;
  value: ComponentChildren;
  testId?: string;
}

/** A row of figures, each under its label. */
export function Stats({ items }: { items: Stat[] }) {
  return (
    <div class="stats">
      {items.map((s) => (
        <div key={s.label} class="stat">
          <span>{s.label}</span>
          <strong data-testid={s.testId}>{s.value}</strong>
        </div>
      ))}
    </div>
  );
}

export function Card({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="card">
      <h2>{title}</h2>
      {children}
    </section>
  );
}
