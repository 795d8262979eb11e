// The console's entry: loads the session, then routes to the pages of its role.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { get, post, type Session, setCsrfToken, whenSignedOut } from "./api.js";
import { AcceptInvite, SignIn, SignUp } from "./pages/auth.js";
import { operatorRoutes } from "./pages/operator-routes.js";
import { userRoutes } from "./pages/user-routes.js";
import { installLinkHandler, match, navigate, type RouteDef, usePath } from "./router.js";
import "./styles/base.css";
import "./styles/forms.css";
import "./styles/layout.css";
import "./styles/tables.css";
import "./styles/charts.css";
import "./styles/media.css";
import "./styles/narrow.css";

function NotFound() {
  return (
    <section class="page">
      <h1 id="page-title">Not found</h1>
      <p>There is no such page in the console.</p>
    </section>
  );
}

function Layout({
  session,
  routes,
  path,
  onSignOut,
}: {
  session: Session;
  routes: RouteDef[];
  path: string;
  onSignOut: () => void;
}) {
  let view: preact.ComponentChildren = <NotFound />;
  for (const route of routes) {
    const params = match(route.path, path);
    if (params) {
      view = route.view(params, session);
      break;
    }
  }
  const current = routes
    .filter((r) => r.nav && (path === r.path || path.startsWith(`${r.path}/`)))
    .sort((a, b) => b.path.length - a.path.length)[0]?.path;
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">media-gateway</span>
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <span class="who">
          {session.name} <span class="role">({session.role})</span>
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <nav id="nav" class={menuOpen ? "side open" : "side"} aria-label="Console">
        <ul>
          {routes
            .filter((r) => r.nav)
            .map((r) => (
              <li key={r.path}>
                <a href={`/console${r.path}`} aria-current={r.path === current ? "page" : undefined}>
                  {r.title}
                </a>
              </li>
            ))}
        </ul>
      </nav>
      <main id="main" class="content">
        {view}
      </main>
    </div>
  );
}

function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const signedIn = (s: Session) => {
    setCsrfToken(s.csrfToken);
    setSession(s);
    navigate(s.role === "operator" ? "/overview" : "/me", true);
  };
  useEffect(() => {
    whenSignedOut(() => setSession(null));
    get<Session>("/console/api/session").then(
      (s) => {
        setCsrfToken(s.csrfToken);
        setSession(s);
      },
      () => setSession(null),
    );
  }, []);
  const invite = match("/invite/:token", path);
  if (invite) return <AcceptInvite token={invite.token ?? ""} onSession={signedIn} />;
  if (session === undefined)
    return (
      <main class="boot" aria-busy="true">
        Loading the console…
      </main>
    );
  if (session === null) return path === "/sign-up" ? <SignUp onSession={signedIn} /> : <SignIn onSession={signedIn} />;
  const home = session.role === "operator" ? "/overview" : "/me";
  if (path === "/" || path === "/sign-in" || path === "/sign-up") {
    queueMicrotask(() => navigate(home, true));
    return <main class="boot">Loading the console…</main>;
  }
  const signOut = () => {
    void post("/console/api/logout").finally(() => {
      setSession(null);
      navigate("/sign-in", true);
    });
  };
  const routes = session.role === "operator" ? operatorRoutes : userRoutes;
  return <Layout session={session} routes={routes} path={path} onSignOut={signOut} />;
}

installLinkHandler();
const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
