/** The console's shell: sign-in, navigation, theme, and the page for the current URL. */
import { StrictMode, useEffect, useState, type ComponentType, type FormEvent } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ApiError, request, setUnauthorizedHandler, storedKey, storeKey } from './api';
import { ErrorNote, Field, Link, navigate, usePath } from './ui';
import { Overview } from './pages/overview';
import { Requests } from './pages/requests';
import { Keys } from './pages/keys';
import { Workspaces } from './pages/workspaces';
import { Guardrails } from './pages/guardrails';
import { Presets } from './pages/presets';
import { Models } from './pages/models';
import { Credits } from './pages/credits';
import { Byok } from './pages/byok';
import { Destinations } from './pages/destinations';
import { Playground } from './pages/playground';
import './styles.css';

const PAGES: { path: string; label: string; page: ComponentType }[] = [
  { path: '/overview', label: 'Overview', page: Overview },
  { path: '/requests', label: 'Requests', page: Requests },
  { path: '/keys', label: 'Keys', page: Keys },
  { path: '/workspaces', label: 'Workspaces', page: Workspaces },
  { path: '/guardrails', label: 'Guardrails', page: Guardrails },
  { path: '/presets', label: 'Presets', page: Presets },
  { path: '/models', label: 'Models & providers', page: Models },
  { path: '/credits', label: 'Credits', page: Credits },
  { path: '/byok', label: 'BYOK', page: Byok },
  { path: '/observability', label: 'Observability', page: Destinations },
  { path: '/playground', label: 'Playground', page: Playground },
];

const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 } } });

type Theme = 'light' | 'dark';
function initialTheme(): Theme {
  const saved = localStorage.getItem('gateway.console.theme');
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

function ThemeToggle({ theme, setTheme }: { theme: Theme; setTheme: (t: Theme) => void }) {
  const next = theme === 'dark' ? 'light' : 'dark';
  return (
    <button type="button" className="ghost" onClick={() => setTheme(next)} aria-label={`Switch to the ${next} theme`}>
      {theme === 'dark' ? '☀ Light' : '☾ Dark'}
    </button>
  );
}

function SignIn({ onSignedIn }: { onSignedIn: (key: string) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await request<{ data: { is_management_key: boolean } }>('GET', '/key', undefined, key.trim());
      if (!me.data.is_management_key) throw new ApiError(403, 'This is an inference key. The console needs a management key (create one with `model-gateway keys create --management`, or use GATEWAY_ADMIN_KEY).');
      onSignedIn(key.trim());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="signin">
      <form onSubmit={submit} className="card" aria-labelledby="signin-title">
        <h1 id="signin-title">Model Gateway console</h1>
        <p className="muted">Sign in with a management key. It stays in this browser tab only (session storage) and is sent as the bearer to this gateway's <code>/api/v1</code>.</p>
        <Field label="Management key">
          {(id) => <input id={id} type="password" autoComplete="off" autoFocus value={key} onChange={(e) => setKey(e.target.value)} placeholder="sk-gw-v1-…" required />}
        </Field>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy || !key.trim()}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

function Shell({ onSignOut, theme, setTheme }: { onSignOut: () => void; theme: Theme; setTheme: (t: Theme) => void }) {
  const path = usePath();
  const current = PAGES.find((p) => path === p.path || path.startsWith(`${p.path}/`));
  useEffect(() => {
    if (!current) navigate('/overview');
  }, [current]);
  const Page = current?.page ?? Overview;
  return (
    <div className="shell">
      <a href="#main" className="skip">
        Skip to content
      </a>
      <nav className="side" aria-label="Console">
        <div className="side-inner">
        <div className="brand">Model Gateway</div>
        <ul>
          {PAGES.map((p) => (
            <li key={p.path}>
              <Link to={p.path} current={p === current}>
                {p.label}
              </Link>
            </li>
          ))}
        </ul>
        <div className="side-foot">
          <ThemeToggle theme={theme} setTheme={setTheme} />
          <button type="button" className="ghost" onClick={onSignOut}>
            Sign out
          </button>
        </div>
        </div>
      </nav>
      <main id="main" className="content" tabIndex={-1}>
        <Page key={current?.path} />
      </main>
    </div>
  );
}

function App() {
  const [key, setKey] = useState(storedKey);
  const [theme, setThemeState] = useState<Theme>(initialTheme);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  const setTheme = (t: Theme) => {
    localStorage.setItem('gateway.console.theme', t);
    setThemeState(t);
  };
  const signOut = () => {
    storeKey(null);
    queryClient.clear();
    setKey(null);
  };
  useEffect(() => setUnauthorizedHandler(signOut), []);
  if (!key)
    return (
      <>
        <div className="corner">
          <ThemeToggle theme={theme} setTheme={setTheme} />
        </div>
        <SignIn
          onSignedIn={(k) => {
            storeKey(k);
            setKey(k);
            if (!PAGES.some((p) => location.pathname.includes(p.path))) navigate('/overview');
          }}
        />
      </>
    );
  return <Shell onSignOut={signOut} theme={theme} setTheme={setTheme} />;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
