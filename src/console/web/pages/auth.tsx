// Sign-in, accepting an invite (setting the password) and self sign-up.
import { Type } from "@sinclair/typebox";
import { useState } from "preact/hooks";
import { LoginBody, NewPassword, SignupBody } from "../../../contracts/console.js";
import { get, post, type Session } from "../api.js";
import { check, Input, Notice, useAction, useLoad } from "../ui.js";

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

export function SignIn({ onSession }: { onSession: (s: Session) => void }) {
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const action = useAction();
  const settings = useLoad(() => get<{ selfSignup: boolean }>("/console/api/signup-settings"), []);
  const submit = (e: Event) => {
    e.preventDefault();
    const problem = check(LoginForm, { login, password });
    if (problem) return action.setError(problem);
    void action.run(async () => onSession(await post<Session>("/console/api/login", { login, password })));
  };
  return (
    <Shell title="Sign in">
      <form onSubmit={submit} class="stack">
        <Input
          label="Name or email"
          name="login"
          autoComplete="username"
          value={login}
          onInput={(e) => setLogin(e.currentTarget.value)}
          required
        />
        <Input
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
          required
        />
        <button type="submit" class="primary" disabled={action.busy}>
          Sign in
        </button>
        <Notice error={action.error} />
      </form>
      {settings.data?.selfSignup ? (
        <p>
          No account? <a href="/console/sign-up">Sign up</a>
        </p>
      ) : null}
    </Shell>
  );
}

export function SignUp({ onSession }: { onSession: (s: Session) => void }) {
  const [form, setForm] = useState({ name: "", email: "", password: "" });
  const action = useAction();
  const set = (k: keyof typeof form) => (e: { currentTarget: HTMLInputElement }) =>
    setForm({ ...form, [k]: e.currentTarget.value });
  const submit = (e: Event) => {
    e.preventDefault();
    const problem = check(SignupForm, form);
    if (problem) return action.setError(problem);
    void action.run(async () => onSession(await post<Session>("/console/api/signup", form)));
  };
  return (
    <Shell title="Sign up">
      <form onSubmit={submit} class="stack">
        <Input label="Name" name="name" autoComplete="username" value={form.name} onInput={set("name")} required />
        <Input
          label="Email"
          name="email"
          type="email"
          autoComplete="email"
          value={form.email}
          onInput={set("email")}
          required
        />
        <Input
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={8}
          value={form.password}
          onInput={set("password")}
          required
          hint="At least 8 characters."
        />
        <button type="submit" class="primary" disabled={action.busy}>
          Create account
        </button>
        <Notice error={action.error} />
      </form>
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
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
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
      <form onSubmit={submit} class="stack">
        <Input
          label="New password"
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={8}
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
          required
          hint="At least 8 characters."
        />
        <Input
          label="Repeat the password"
          name="password-again"
          type="password"
          autoComplete="new-password"
          value={again}
          onInput={(e) => setAgain(e.currentTarget.value)}
          required
        />
        <button type="submit" class="primary" disabled={action.busy || !invite.data}>
          Set password and sign in
        </button>
        <Notice error={action.error} />
      </form>
    </Shell>
  );
}
