// Forms described as data: a short list of fields (label, name, input attributes) rendered over
// one record of strings, with the submit row and the notice most forms end with. Pages keep only
// what is their own: the fields, the checks and the call.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { type AreaProps, Card, Input, type InputProps, Notice, Select, type SelectProps, TextArea } from "./ui.js";

/** What a field's change handler reads: inputs, selects and text areas alike. */
type Change = (e: { currentTarget: { value: string } }) => void;

/** Gives the change handler of the value `key`. */
export type Setter<K> = (key: K) => Change;

/** One field: an input unless `kind` says a select or a text area; `field` names the value it edits. */
export type Field<K extends string> =
  | ({ field: K; kind?: "input" } & Omit<InputProps, "value" | "onInput">)
  | ({ field: K; kind: "select" } & Omit<SelectProps, "value" | "onChange">)
  | ({ field: K; kind: "area" } & Omit<AreaProps, "value" | "onInput">);

/** A form's values, all strings as typed, and the handler that changes one of them. */
export function useForm<F extends Record<string, string>>(initial: F) {
  const [values, setValues] = useState(initial);
  const set: Setter<keyof F> = (key) => (e) => {
    const value = e.currentTarget.value;
    setValues((v) => ({ ...v, [key]: value }));
  };
  return { values, set, setValues, reset: () => setValues(initial) };
}

/** The values a form shows and the handler that changes them, as `useForm` gives them. */
export interface FormState<K extends string> {
  values: Record<K, string>;
  set: Setter<K>;
}

/** What a form shows of its action: `busy` disables the submit, the notice shows `error` or `ok`. */
export interface ActionState {
  busy?: boolean;
  error: string | null;
  ok?: string | null;
}

/** A form as data: its fields and the submit button's text. */
export interface FormSpec<K extends string> {
  fields: Array<Field<K>>;
  submit: ComponentChildren;
}

export function Fields<K extends string>({ fields, form }: { fields: Array<Field<K>>; form: FormState<K> }) {
  const { values, set } = form;
  return (
    <>
      {fields.map((f) => {
        if (f.kind === "select") {
          const { field, kind: _, ...rest } = f;
          return <Select key={field} {...rest} value={values[field]} onChange={set(field)} />;
        }
        if (f.kind === "area") {
          const { field, kind: _, ...rest } = f;
          return <TextArea key={field} {...rest} value={values[field]} onInput={set(field)} />;
        }
        const { field, kind: _, ...rest } = f;
        return <Input key={field} {...rest} value={values[field]} onInput={set(field)} />;
      })}
    </>
  );
}

export interface FormProps<K extends string> extends FormSpec<K> {
  form: FormState<K>;
  action?: ActionState;
  /** Called on submit, the browser's own submit prevented. */
  onSubmit: () => void;
  /** The form's layout class: "form-grid" unless told. */
  layout?: string;
  /** The submit button is the primary one, unless told. */
  primary?: boolean;
  /** In a "stack" form the button stands alone, not in a row of actions. */
  alone?: boolean;
  /** The form's accessible name, where it has one. */
  label?: string;
  /** More buttons in the row, after the submit. */
  buttons?: ComponentChildren;
  /** The action's notice last inside the form (a card's form has it under the form instead). */
  notice?: boolean;
  /** What comes last inside the form, after the submit. */
  children?: ComponentChildren;
}

export function Form<K extends string>({
  fields,
  submit,
  form,
  action,
  onSubmit,
  layout = "form-grid",
  primary = true,
  alone = false,
  label,
  buttons,
  notice = false,
  children,
}: FormProps<K>) {
  const button = (
    <button type="submit" class={primary ? "primary" : undefined} disabled={action?.busy}>
      {submit}
    </button>
  );
  return (
    <form
      class={layout}
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <Fields fields={fields} form={form} />
      {alone ? (
        button
      ) : (
        <div class="actions">
          {button}
          {buttons}
        </div>
      )}
      {children}
      {notice && action ? <Notice error={action.error} ok={action.ok} /> : null}
    </form>
  );
}

/** A card holding one form, the notice of its action under it, and `after` below that. */
export function FormCard<K extends string>({
  title,
  after,
  ...form
}: FormProps<K> & { title: string; action: ActionState; after?: ComponentChildren }) {
  return (
    <Card title={title}>
      <Form {...form} />
      <Notice error={form.action.error} ok={form.action.ok} />
      {after}
    </Card>
  );
}

/** A list's filter form: submitting it goes back to the first page and applies what was typed. */
export function Filters<K extends string>({
  onApply,
  button = "Filter",
  ...fields
}: {
  onApply: () => void;
  button?: string;
  fields: Array<Field<K>>;
  form: FormState<K>;
}) {
  return <Form {...fields} layout="filters" label="Filters" primary={false} alone onSubmit={onApply} submit={button} />;
}

/** A row of choices that apply as soon as one changes (no button). */
export function Choices<K extends string>(props: { fields: Array<Field<K>>; form: FormState<K> }) {
  return (
    <div class="filters">
      <Fields {...props} />
    </div>
  );
}
/** The id filters the operator's lists share. */
export const USER_ID_FILTER = { field: "user_id", label: "User id", name: "user_id", inputMode: "numeric" } as const;
export const CHANNEL_ID_FILTER = {
  field: "channel_id",
  label: "Channel id",
  name: "channel_id",
  inputMode: "numeric",
} as const;
