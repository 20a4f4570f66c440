/**
 * Files (docs/files.md): one row per stored file, its bytes in the blob storage (services/files/storage.ts) under
 * `storage_key`; and the text parsed out of a PDF, cached by the content's SHA-256 (the file-parser plugin).
 */
import { sql, type Kysely } from 'kysely';

/** Files held by a provider's own Files API: not counted against the workspace quota, not downloadable here. */
export const PROVIDER_STORAGES = ['openai', 'anthropic'] as const;
export type ProviderStorage = (typeof PROVIDER_STORAGES)[number];
export type FileStorageKind = 'local' | 's3' | ProviderStorage;
export const isProviderStored = (row: Pick<FileRow, 'storage'>): row is FileRow & { storage: ProviderStorage } => (PROVIDER_STORAGES as readonly string[]).includes(row.storage);

export interface FileRow {
  /** `gw_file_…`, time-ordered. */
  id: string;
  workspace_id: string;
  filename: string;
  mime_type: string;
  size_bytes: number;
  /** Hex SHA-256 of the content. */
  sha256: string;
  /**
   * Where the bytes are: `local` or `s3` (and the object key there), or a provider's own Files API, `openai` or
   * `anthropic` (`POST /files?provider=…`; the id is then the provider's file id, and the key the id of the BYOK
   * credential the file was stored with, which deletes it there too).
   */
  storage: FileStorageKind;
  storage_key: string;
  /** The `purpose` an OpenAI client gave (null otherwise). */
  purpose: string | null;
  created_at: string;
}

export interface FileParseRow {
  sha256: string;
  engine: string;
  text: string;
  pages: number;
  created_at: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v));
const decode = (r: Record<string, unknown>): FileRow => ({ ...(r as unknown as FileRow), size_bytes: Number(r.size_bytes), created_at: iso(r.created_at) });

/**
 * Inserts the row unless the workspace's files would then pass `quotaBytes`: the check and the insert are one
 * transaction, serialized per workspace (PostgreSQL: a transaction-scoped advisory lock on the workspace, so that two
 * instances uploading at once cannot both pass; SQLite: its transactions are immediate, one writer at a time).
 * Returns the bytes stored before, and whether the row went in.
 */
export async function insertFile(db: Db, kind: 'sqlite' | 'postgres', row: FileRow, quotaBytes: number): Promise<{ inserted: boolean; used: number }> {
  return db.transaction().execute(async (trx) => {
    if (kind === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`gw-files:${row.workspace_id}`}))`.execute(trx);
    const used = await workspaceFileBytes(trx, row.workspace_id);
    if (used + row.size_bytes > quotaBytes) return { inserted: false, used };
    await trx.insertInto('files').values({ ...row }).execute();
    return { inserted: true, used };
  });
}

export async function selectFile(db: Db, workspaceId: string, id: string): Promise<FileRow | null> {
  const r = await db.selectFrom('files').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r ? decode(r) : null;
}

/**
 * A page of a workspace's files, oldest first (creation time, then id: the gateway's ids sort by creation, a
 * provider's do not), after `after` (an id; one no longer there continues by id); at most `limit` + 1 rows (the extra
 * one says more follow).
 */
export async function selectFiles(db: Db, workspaceId: string, after: string | null, limit: number): Promise<FileRow[]> {
  let q = db.selectFrom('files').selectAll().where('workspace_id', '=', workspaceId);
  if (after) {
    const at = await db.selectFrom('files').select('created_at').where('workspace_id', '=', workspaceId).where('id', '=', after).executeTakeFirst();
    q = at ? q.where((eb) => eb.or([eb('created_at', '>', at.created_at), eb.and([eb('created_at', '=', at.created_at), eb('id', '>', after)])])) : q.where('id', '>', after);
  }
  const rows = await q.orderBy('created_at').orderBy('id').limit(limit + 1).execute();
  return rows.map(decode);
}

/** The bytes a workspace's files take in the gateway's storage (files on a provider's Files API are the provider's). */
export async function workspaceFileBytes(db: Db, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('files')
    .select(sql<number>`coalesce(sum(size_bytes), 0)`.as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('storage', 'not in', [...PROVIDER_STORAGES])
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function deleteFileRow(db: Db, workspaceId: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('files').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The cached parse of a content (by SHA-256) with one engine. */
export async function selectParse(db: Db, sha256: string, engine: string): Promise<FileParseRow | null> {
  const r = await db.selectFrom('file_parses').selectAll().where('sha256', '=', sha256).where('engine', '=', engine).executeTakeFirst();
  return r ? { ...(r as unknown as FileParseRow), pages: Number(r.pages), created_at: iso(r.created_at) } : null;
}

export async function upsertParse(db: Db, row: FileParseRow): Promise<void> {
  await db.insertInto('file_parses').values({ ...row }).onConflict((oc) => oc.columns(['sha256', 'engine']).doNothing()).execute();
}
