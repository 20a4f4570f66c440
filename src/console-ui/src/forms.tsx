/**
 * Form pieces several pages share: a key's settings (the Keys page's create and edit forms), a chooser of keys (a
 * workspace's I/O logging keys, a BYOK credential's allowed keys), lists typed as text (model ids, member ids), and
 * the conversion between an ISO timestamp and a `datetime-local` input.
 */
import { useId, type ReactNode } from 'react';
import { qs, type Key } from './api';
import { Check, ErrorNote, Field, numOrNull, useGet } from './ui';

// ---- Dates -----------------------------------------------------------------------------------------------------------

/** An ISO timestamp as the value of a `datetime-local` input (the browser's local time), '' for none. */
export function localInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` value (local time) as an ISO timestamp in UTC, null for an empty input. */
export function isoOfLocal(v: string): string | null {
  return v ? new Date(v).toISOString() : null;
}

// ---- Lists -----------------------------------------------------------------------------------------------------------

/** Text with one item per line or comma → the items, or null when there is none (no restriction). */
export function listOf(text: string): string[] | null {
  const items = text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : null;
}

export const textOf = (list: string[] | null | undefined): string => (list ?? []).join(', ');

/** A list of ids typed as text: empty means “no restriction”. */
export function ListField({ label, hint, value, onChange, placeholder }: { label: string; hint: string; value: string; onChange: (v: string) => void; placeholder?: string }) {
  return <Field label={label} hint={hint}>{(id) => <input id={id} value={value} onChange={(e) => onChange(e.target.value)} placeholder={placeholder} />}</Field>;
}

// ---- A key's settings ------------------------------------------------------------------------------------------------

export const RESETS = ['', 'daily', 'weekly', 'monthly'];

export interface KeyForm {
  name: string;
  limit: string;
  reset: string;
  expires: string;
  rlRequests: string;
  rlInterval: string;
}

/** The form's values for a key (a new one when `k` is undefined). */
export function keyForm(k?: Key): KeyForm {
  return {
    name: k?.name ?? '',
    limit: k?.limit === null || k?.limit === undefined ? '' : String(k.limit),
    reset: k?.limit_reset ?? '',
    expires: localInput(k?.expires_at),
    rlRequests: k?.rate_limit ? String(k.rate_limit.requests) : '',
    rlInterval: k?.rate_limit?.interval ?? '1m',
  };
}

/**
 * The body fields of a key's settings. Creating, an empty expiry or rate limit is left out; editing, it is sent as
 * null (never expires, no rate limit).
 */
export function keyBody(f: KeyForm, mode: 'create' | 'edit'): Record<string, unknown> {
  const body: Record<string, unknown> = { name: f.name, limit: numOrNull(f.limit), limit_reset: f.reset || null };
  const rate = f.rlRequests ? { requests: Number(f.rlRequests), interval: f.rlInterval } : null;
  const expires = isoOfLocal(f.expires);
  if (mode === 'edit' || rate) body.rate_limit = rate;
  if (mode === 'edit' || expires) body.expires_at = expires;
  return body;
}

/** The fields of a key's settings: name, spending limit and its reset, expiry, rate limit. */
export function KeyFields({ f, setF, autoFocus }: { f: KeyForm; setF: (f: KeyForm) => void; autoFocus?: boolean }) {
  return (
    <>
      <Field label="Name">{(id) => <input id={id} value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} required autoFocus={autoFocus} />}</Field>
      <Field label="Spending limit (USD)" hint="Empty: no limit">
        {(id) => <input id={id} type="number" min="0" step="any" value={f.limit} onChange={(e) => setF({ ...f, limit: e.target.value })} />}
      </Field>
      <Field label="Limit resets">
        {(id) => (
          <select id={id} value={f.reset} onChange={(e) => setF({ ...f, reset: e.target.value })}>
            {RESETS.map((r) => (
              <option key={r} value={r}>
                {r || 'never'}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Expires" hint="Empty: never (your local time)">
        {(id) => <input id={id} type="datetime-local" value={f.expires} onChange={(e) => setF({ ...f, expires: e.target.value })} />}
      </Field>
      <Field label="Rate limit: requests" hint="Empty: none">
        {(id) => <input id={id} type="number" min="1" value={f.rlRequests} onChange={(e) => setF({ ...f, rlRequests: e.target.value })} />}
      </Field>
      <Field label="Rate limit: per" hint="10s, 1m, 1h, 1d">
        {(id) => <input id={id} value={f.rlInterval} onChange={(e) => setF({ ...f, rlInterval: e.target.value })} />}
      </Field>
    </>
  );
}

// ---- Choosing keys ---------------------------------------------------------------------------------------------------

/**
 * A choice of some keys of a workspace, or all of them (null). `by` says what identifies a key in the value: its
 * numeric `id` (a workspace's `io_logging_api_key_ids`) or its `hash` (a BYOK credential's `allowed_api_key_hashes`).
 */
export function KeyChooser<T extends number | string>({
  legend,
  allLabel,
  workspace,
  by,
  value,
  onChange,
}: {
  legend: string;
  allLabel: string;
  workspace: string | null;
  by: T extends number ? 'id' : 'hash';
  value: T[] | null;
  onChange: (v: T[] | null) => void;
}) {
  const keys = useGet<{ data: Key[] }>(`/keys${qs({ workspace_id: workspace, include_disabled: true })}`);
  const legendId = useId();
  const all = value === null;
  const ident = (k: Key) => (by === 'id' ? k.id : k.hash) as T;
  const list = (keys.data?.data ?? []).filter((k) => !k.is_management_key);
  return (
    <fieldset className="key-chooser" aria-labelledby={legendId}>
      <legend id={legendId}>{legend}</legend>
      <Check label={allLabel} checked={all} onChange={(v) => onChange(v ? null : [])} />
      {all ? null : list.length === 0 ? (
        <p className="muted small">This workspace has no inference key yet.</p>
      ) : (
        list.map((k) => (
          <Check
            key={k.hash}
            label={`${k.name} (${k.label})${k.disabled ? ', disabled' : ''}`}
            checked={value.includes(ident(k))}
            onChange={(on) => onChange(on ? [...value, ident(k)] : value.filter((x) => x !== ident(k)))}
          />
        ))
      )}
    </fieldset>
  );
}

// ---- List rows -------------------------------------------------------------------------------------------------------

/** What a row's action button needs of `useAction`. */
interface RowAction {
  run: () => Promise<unknown>;
  busy: boolean;
  error: unknown;
}

/** A list row's Edit, Enable/Disable and Delete buttons (the Keys and BYOK pages); `name` labels them. */
export function RowActions({ name, disabled, editing, setEditing, toggle, remove, labelEdit = false }: { name: string; disabled: boolean; editing: boolean; setEditing: (on: boolean) => void; toggle: RowAction; remove: RowAction; labelEdit?: boolean }) {
  return (
    <td className="row-actions">
      <button type="button" className="ghost" onClick={() => setEditing(!editing)} aria-expanded={editing} aria-label={labelEdit ? `Edit ${name}` : undefined}>
        Edit
      </button>
      <button type="button" className="ghost" onClick={() => void toggle.run()} disabled={toggle.busy} aria-label={`${disabled ? 'Enable' : 'Disable'} ${name}`}>
        {disabled ? 'Enable' : 'Disable'}
      </button>
      <button type="button" className="ghost danger" onClick={() => void remove.run()} disabled={remove.busy} aria-label={`Delete ${name}`}>
        Delete
      </button>
    </td>
  );
}

/** The rows under a list row: the error of its last toggle or delete, and its edit form while open. */
export function RowDetails({ cols, toggle, remove, edit }: { cols: number; toggle: RowAction; remove: RowAction; edit: ReactNode | null }) {
  return (
    <>
      {toggle.error || remove.error ? (
        <tr>
          <td colSpan={cols}>
            <ErrorNote error={toggle.error ?? remove.error} />
          </td>
        </tr>
      ) : null}
      {edit ? (
        <tr>
          <td colSpan={cols}>{edit}</td>
        </tr>
      ) : null}
    </>
  );
}
