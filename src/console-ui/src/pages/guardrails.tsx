/**
 * Guardrails: the rules keys and members are held to (spend limit, rate limits, allowed models and providers, data
 * policy, content filters). List, create, edit (a workspace's default guardrail is created by its first save), delete.
 */
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { del, patch, post, qs } from '../api';
import { Card, Check, Empty, ErrorNote, Field, Link, Page, Query, navigate, usd, useAction, useGet, usePath } from '../ui';
import { WorkspacePicker } from './keys';

interface Guardrail {
  id: string;
  name: string;
  description: string | null;
  workspace_id: string | null;
  limit_usd: number | null;
  reset_interval: string | null;
  allowed_models: string[] | null;
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  enforce_zdr: boolean | null;
  /** Our extension (docs/guardrails.md, "Rate limits"). */
  rate_limit: { requests?: number; interval?: string; tokens_per_minute?: number } | null;
  is_workspace_default: boolean;
}

/** The form's rate-limit fields as the API takes them: null when all are empty. */
function rateLimit(requests: string, interval: string, tpm: string) {
  if (requests === '' && interval === '' && tpm === '') return null;
  return {
    ...(requests !== '' || interval !== '' ? { requests: Number(requests), interval: interval.trim() } : {}),
    ...(tpm !== '' ? { tokens_per_minute: Number(tpm) } : {}),
  };
}

const list = (s: string) => {
  const items = s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  return items.length ? items : null;
};

export function Guardrails() {
  const path = usePath();
  const id = path.startsWith('/guardrails/') ? decodeURIComponent(path.slice('/guardrails/'.length)) : null;
  const [workspace, setWorkspace] = useState('');
  const q = useGet<{ data: Guardrail[] }>(`/guardrails${qs({ workspace_id: workspace, limit: 100 })}`);
  return (
    <Page title="Guardrails" intro="A guardrail enforces nothing until it is assigned to keys or members, or is a workspace's default.">
      <div className="toolbar">
        <WorkspacePicker value={workspace} onChange={setWorkspace} />
      </div>
      <div className="two-col">
        <div>
          <Query q={q}>
            {({ data }) =>
              data.length === 0 ? (
                <Empty title="No guardrails yet.">Create one to cap spend or restrict models and providers, then assign it to keys.</Empty>
              ) : (
                <ul className="picker" aria-label="Guardrails">
                  {data.map((g) => (
                    <li key={g.id}>
                      <Link to={`/guardrails/${g.id}`} current={g.id === id}>
                        {g.name} {g.is_workspace_default ? <span className="badge">default</span> : null}
                      </Link>
                    </li>
                  ))}
                </ul>
              )
            }
          </Query>
          <p>
            <button type="button" className="ghost" onClick={() => navigate('/guardrails/new')}>
              New guardrail
            </button>
          </p>
        </div>
        <div>{id === 'new' ? <Editor workspace={workspace} /> : id ? <Existing id={id} /> : <p className="muted">Select a guardrail to edit it.</p>}</div>
      </div>
    </Page>
  );
}

function Existing({ id }: { id: string }) {
  const q = useGet<{ data: Guardrail }>(`/guardrails/${id}`);
  if (q.error?.status === 404) return <Editor id={id} notYet />;
  return <Query q={q}>{({ data }) => <Editor id={id} g={data} key={id} />}</Query>;
}

function Editor({ id, g, workspace, notYet }: { id?: string; g?: Guardrail; workspace?: string; notYet?: boolean }) {
  const qc = useQueryClient();
  const [f, setF] = useState({
    name: g?.name ?? '',
    description: g?.description ?? '',
    limit: g?.limit_usd === null || g?.limit_usd === undefined ? '' : String(g.limit_usd),
    reset: g?.reset_interval ?? '',
    models: g?.allowed_models?.join(', ') ?? '',
    providers: g?.allowed_providers?.join(', ') ?? '',
    ignored: g?.ignored_providers?.join(', ') ?? '',
    zdr: g?.enforce_zdr ?? false,
    requests: g?.rate_limit?.requests === undefined ? '' : String(g.rate_limit.requests),
    interval: g?.rate_limit?.interval ?? '',
    tpm: g?.rate_limit?.tokens_per_minute === undefined ? '' : String(g.rate_limit.tokens_per_minute),
  });
  const body = () => ({
    name: f.name,
    description: f.description || null,
    limit_usd: f.limit === '' ? null : Number(f.limit),
    reset_interval: f.reset || null,
    allowed_models: list(f.models),
    allowed_providers: list(f.providers),
    ignored_providers: list(f.ignored),
    enforce_zdr: f.zdr,
    rate_limit: rateLimit(f.requests, f.interval, f.tpm),
  });
  const save = useAction(async () => {
    if (id) await patch(`/guardrails/${id}`, body());
    else {
      const res = await post<{ data: Guardrail }>('/guardrails', { ...body(), ...(workspace ? { workspace_id: workspace } : {}) });
      navigate(`/guardrails/${res.data.id}`);
    }
    await qc.invalidateQueries();
  });
  const remove = useAction(async () => {
    if (!id || !confirm(`Delete the guardrail “${f.name}” and its assignments?`)) return;
    await del(`/guardrails/${id}`);
    await qc.invalidateQueries();
    navigate('/guardrails');
  });
  return (
    <Card title={id ? (notYet ? 'Workspace default guardrail (not configured yet)' : `Edit ${g?.name}`) : 'New guardrail'}>
      <form
        className="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <Field label="Name">{(fid) => <input id={fid} value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} required />}</Field>
        <Field label="Description">{(fid) => <input id={fid} value={f.description} onChange={(e) => setF({ ...f, description: e.target.value })} />}</Field>
        <Field label="Spend limit (USD)" hint={g ? `Now ${usd(g.limit_usd, 2)}; empty: none` : 'Empty: none'}>
          {(fid) => <input id={fid} type="number" min="0" step="any" value={f.limit} onChange={(e) => setF({ ...f, limit: e.target.value })} />}
        </Field>
        <Field label="Limit resets">
          {(fid) => (
            <select id={fid} value={f.reset} onChange={(e) => setF({ ...f, reset: e.target.value })}>
              {['', 'daily', 'weekly', 'monthly'].map((r) => (
                <option key={r} value={r}>
                  {r || 'never'}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Requests per window" hint="Counted per key, per member, or for the whole workspace (a default guardrail); empty: none">
          {(fid) => <input id={fid} type="number" min="1" step="1" value={f.requests} onChange={(e) => setF({ ...f, requests: e.target.value })} />}
        </Field>
        <Field label="Window" hint="A number and s, m, h or d (10s, 1m, 1h, 1d)">
          {(fid) => <input id={fid} value={f.interval} placeholder="1m" onChange={(e) => setF({ ...f, interval: e.target.value })} />}
        </Field>
        <Field label="Tokens per minute" hint="Prompt + completion, counted like requests; empty: none">
          {(fid) => <input id={fid} type="number" min="1" step="1" value={f.tpm} onChange={(e) => setF({ ...f, tpm: e.target.value })} />}
        </Field>
        <Field label="Allowed models" hint="Comma-separated model ids; empty: all">
          {(fid) => <input id={fid} value={f.models} onChange={(e) => setF({ ...f, models: e.target.value })} />}
        </Field>
        <Field label="Allowed providers" hint="Comma-separated provider slugs; empty: all">
          {(fid) => <input id={fid} value={f.providers} onChange={(e) => setF({ ...f, providers: e.target.value })} />}
        </Field>
        <Field label="Ignored providers" hint="Comma-separated provider slugs">
          {(fid) => <input id={fid} value={f.ignored} onChange={(e) => setF({ ...f, ignored: e.target.value })} />}
        </Field>
        <Check label="Zero data retention endpoints only" checked={f.zdr} onChange={(v) => setF({ ...f, zdr: v })} />
        <ErrorNote error={save.error ?? remove.error} />
        <div className="field-actions">
          <button type="submit" disabled={save.busy}>
            {id ? 'Save' : 'Create guardrail'}
          </button>
          {id && !notYet && !g?.is_workspace_default ? (
            <button type="button" className="ghost danger" onClick={() => void remove.run()}>
              Delete
            </button>
          ) : null}
        </div>
      </form>
    </Card>
  );
}
