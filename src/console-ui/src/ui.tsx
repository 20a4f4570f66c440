/** Shared pieces of the console's pages: the router link, notices, form fields, tables, formatting. */
import { useEffect, useId, useState, type ReactNode } from 'react';
import { useQuery, type UseQueryResult } from '@tanstack/react-query';
import { ApiError, get } from './api';

// ---- Routing (History API under /console) ---------------------------------------------------------------------------

export const BASE = '/console';

export function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/';
  return p.replace(/\/+$/, '') || '/';
}

export function navigate(path: string): void {
  history.pushState(null, '', BASE + path);
  window.dispatchEvent(new Event('console:navigate'));
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const on = () => setPath(currentPath());
    window.addEventListener('popstate', on);
    window.addEventListener('console:navigate', on);
    return () => {
      window.removeEventListener('popstate', on);
      window.removeEventListener('console:navigate', on);
    };
  }, []);
  return path;
}

export function Link({ to, children, className, current }: { to: string; children: ReactNode; className?: string; current?: boolean }) {
  return (
    <a
      href={BASE + to}
      className={className}
      aria-current={current ? 'page' : undefined}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

// ---- Data ------------------------------------------------------------------------------------------------------------

/** A GET of the API, cached by path. */
export function useGet<T = any>(path: string | null, opts: { refetchInterval?: number } = {}): UseQueryResult<T, ApiError> {
  return useQuery<T, ApiError>({ queryKey: [path], queryFn: () => get<T>(path!), enabled: path !== null, ...opts });
}

/** Names for key hashes and workspace ids (the keys of the default workspace and every workspace), for tables. */
export function useNames(): { key: (hash: string | null | undefined) => string; workspace: (id: string | null | undefined) => string } {
  const keys = useGet<{ data: { hash: string; name: string }[] }>('/keys?include_disabled=true');
  const workspaces = useGet<{ data: { id: string; name: string }[] }>('/workspaces?limit=100');
  const k = new Map((keys.data?.data ?? []).map((x) => [x.hash, x.name]));
  const w = new Map((workspaces.data?.data ?? []).map((x) => [x.id, x.name]));
  return { key: (h) => (h ? (k.get(h) ?? short(h, 8)) : '—'), workspace: (id) => (id ? (w.get(id) ?? short(id, 8)) : '—') };
}

// ---- Notices ---------------------------------------------------------------------------------------------------------

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error as ApiError;
  return (
    <div className="note error" role="alert">
      <strong>{e.status ? `Error ${e.status}` : 'Error'}:</strong> {e.message}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children ? <div className="empty-body">{children}</div> : null}
    </div>
  );
}

/** The page's API is not on this gateway (the route answers 404 "No route for …"). */
export function Unavailable({ feature, api }: { feature: string; api: string }) {
  return (
    <div className="note info" role="status" data-testid="unavailable">
      <strong>{feature} is not available on this gateway.</strong> It answers 404 for <code>{api}</code>; this page works once
      the gateway version that serves it is deployed.
    </div>
  );
}

export function Loading() {
  return (
    <p className="muted" role="status">
      Loading…
    </p>
  );
}

/** Loading, error (with the API's message) or the content. */
export function Query<T>({ q, children }: { q: UseQueryResult<T, ApiError>; children: (data: T) => ReactNode }) {
  if (q.isPending) return <Loading />;
  if (q.error) return <ErrorNote error={q.error} />;
  return <>{children(q.data as T)}</>;
}

export function Page({ title, intro, actions, children }: { title: string; intro?: ReactNode; actions?: ReactNode; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Model Gateway console`;
  }, [title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-head">
        <div>
          <h1 id="page-title">{title}</h1>
          {intro ? <p className="muted intro">{intro}</p> : null}
        </div>
        {actions ? <div className="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

export function Card({ title, children, className }: { title?: string; children: ReactNode; className?: string }) {
  return (
    <section className={`card ${className ?? ''}`} aria-label={title}>
      {title ? <h2>{title}</h2> : null}
      {children}
    </section>
  );
}

// ---- Forms -----------------------------------------------------------------------------------------------------------

export function Field({ label, hint, children }: { label: string; hint?: string; children: (id: string) => ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id)}
      {hint ? <small className="muted">{hint}</small> : null}
    </div>
  );
}

export function Check({ label, checked, onChange }: { label: string; checked: boolean; onChange: (v: boolean) => void }) {
  const id = useId();
  return (
    <div className="check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** An action's state: busy while running, its error (the API's message) afterwards. */
export function useAction<A extends unknown[]>(fn: (...args: A) => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await fn(...args);
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, setError };
}

/** Empty text → null; otherwise a number (NaN is left to the API to refuse with its message). */
export function numOrNull(v: string): number | null {
  return v.trim() === '' ? null : Number(v);
}

// ---- Formatting ------------------------------------------------------------------------------------------------------

export function usd(v: number | null | undefined, digits = 2): string {
  if (v === null || v === undefined) return '—';
  const sign = v < 0 ? '-' : '';
  const a = Math.abs(v);
  // Small amounts keep their significant digits ($0.0000155), larger ones are cents or more.
  const text = a === 0 ? '0.00' : a < 1 ? a.toFixed(Math.max(digits, 2 - Math.floor(Math.log10(a)) + 1)).replace(/(\.\d\d\d*?)0+$/, '$1') : a.toFixed(digits);
  return `${sign}$${text}`;
}
export function num(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : v.toLocaleString('en-US');
}
export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`;
}
export function pct(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : `${(v * 100).toFixed(1)}%`;
}
export function when(v: string | null | undefined): string {
  if (!v) return '—';
  const d = new Date(v);
  return d.toLocaleString('en-GB', { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}
/** Price per token (decimal string) as dollars per million tokens. */
export function perMillion(v: string | null | undefined): string {
  if (v === null || v === undefined) return '—';
  const n = Number(v) * 1e6;
  return `$${n.toFixed(n < 1 ? 3 : 2)}`;
}
export function short(id: string | null | undefined, n = 10): string {
  if (!id) return '—';
  return id.length > n + 1 ? `${id.slice(0, n)}…` : id;
}

export function StatusBadge({ status }: { status: number }) {
  const kind = status < 300 ? 'ok' : status < 500 ? 'warn' : 'bad';
  return <span className={`badge ${kind}`}>{status}</span>;
}

export function Json({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre className="json" tabIndex={0} aria-label={label ?? 'JSON'}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}
