/**
 * BYOK: the organization's own provider credentials (GET/POST /byok, PATCH/DELETE /byok/{id}; shape of the
 * reference API). The secret is sent once and never shown again. On a gateway without the API, says so.
 */
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { del, patch, post, qs } from '../api';
import { Card, Check, Empty, ErrorNote, Field, Loading, Page, Unavailable, useAction, useGet, when } from '../ui';
import { WorkspacePicker } from './keys';

interface Credential {
  id: string;
  provider: string;
  name: string | null;
  label: string;
  disabled: boolean;
  is_fallback: boolean;
  sort_order: number;
  workspace_id: string | null;
  created_at: string;
}

export function Byok() {
  const [workspace, setWorkspace] = useState('');
  const q = useGet<{ data: Credential[] }>(`/byok${qs({ workspace_id: workspace, limit: 100 })}`);
  return (
    <Page title="BYOK" intro="Bring your own provider keys: requests to that provider use your credential (billed by the provider to you) before the gateway's own.">
      {q.error?.missingRoute ? (
        <Unavailable feature="Bring-your-own-key credentials" api="GET /api/v1/byok" />
      ) : (
        <>
          <div className="toolbar">
            <WorkspacePicker value={workspace} onChange={setWorkspace} />
          </div>
          <AddCredential workspace={workspace} />
          {q.isPending ? <Loading /> : q.error ? <ErrorNote error={q.error} /> : <List rows={q.data!.data} />}
        </>
      )}
    </Page>
  );
}

function List({ rows }: { rows: Credential[] }) {
  const qc = useQueryClient();
  const toggle = useAction(async (c: Credential) => {
    await patch(`/byok/${c.id}`, { disabled: !c.disabled });
    await qc.invalidateQueries();
  });
  const remove = useAction(async (c: Credential) => {
    if (!confirm(`Delete the ${c.provider} credential “${c.name ?? c.label}”?`)) return;
    await del(`/byok/${c.id}`);
    await qc.invalidateQueries();
  });
  if (rows.length === 0) return <Empty title="No provider credential yet.">Add one above with the provider's slug and your API key for it.</Empty>;
  return (
    <>
      <ErrorNote error={toggle.error ?? remove.error} />
      <table>
        <caption className="sr-only">Provider credentials</caption>
        <thead>
          <tr>
            <th scope="col">Provider</th>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Use</th>
            <th scope="col">Added</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((c) => (
            <tr key={c.id} className={c.disabled ? 'dim' : ''}>
              <td>{c.provider}</td>
              <td>{c.name ?? '—'}</td>
              <td>
                <code>{c.label}</code>
              </td>
              <td>{c.is_fallback ? 'fallback after shared endpoints' : `first (order ${c.sort_order})`}</td>
              <td>{when(c.created_at)}</td>
              <td className="row-actions">
                <button type="button" className="ghost" onClick={() => void toggle.run(c)}>
                  {c.disabled ? 'Enable' : 'Disable'}
                </button>
                <button type="button" className="ghost danger" onClick={() => void remove.run(c)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function AddCredential({ workspace }: { workspace: string }) {
  const qc = useQueryClient();
  const [f, setF] = useState({ provider: '', key: '', name: '', fallback: false });
  const add = useAction(async () => {
    await post('/byok', { provider: f.provider, key: f.key, ...(f.name ? { name: f.name } : {}), is_fallback: f.fallback, ...(workspace ? { workspace_id: workspace } : {}) });
    setF({ provider: '', key: '', name: '', fallback: false });
    await qc.invalidateQueries();
  });
  return (
    <Card title="Add a credential">
      <form
        className="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          void add.run();
        }}
      >
        <Field label="Provider slug">{(id) => <input id={id} value={f.provider} onChange={(e) => setF({ ...f, provider: e.target.value })} placeholder="openai" required />}</Field>
        <Field label="API key" hint="Stored encrypted; never shown again">
          {(id) => <input id={id} type="password" autoComplete="off" value={f.key} onChange={(e) => setF({ ...f, key: e.target.value })} required />}
        </Field>
        <Field label="Name">{(id) => <input id={id} value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} />}</Field>
        <Check label="Use only as a fallback after the shared endpoints" checked={f.fallback} onChange={(v) => setF({ ...f, fallback: v })} />
        <ErrorNote error={add.error} />
        <div className="field-actions">
          <button type="submit" disabled={add.busy}>
            Add credential
          </button>
        </div>
      </form>
    </Card>
  );
}
