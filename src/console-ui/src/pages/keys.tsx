/**
 * Keys: every key of a workspace with its usage against its limit and rate limit; create (the secret is shown once,
 * with a copy button), edit the name, limit, reset, expiry and rate limit (one form for both: forms.tsx), disable or
 * enable, delete.
 */
import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { del, patch, post, qs, type Key, type Workspace } from '../api';
import { KeyFields, keyBody, keyForm, RowActions, RowDetails } from '../forms';
import { Card, Check, Empty, ErrorNote, Field, Page, Query, usd, useAction, useGet, when } from '../ui';

export function WorkspacePicker({ value, onChange, label = 'Workspace' }: { value: string; onChange: (id: string) => void; label?: string }) {
  const ws = useGet<{ data: Workspace[] }>('/workspaces?limit=100');
  return (
    <Field label={label}>
      {(id) => (
        <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">Default workspace</option>
          {(ws.data?.data ?? []).map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function Keys() {
  const [workspace, setWorkspace] = useState('');
  const [showDisabled, setShowDisabled] = useState(true);
  const path = `/keys${qs({ workspace_id: workspace, include_disabled: showDisabled })}`;
  const keys = useGet<{ data: Key[] }>(path);
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  return (
    <Page title="Keys" intro="Inference keys call models; management keys administer the gateway (and sign in here). Limits are in USD and reset at midnight UTC.">
      {secret ? <SecretOnce {...secret} onDone={() => setSecret(null)} /> : null}
      <div className="toolbar">
        <WorkspacePicker value={workspace} onChange={setWorkspace} />
        <Check label="Show disabled keys" checked={showDisabled} onChange={setShowDisabled} />
      </div>
      <CreateKey workspace={workspace} onCreated={(name, key) => setSecret({ name, secret: key })} />
      <Query q={keys}>
        {({ data }) =>
          data.length === 0 ? (
            <Empty title="No keys in this workspace yet.">Create an inference key above, give its secret to an application, and point the application at this gateway's /api/v1.</Empty>
          ) : (
            <div className="table-wrap">
              <table data-testid="keys">
                <caption className="sr-only">Keys</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key</th>
                    <th scope="col">Usage / limit</th>
                    <th scope="col">Rate limit</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Status</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.map((k) => (
                    <KeyRow key={k.hash} k={k} />
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Query>
    </Page>
  );
}

function SecretOnce({ name, secret: key, onDone }: { name: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="note success secret" role="alert" data-testid="new-secret">
      <p>
        <strong>Key “{name}” created.</strong> Copy its secret now: it is shown only this once and cannot be retrieved later.
      </p>
      <p className="secret-row">
        <code data-testid="secret-value">{key}</code>
        <button
          type="button"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(key);
              setCopied(true);
            } catch {
              setCopied(false);
            }
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="ghost" onClick={onDone}>
          I have stored it
        </button>
      </p>
    </div>
  );
}

function CreateKey({ workspace, onCreated }: { workspace: string; onCreated: (name: string, key: string) => void }) {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [f, setF] = useState(keyForm());
  const [management, setManagement] = useState(false);
  const create = useAction(async () => {
    const body: Record<string, unknown> = { ...keyBody(f, 'create'), management };
    if (workspace) body.workspace_id = workspace;
    const res = await post<{ key: string }>('/keys', body);
    onCreated(f.name, res.key);
    setF({ ...keyForm(), reset: f.reset, rlInterval: f.rlInterval });
    setOpen(false);
    await qc.invalidateQueries();
  });
  if (!open)
    return (
      <p>
        <button type="button" onClick={() => setOpen(true)}>
          Create key
        </button>
      </p>
    );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run();
  };
  return (
    <Card title="New key">
      <form onSubmit={submit} className="grid-form">
        <KeyFields f={f} setF={setF} autoFocus />
        <Check label="Management key (administers the gateway; cannot call models)" checked={management} onChange={setManagement} />
        <ErrorNote error={create.error} />
        <div className="field-actions">
          <button type="submit" disabled={create.busy}>
            Create
          </button>
          <button type="button" className="ghost" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </div>
      </form>
    </Card>
  );
}

function UsageBar({ k }: { k: Key }) {
  const used = k.limit_reset === 'daily' ? k.usage_daily : k.limit_reset === 'weekly' ? k.usage_weekly : k.limit_reset === 'monthly' ? k.usage_monthly : k.usage;
  if (k.limit === null) return <span>{usd(used)} (no limit)</span>;
  const ratio = k.limit > 0 ? Math.min(used / k.limit, 1) : 1;
  return (
    <div className="usage">
      <span>
        {usd(used)} of {usd(k.limit, 2)}
        {k.limit_reset ? ` ${k.limit_reset}` : ''}
      </span>
      <div className="bar" role="meter" aria-valuemin={0} aria-valuemax={k.limit} aria-valuenow={used} aria-label={`Usage of ${k.name}`}>
        <div className={ratio >= 1 ? 'fill bad' : ratio > 0.8 ? 'fill warn' : 'fill'} style={{ width: `${ratio * 100}%` }} />
      </div>
    </div>
  );
}

function KeyRow({ k }: { k: Key }) {
  const qc = useQueryClient();
  const [editing, setEditing] = useState(false);
  const refresh = () => qc.invalidateQueries();
  const toggle = useAction(async () => {
    await patch(`/keys/${k.hash}`, { disabled: !k.disabled });
    await refresh();
  });
  const remove = useAction(async () => {
    if (!confirm(`Delete the key “${k.name}”? Applications using it stop working at once.`)) return;
    await del(`/keys/${k.hash}`);
    await refresh();
  });
  return (
    <>
      <tr className={k.disabled ? 'dim' : ''}>
        <td>
          {k.name}
          {k.is_management_key ? <span className="badge">management</span> : null}
        </td>
        <td>
          <code>{k.label}</code>
        </td>
        <td>
          <UsageBar k={k} />
        </td>
        <td>{k.rate_limit ? `${k.rate_limit.requests} / ${k.rate_limit.interval}` : '—'}</td>
        <td>{k.expires_at ? when(k.expires_at) : 'never'}</td>
        <td>{k.disabled ? <span className="badge warn">disabled</span> : <span className="badge ok">active</span>}</td>
        <RowActions name={k.name} disabled={k.disabled} editing={editing} setEditing={setEditing} toggle={toggle} remove={remove} />
      </tr>
      <RowDetails cols={7} toggle={toggle} remove={remove} edit={editing ? <EditKey k={k} onDone={() => setEditing(false)} /> : null} />
    </>
  );
}

function EditKey({ k, onDone }: { k: Key; onDone: () => void }) {
  const qc = useQueryClient();
  const [f, setF] = useState(keyForm(k));
  const save = useAction(async () => {
    await patch(`/keys/${k.hash}`, keyBody(f, 'edit'));
    await qc.invalidateQueries();
    onDone();
  });
  return (
    <form
      className="grid-form inline"
      aria-label={`Edit ${k.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <KeyFields f={f} setF={setF} />
      <ErrorNote error={save.error} />
      <div className="field-actions">
        <button type="submit" disabled={save.busy}>
          Save
        </button>
        <button type="button" className="ghost" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
