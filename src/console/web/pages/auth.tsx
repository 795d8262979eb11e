// Sign-in, accepting an invite (setting the password) and self sign-up.
import { type TSchema, Type } from "@sinclair/typebox";
import { LoginBody, NewPassword, SignupBody } from "../../../contracts/console.js";
import { get, post, type Session } from "../api.js";
import { Form, type FormSpec, useForm } from "../forms.js";
import { check, Notice, useAction, useLoad } from "../ui.js";

/** The forms' rules: the console API's bodies, a new password at least its minimum long. */
const Password = NewPassword;
const LoginForm = LoginBody;
const SignupForm = Type.Object({ ...SignupBody.properties, password: NewPassword });

function Shell({ title, children }: { title: string; children: preact.ComponentChildren }) {
  return (
    <main id="main" class="auth">
      <section class="card auth-card" aria-labelledby="auth-title">
        <p class="brand">media-gateway</p>
        <h1 id="auth-title">{title}</h1>
        {children}
      </section>
    </main>
  );
}

const SIGN_IN: FormSpec<"login" | "password"> = {
  submit: "Sign in",
  fields: [
    { field: "login", label: "Name or email", name: "login", autoComplete: "username", required: true },
    {
      field: "password",
      label: "Password",
      name: "password",
      type: "password",
      autoComplete: "current-password",
      required: true,
    },
  ],
};

/** The stacked forms of the sign-in pages: the button under the fields, the notice under it. */
const STACKED = { layout: "stack", alone: true, notice: true } as const;

/** A new password's field, as sign-up and an invite ask for it. */
const NEW_PASSWORD_FIELD = {
  field: "password",
  name: "password",
  type: "password",
  autoComplete: "new-password",
  minLength: 8,
  required: true,
  hint: "At least 8 characters.",
} as const;

const SIGN_UP: FormSpec<"name" | "email" | "password"> = {
  submit: "Create account",
  fields: [
    { field: "name", label: "Name", name: "name", autoComplete: "username", required: true },
    { field: "email", label: "Email", name: "email", type: "email", autoComplete: "email", required: true },
    { ...NEW_PASSWORD_FIELD, label: "Password" },
  ],
};

const SET_PASSWORD: FormSpec<"password" | "again"> = {
  submit: "Set password and sign in",
  fields: [
    { ...NEW_PASSWORD_FIELD, label: "New password" },
    {
      field: "again",
      label: "Repeat the password",
      name: "password-again",
      type: "password",
      autoComplete: "new-password",
      required: true,
    },
  ],
};

/** A form that, once its values pass `rule`, posts them to `url` and signs in with the session answered. */
function useSessionForm<F extends Record<string, string>>(
  rule: TSchema,
  url: string,
  initial: F,
  onSession: (s: Session) => void,
) {
  const form = useForm(initial);
  const action = useAction();
  const submit = () => {
    const problem = check(rule, form.values);
    if (problem) return action.setError(problem);
    void action.run(async () => onSession(await post<Session>(url, form.values)));
  };
  return { form, action, submit };
}

export function SignIn({ onSession }: { onSession: (s: Session) => void }) {
  const initial = { login: "", password: "" };
  const { form, action, submit } = useSessionForm(LoginForm, "/console/api/login", initial, onSession);
  const settings = useLoad(() => get<{ selfSignup: boolean }>("/console/api/signup-settings"), []);
  return (
    <Shell title="Sign in">
      <Form {...SIGN_IN} {...STACKED} form={form} action={action} onSubmit={submit} />
      {settings.data?.selfSignup ? (
        <p>
          No account? <a href="/console/sign-up">Sign up</a>
        </p>
      ) : null}
    </Shell>
  );
}

export function SignUp({ onSession }: { onSession: (s: Session) => void }) {
  const initial = { name: "", email: "", password: "" };
  const { form, action, submit } = useSessionForm(SignupForm, "/console/api/signup", initial, onSession);
  return (
    <Shell title="Sign up">
      <Form {...SIGN_UP} {...STACKED} form={form} action={action} onSubmit={submit} />
      <p>
        <a href="/console/sign-in">Back to sign in</a>
      </p>
    </Shell>
  );
}

export function AcceptInvite({ token, onSession }: { token: string; onSession: (s: Session) => void }) {
  const invite = useLoad(
    () => get<{ name: string; email: string | null }>(`/console/api/invites/${encodeURIComponent(token)}`),
    [token],
  );
  const form = useForm({ password: "", again: "" });
  const action = useAction();
  const submit = () => {
    const { password, again } = form.values;
    const problem = check(Password, password);
    if (problem) return action.setError(`password: ${problem}`);
    if (password !== again) return action.setError("The two passwords differ.");
    void action.run(async () =>
      onSession(await post<Session>(`/console/api/invites/${encodeURIComponent(token)}/accept`, { password })),
    );
  };
  if (invite.error) {
    return (
      <Shell title="Invite">
        <Notice error="This invite link is not valid any more. Ask your operator for a new one." />
      </Shell>
    );
  }
  return (
    <Shell title="Set your password">
      <p class="muted">{invite.data ? `Welcome, ${invite.data.name}.` : "Checking the invite…"}</p>
      <Form
        {...SET_PASSWORD}
        {...STACKED}
        form={form}
        action={{ ...action, busy: action.busy || !invite.data }}
        onSubmit={submit}
      />
    </Shell>
  );
}
