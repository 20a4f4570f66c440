/** BYOK credentials (docs/byok.md): rows of `byok_credentials`, the secret sealed (services/secrets-crypto.ts). */
import type { Kysely } from 'kysely';

export interface ByokCredentialRow {
  id: string;
  provider: string;
  /** null: every workspace of the organization. */
  workspace_id: string | null;
  name: string | null;
  /** Masked snippet of the key (`sk-...AbCd`). */
  label: string;
  /** The sealed key (AES-256-GCM blob); '' once deleted. */
  secret: string;
  disabled: boolean;
  is_fallback: boolean;
  /** Extension: never fall back to the operator's shared key for this provider. */
  always_use: boolean;
  sort_order: number;
  allowed_models: string[] | null;
  allowed_api_key_hashes: string[] | null;
  allowed_user_ids: string[] | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export type ByokCredentialPatch = Partial<Omit<ByokCredentialRow, 'id' | 'provider' | 'workspace_id' | 'created_at'>>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;
type Dialect = 'sqlite' | 'postgres';

const BOOLS = ['disabled', 'is_fallback', 'always_use'] as const;
const JSONS = ['allowed_models', 'allowed_api_key_hashes', 'allowed_user_ids'] as const;

function enc(kind: Dialect, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (v === undefined) continue;
    if ((BOOLS as readonly string[]).includes(k)) out[k] = kind === 'sqlite' ? (v ? 1 : 0) : Boolean(v);
    else if ((JSONS as readonly string[]).includes(k)) out[k] = v === null ? null : JSON.stringify(v);
    else out[k] = v;
  }
  return out;
}

function dec(r: Record<string, unknown>): ByokCredentialRow {
  const out: Record<string, unknown> = { ...r };
  for (const k of BOOLS) out[k] = Boolean(r[k]);
  for (const k of JSONS) out[k] = typeof r[k] === 'string' ? JSON.parse(r[k] as string) : (r[k] ?? null);
  for (const k of ['created_at', 'updated_at', 'deleted_at']) if (r[k] instanceof Date) out[k] = (r[k] as Date).toISOString();
  out.sort_order = Number(r.sort_order);
  return out as unknown as ByokCredentialRow;
}

export async function insertByok(db: Db, kind: Dialect, row: ByokCredentialRow): Promise<void> {
  await db.insertInto('byok_credentials').values(enc(kind, { ...row })).execute();
}

/** Every credential not deleted (the in-memory routing table is built from these). */
export async function selectActiveByok(db: Db): Promise<ByokCredentialRow[]> {
  const rows = await db.selectFrom('byok_credentials').selectAll().where('deleted_at', 'is', null).orderBy('sort_order').orderBy('created_at').orderBy('id').execute();
  return rows.map(dec);
}

export async function selectByok(db: Db, id: string): Promise<ByokCredentialRow | null> {
  const r = await db.selectFrom('byok_credentials').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  return r ? dec(r) : null;
}

/** Sets `patch` on a live credential; false when there is none with this id. */
export async function updateByok(db: Db, kind: Dialect, id: string, patch: ByokCredentialPatch): Promise<boolean> {
  const r = await db.updateTable('byok_credentials').set(enc(kind, patch)).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The next sort position of a provider's credentials in a workspace (or among the global ones). */
export async function nextByokSortOrder(db: Db, provider: string, workspaceId: string | null): Promise<number> {
  let q = db.selectFrom('byok_credentials').select((eb) => eb.fn.max('sort_order').as('m')).where('provider', '=', provider).where('deleted_at', 'is', null);
  q = workspaceId === null ? q.where('workspace_id', 'is', null) : q.where('workspace_id', '=', workspaceId);
  const r = await q.executeTakeFirst();
  return r?.m === null || r?.m === undefined ? 0 : Number(r.m) + 1;
}
