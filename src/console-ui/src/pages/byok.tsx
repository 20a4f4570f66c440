/**
 * BYOK: the organization's own provider credentials (GET/POST /byok, PATCH/DELETE /byok/{id}; shape of the
 * reference API, docs/byok.md). The secret is sent once and never shown again; a new one rotates it. Adding and
 * editing share one set of fields: name, fallback or first, always use, order, and who may use it (models, keys,
 * members). On a gateway without the API, says so.
 */
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { del, patch, post, qs } from '../api';
import { KeyChooser, ListField, listOf, RowActions, RowDetails, textOf } from '../forms';
import { Card, Check, Empty, ErrorNote, Field, Loading, Page, Unavailable, useAction, useGet, when } from '../ui';
import { WorkspacePicker } from './keys';

interface Credential {
  id: string;
  provider: string;
  name: string | null;
  label: string;
  disabled: boolean;
  is_fallback: boolean;
  always_use: boolean;
  sort_order: number;
  allowed_models: string[] | null;
  allowed_api_key_hashes: string[] | null;
  allowed_user_ids: string[] | null;
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
  if (rows.length === 0) return <Empty title="No provider credential yet.">Add one above with the provider's slug and your API key for it.</Empty>;
  return (
    <table data-testid="byok">
      <caption className="sr-only">Provider credentials</caption>
      <thead>
        <tr>
          <th scope="col">Provider</th>
          <th scope="col">Name</th>
          <th scope="col">Key</th>
          <th scope="col">Use</th>
          <th scope="col">Restricted to</th>
          <th scope="col">Added</th>
          <th scope="col">
            <span className="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((c) => (
          <Row key={c.id} c={c} />
        ))}
      </tbody>
    </table>
  );
}

/** Who may use a credential, in words. */
function restriction(c: Credential): string {
  const parts = [
    c.allowed_models ? `models: ${c.allowed_models.join(', ')}` : '',
    c.allowed_api_key_hashes ? `${c.allowed_api_key_hashes.length} key${c.allowed_api_key_hashes.length === 1 ? '' : 's'}` : '',
    c.allowed_user_ids ? `members: ${c.allowed_user_ids.join(', ')}` : '',
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : 'no restriction';
}

function Row({ c }: { c: Credential }) {
  const qc = useQueryClient();
  const [editing, setEditing] = useState(false);
  const toggle = useAction(async () => {
    await patch(`/byok/${c.id}`, { disabled: !c.disabled });
    await qc.invalidateQueries();
  });
  const remove = useAction(async () => {
    if (!confirm(`Delete the ${c.provider} credential “${c.name ?? c.label}”?`)) return;
    await del(`/byok/${c.id}`);
    await qc.invalidateQueries();
  });
  const title = c.name ?? c.label;
  return (
    <>
      <tr className={c.disabled ? 'dim' : ''}>
        <td>{c.provider}</td>
        <td>{c.name ?? '—'}</td>
        <td>
          <code>{c.label}</code>
        </td>
        <td>
          {c.is_fallback ? 'fallback after shared endpoints' : `first (order ${c.sort_order})`}
          {c.always_use ? ', never the operator key' : ''}
        </td>
        <td>{restriction(c)}</td>
        <td>{when(c.created_at)}</td>
        <RowActions name={title} disabled={c.disabled} editing={editing} setEditing={setEditing} toggle={toggle} remove={remove} labelEdit />
      </tr>
      <RowDetails cols={7} toggle={toggle} remove={remove} edit={editing ? <EditCredential c={c} onDone={() => setEditing(false)} /> : null} />
    </>
  );
}

interface CredentialForm {
  name: string;
  fallback: boolean;
  alwaysUse: boolean;
  sortOrder: string;
  models: string;
  keyHashes: string[] | null;
  users: string;
}

function credentialForm(c?: Credential): CredentialForm {
  return {
    name: c?.name ?? '',
    fallback: c?.is_fallback ?? false,
    alwaysUse: c?.always_use ?? false,
    sortOrder: c ? String(c.sort_order) : '',
    models: textOf(c?.allowed_models),
    keyHashes: c?.allowed_api_key_hashes ?? null,
    users: textOf(c?.allowed_user_ids),
  };
}

/** The body fields of a credential's settings (an empty order is left out: after the provider's last credential). */
function credentialBody(f: CredentialForm): Record<string, unknown> {
  return {
    name: f.name || null,
    is_fallback: f.fallback,
    always_use: f.alwaysUse,
    ...(f.sortOrder.trim() ? { sort_order: Number(f.sortOrder) } : {}),
    allowed_models: listOf(f.models),
    allowed_api_key_hashes: f.keyHashes,
    allowed_user_ids: listOf(f.users),
  };
}

/** A credential's settings, for adding and editing alike. */
function CredentialFields({ f, setF, workspace }: { f: CredentialForm; setF: (f: CredentialForm) => void; workspace: string | null }) {
  return (
    <>
      <Field label="Name">{(id) => <input id={id} value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} />}</Field>
      <Field label="Order" hint="Among this provider's credentials, lowest first; empty: after the last">
        {(id) => <input id={id} type="number" min="0" step="1" value={f.sortOrder} onChange={(e) => setF({ ...f, sortOrder: e.target.value })} />}
      </Field>
      <ListField label="Allowed models" hint="Model ids, comma-separated; empty: every model" value={f.models} onChange={(models) => setF({ ...f, models })} placeholder="openai/gpt-5.5" />
      <ListField label="Allowed members" hint="Member ids whose keys may use it, comma-separated; empty: everyone" value={f.users} onChange={(users) => setF({ ...f, users })} />
      <Check label="Use only as a fallback after the shared endpoints" checked={f.fallback} onChange={(v) => setF({ ...f, fallback: v })} />
      <Check label="Always use: never fall back to the operator's key for this provider" checked={f.alwaysUse} onChange={(v) => setF({ ...f, alwaysUse: v })} />
      <KeyChooser<string> legend="Allowed keys" allLabel="Every key of the workspace may use it" workspace={workspace} by="hash" value={f.keyHashes} onChange={(keyHashes) => setF({ ...f, keyHashes })} />
    </>
  );
}

function EditCredential({ c, onDone }: { c: Credential; onDone: () => void }) {
  const qc = useQueryClient();
  const [f, setF] = useState(credentialForm(c));
  const [key, setKey] = useState('');
  const save = useAction(async () => {
    await patch(`/byok/${c.id}`, { ...credentialBody(f), ...(key ? { key } : {}) });
    await qc.invalidateQueries();
    onDone();
  });
  return (
    <form
      className="grid-form inline"
      aria-label={`Edit ${c.name ?? c.label}`}
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <CredentialFields f={f} setF={setF} workspace={c.workspace_id} />
      <Field label="New API key" hint="Empty: keep the current one; a new one rotates it">
        {(id) => <input id={id} type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} />}
      </Field>
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

function AddCredential({ workspace }: { workspace: string }) {
  const qc = useQueryClient();
  const [f, setF] = useState(credentialForm());
  const [provider, setProvider] = useState('');
  const [key, setKey] = useState('');
  const add = useAction(async () => {
    await post('/byok', { provider, key, ...credentialBody(f), ...(workspace ? { workspace_id: workspace } : {}) });
    setF(credentialForm());
    setProvider('');
    setKey('');
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
        <Field label="Provider slug">{(id) => <input id={id} value={provider} onChange={(e) => setProvider(e.target.value)} placeholder="openai" required />}</Field>
        <Field label="API key" hint="Stored encrypted; never shown again">
          {(id) => <input id={id} type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} required />}
        </Field>
        <CredentialFields f={f} setF={setF} workspace={workspace || null} />
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
