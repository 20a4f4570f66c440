/**
 * Workspaces: create; each workspace's settings (defaults, I/O logging, broadcast), members, budgets with their
 * current spend, and its default guardrail.
 */
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { del, post, patch, put, type Workspace } from '../api';
import { KeyChooser } from '../forms';
import { Card, Check, Empty, ErrorNote, Field, Link, Page, Query, navigate, usd, useAction, useGet, usePath, when } from '../ui';

export function Workspaces() {
  const path = usePath();
  const id = path.startsWith('/workspaces/') ? decodeURIComponent(path.slice('/workspaces/'.length)) : null;
  const list = useGet<{ data: Workspace[]; total_count: number }>('/workspaces?limit=100');
  return (
    <Page title="Workspaces" intro="A workspace groups keys, guardrails, presets and budgets. Every gateway starts with a default workspace.">
      <div className="two-col">
        <div>
          <Query q={list}>
            {({ data }) => (
              <ul className="picker" aria-label="Workspaces">
                {data.map((w) => (
                  <li key={w.id}>
                    <Link to={`/workspaces/${w.id}`} current={w.id === id}>
                      {w.name} <span className="muted">/{w.slug}</span>
                    </Link>
                  </li>
                ))}
              </ul>
            )}
          </Query>
          <CreateWorkspace />
        </div>
        <div>{id ? <WorkspaceDetail id={id} /> : <Empty title="Select a workspace">Pick one on the left to see its settings, members and budgets, or create a new one.</Empty>}</div>
      </div>
    </Page>
  );
}

function CreateWorkspace() {
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const create = useAction(async () => {
    const res = await post<{ data: Workspace }>('/workspaces', { name, slug });
    setName('');
    setSlug('');
    await qc.invalidateQueries();
    navigate(`/workspaces/${res.data.id}`);
  });
  return (
    <Card title="New workspace">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <Field label="Name">{(id) => <input id={id} value={name} onChange={(e) => setName(e.target.value)} required />}</Field>
        <Field label="Slug" hint="Lower-case letters, digits and dashes">
          {(id) => <input id={id} value={slug} onChange={(e) => setSlug(e.target.value)} required />}
        </Field>
        <ErrorNote error={create.error} />
        <button type="submit" disabled={create.busy}>
          Create workspace
        </button>
      </form>
    </Card>
  );
}

function WorkspaceDetail({ id }: { id: string }) {
  const ws = useGet<{ data: Workspace }>(`/workspaces/${id}`);
  return (
    <Query q={ws}>
      {({ data: w }) => (
        <div className="stack" key={w.id}>
          <Settings w={w} />
          <Budgets w={w} />
          <Members w={w} />
          <DefaultGuardrail w={w} />
        </div>
      )}
    </Query>
  );
}

function Settings({ w }: { w: Workspace }) {
  const qc = useQueryClient();
  const [f, setF] = useState({
    name: w.name,
    description: w.description ?? '',
    default_text_model: w.default_text_model ?? '',
    default_provider_sort: w.default_provider_sort ?? '',
    io: w.is_observability_io_logging_enabled,
    sampling: String(w.io_logging_sampling_rate),
    ioKeys: w.io_logging_api_key_ids,
    broadcast: w.is_observability_broadcast_enabled,
  });
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    await patch(`/workspaces/${w.id}`, {
      name: f.name,
      description: f.description || null,
      default_text_model: f.default_text_model || null,
      default_provider_sort: f.default_provider_sort || null,
      is_observability_io_logging_enabled: f.io,
      io_logging_sampling_rate: Number(f.sampling),
      io_logging_api_key_ids: f.ioKeys,
      is_observability_broadcast_enabled: f.broadcast,
    });
    setSaved(true);
    await qc.invalidateQueries();
  });
  const remove = useAction(async () => {
    if (!confirm(`Delete the workspace “${w.name}”?`)) return;
    await del(`/workspaces/${w.id}`);
    await qc.invalidateQueries();
    navigate('/workspaces');
  });
  return (
    <Card title={`Settings of ${w.name}`}>
      <form
        className="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          setSaved(false);
          void save.run();
        }}
      >
        <Field label="Name">{(id) => <input id={id} value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} />}</Field>
        <Field label="Description">{(id) => <input id={id} value={f.description} onChange={(e) => setF({ ...f, description: e.target.value })} />}</Field>
        <Field label="Default text model" hint="Used by presets and the unknown-model fallback">
          {(id) => <input id={id} value={f.default_text_model} onChange={(e) => setF({ ...f, default_text_model: e.target.value })} placeholder="author/model" />}
        </Field>
        <Field label="Default provider sort">
          {(id) => (
            <select id={id} value={f.default_provider_sort} onChange={(e) => setF({ ...f, default_provider_sort: e.target.value })}>
              {['', 'price', 'throughput', 'latency', 'exacto'].map((s) => (
                <option key={s} value={s}>
                  {s || 'none (balanced)'}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Check label="I/O logging: keep each request's input and output" checked={f.io} onChange={(v) => setF({ ...f, io: v })} />
        <Field label="I/O logging sampling rate" hint="0.0001 to 1">
          {(id) => <input id={id} type="number" min="0.0001" max="1" step="any" value={f.sampling} onChange={(e) => setF({ ...f, sampling: e.target.value })} />}
        </Field>
        <KeyChooser<number>
          legend="I/O logging keys"
          allLabel="Log the requests of every key"
          workspace={w.id}
          by="id"
          value={f.ioKeys}
          onChange={(ioKeys) => setF({ ...f, ioKeys })}
        />
        <Check label="Broadcast traces to the observability destinations" checked={f.broadcast} onChange={(v) => setF({ ...f, broadcast: v })} />
        <ErrorNote error={save.error ?? remove.error} />
        {saved ? (
          <p className="ok-text" role="status">
            Saved.
          </p>
        ) : null}
        <div className="field-actions">
          <button type="submit" disabled={save.busy}>
            Save settings
          </button>
          <button type="button" className="ghost danger" onClick={() => void remove.run()}>
            Delete workspace
          </button>
        </div>
      </form>
      <p className="muted small">
        Id <code>{w.id}</code> · created {when(w.created_at)}
      </p>
    </Card>
  );
}

interface Budget {
  id: string;
  limit_usd: number;
  reset_interval: string | null;
  usage: number;
}
const INTERVALS = ['daily', 'weekly', 'monthly', 'lifetime'];

function Budgets({ w }: { w: Workspace }) {
  const qc = useQueryClient();
  const q = useGet<{ data: Budget[] }>(`/workspaces/${w.id}/budgets`);
  const [interval, setBudgetInterval] = useState('monthly');
  const [limit, setLimit] = useState('');
  const save = useAction(async () => {
    await put(`/workspaces/${w.id}/budgets/${interval}`, { limit_usd: Number(limit) });
    setLimit('');
    await qc.invalidateQueries();
  });
  const remove = useAction(async (i: string) => {
    await del(`/workspaces/${w.id}/budgets/${i}`);
    await qc.invalidateQueries();
  });
  return (
    <Card title="Budgets">
      <Query q={q}>
        {({ data }) =>
          data.length === 0 ? (
            <p className="muted">No budget: this workspace's spend is not capped. Set one below; requests that would go past it are refused with 402.</p>
          ) : (
            <table data-testid="budgets">
              <caption className="sr-only">Budgets</caption>
              <thead>
                <tr>
                  <th scope="col">Interval</th>
                  <th scope="col" className="num">Spent</th>
                  <th scope="col" className="num">Limit</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.map((b) => (
                  <tr key={b.id}>
                    <td>{b.reset_interval ?? 'lifetime'}</td>
                    <td className="num">{usd(b.usage, 6)}</td>
                    <td className="num">{usd(b.limit_usd, 2)}</td>
                    <td>
                      <button type="button" className="ghost danger" onClick={() => void remove.run(b.reset_interval ?? 'lifetime')} aria-label={`Delete the ${b.reset_interval ?? 'lifetime'} budget`}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Query>
      <form
        className="toolbar"
        aria-label="Set a budget"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <Field label="Interval">
          {(id) => (
            <select id={id} value={interval} onChange={(e) => setBudgetInterval(e.target.value)}>
              {INTERVALS.map((i) => (
                <option key={i}>{i}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Limit (USD)">{(id) => <input id={id} type="number" min="0" step="any" value={limit} onChange={(e) => setLimit(e.target.value)} required />}</Field>
        <div className="field-actions">
          <button type="submit" disabled={save.busy}>
            Set budget
          </button>
        </div>
      </form>
      <ErrorNote error={save.error ?? remove.error} />
    </Card>
  );
}

interface Member {
  id: string;
  user_id: string;
  role: string;
  created_at: string;
}
interface OrgMember {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
}

function Members({ w }: { w: Workspace }) {
  const qc = useQueryClient();
  const members = useGet<{ data: Member[] }>(`/workspaces/${w.id}/members?limit=100`);
  const org = useGet<{ data: OrgMember[] }>('/organization/members');
  const [pick, setPick] = useState('');
  const byId = new Map((org.data?.data ?? []).map((m) => [m.id, m]));
  const add = useAction(async () => {
    await post(`/workspaces/${w.id}/members/add`, { user_ids: [pick] });
    setPick('');
    await qc.invalidateQueries();
  });
  const remove = useAction(async (user: string) => {
    await post(`/workspaces/${w.id}/members/remove`, { user_ids: [user] });
    await qc.invalidateQueries();
  });
  return (
    <Card title="Members">
      <Query q={members}>
        {({ data }) =>
          data.length === 0 ? (
            <p className="muted">No members yet. Add organization members below.</p>
          ) : (
            <ul className="plain">
              {data.map((m) => (
                <li key={m.id}>
                  {byId.get(m.user_id)?.email ?? m.user_id} <span className="badge">{m.role}</span>{' '}
                  <button type="button" className="ghost danger" onClick={() => void remove.run(m.user_id)} aria-label={`Remove ${byId.get(m.user_id)?.email ?? m.user_id}`}>
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Query>
      <form
        className="toolbar"
        aria-label="Add a member"
        onSubmit={(e) => {
          e.preventDefault();
          if (pick) void add.run();
        }}
      >
        <Field label="Organization member">
          {(id) => (
            <select id={id} value={pick} onChange={(e) => setPick(e.target.value)}>
              <option value="">Choose…</option>
              {(org.data?.data ?? []).map((m) => (
                <option key={m.id} value={m.id}>
                  {m.email}
                </option>
              ))}
            </select>
          )}
        </Field>
        <div className="field-actions">
          <button type="submit" disabled={!pick || add.busy}>
            Add member
          </button>
        </div>
      </form>
      <ErrorNote error={add.error ?? remove.error} />
    </Card>
  );
}

function DefaultGuardrail({ w }: { w: Workspace }) {
  const g = useGet<{ data: { name: string; limit_usd: number | null; allowed_models: string[] | null; allowed_providers: string[] | null } }>(`/guardrails/${w.default_guardrail_id}`);
  return (
    <Card title="Default guardrail">
      {g.error?.status === 404 ? (
        <p className="muted">
          Not configured: every key of this workspace may use every model. Configure it on the <Link to={`/guardrails/${w.default_guardrail_id}`}>Guardrails</Link> page.
        </p>
      ) : g.error ? (
        <ErrorNote error={g.error} />
      ) : g.data ? (
        <p>
          <Link to={`/guardrails/${w.default_guardrail_id}`}>{g.data.data.name}</Link> — limit {usd(g.data.data.limit_usd, 2)}; models {g.data.data.allowed_models?.join(', ') ?? 'all'}; providers{' '}
          {g.data.data.allowed_providers?.join(', ') ?? 'all'}.
        </p>
      ) : null}
    </Card>
  );
}
