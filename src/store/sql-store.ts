/**
 * The Store implemented once over Kysely; `openStore` picks the dialect (SQLite file or PostgreSQL pool).
 * Dialect differences are confined to value encoding: SQLite keeps booleans as 0/1 and JSON as text.
 */
import { CONNECTION_PRAGMAS, makeBatchWriter, rowEncoder, SqliteWriterThread, WriterGone, type BatchWrite, type NanoUsageDelta } from './sqlite-writer.js';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type Driver, type Transaction } from 'kysely';
import { type Dialect } from './migrations/index.js';
import { runMigrations, type MigrateMode } from './migrate.js';
import { selectGenerationPage, type GenerationLogQuery } from './generation-log.js';
import { runAnalytics, type AnalyticsQuery } from './analytics.js';
import { insertFeedback, selectFeedback, type GenerationFeedbackRow } from './feedback.js';
import { insertByok, nextByokSortOrder, selectActiveByok, selectByok, updateByok, type ByokCredentialPatch, type ByokCredentialRow } from './byok.js';
import { deleteFileRow, insertFile, selectFile, selectFiles, selectParse, upsertParse, workspaceFileBytes, type FileParseRow, type FileRow } from './files.js';
import { addRollups, rollupActivity, SQLITE_ROLLUP_UPSERT, sqliteRollupValues } from './rollups.js';
import { addDestinationStats, insertDestination, selectDestination, selectDestinations, updateDestinationRow, type DestinationRow, type DestinationStats } from './destinations.js';
import { deleteContentBefore, insertContent, selectContent, selectContentIds, type GenerationContentRow } from './generation-content.js';
import {
  ConflictError,
  type ActivityRow,
  type BootstrapInput,
  type DeadLetter,
  type DeadLetterRow,
  type GenerationRow,
  type GuardrailAssignmentRow,
  type GuardrailRow,
  type KeyAssignmentRow,
  type KeyRow,
  type KeyUsageDelta,
  type KeyUsageTotals,
  type MemberRow,
  type OrganizationRow,
  type OrgSettingsRow,
  type Page,
  type PresetRow,
  type PresetVersionRow,
  type SavePresetInput,
  type Store,
  type VideoJobPatch,
  type VideoJobRow,
  type WorkspaceMemberRow,
  type WorkspaceRow,
  type BudgetInterval,
  type CreditEntryRow,
  type WorkspaceBudgetRow,
} from './types.js';
import { ACTIVE_VIDEO_STATUSES, checkPath, type VideoStatus } from '../core/video-states.js';
import { nanoToUsd, nanoToUsdOrNull, usdToNano, usdToNanoOrNull } from '../core/money.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;
type Row = Record<string, unknown>;

const BOOL_COLUMNS = new Set([
  'is_data_discount_logging_enabled',
  'is_observability_broadcast_enabled',
  'is_observability_io_logging_enabled',
  'is_default',
  'disabled',
  'include_byok_in_limit',
  'streamed',
  'cancelled',
  'is_byok',
  'is_workspace_default',
  'include_byok_in_budgets',
  'enforce_zdr',
  'enforce_zdr_anthropic',
  'enforce_zdr_openai',
  'enforce_zdr_google',
  'enforce_zdr_xai',
  'enforce_zdr_other',
  'enable_free_model_publication',
  'enable_free_model_training',
  'enable_paid_model_training',
]);
const JSON_COLUMNS = new Set(['io_logging_api_key_ids', 'config', 'attempts', 'pipeline', 'error', 'allowed_providers', 'ignored_providers', 'allowed_models', 'ignored_models', 'model_aliases']);
// Video jobs (docs/videos.md): `error` is shared with generations (a JSON value: here a string).
for (const c of ['request_body', 'content_refs']) JSON_COLUMNS.add(c);
// Guardrail content filters (docs/guardrails.md).
for (const c of ['content_filters', 'content_filter_builtins']) JSON_COLUMNS.add(c);

/** A string made storable: NUL and lone surrogates replaced by their JSON escapes. */
function escapeText(s: string): string {
  return s.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_BUSY';
}

/** Seed of the advisory-lock ids of `withKeyLock` (keeps them apart from any other use of advisory locks). */
const KEY_LOCK_SEED = 0x6777;
/** Connections of an instance's PostgreSQL pool. */
const PG_POOL_MAX = 10;
/**
 * Key locks held at once by an instance: each holds a connection of its own while what runs under it queries on
 * others, so holders must never take the whole pool (they would wait for each other's connections forever).
 */
const KEY_LOCK_SLOTS = 4;

/** At most `n` callers run at once; the others wait, in order. */
class Slots {
  private readonly waiting: Array<() => void> = [];

  constructor(private free: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

const GENERATION_COLUMNS = [
  'id', 'request_id', 'key_hash', 'workspace_id', 'api_type', 'requested_model', 'model', 'provider_name', 'endpoint_tag', 'upstream_id',
  'streamed', 'cancelled', 'status', 'finish_reason', 'native_finish_reason', 'tokens_prompt', 'tokens_completion', 'native_tokens_reasoning',
  'native_tokens_cached', 'native_tokens_cache_write', 'total_cost', 'upstream_inference_cost', 'is_byok', 'latency_ms', 'ttft_ms',
  'generation_time_ms', 'attempts', 'error', 'preset_id', 'session_id', 'created_at',
  'total_cost_nano', 'upstream_inference_cost_nano',
  'pipeline',
] as const;
/**
 * USD columns (rows carry USD numbers), each with its exact twin `<column>_nano` in integer nano-dollars
 * (src/core/money.ts; migration 0008, expand/contract): both are written; the nano-dollar column is read, or the
 * float converted where it is null (a row the previous release wrote during a rolling update).
 */
const MONEY_COLUMNS = new Set(['total_cost', 'upstream_inference_cost', 'cost', 'reserved_cost']);
const NANO_COLUMNS = new Set([...MONEY_COLUMNS].map((c) => `${c}_nano`));
const encodeGeneration = rowEncoder(GENERATION_COLUMNS, [...JSON_COLUMNS], [...MONEY_COLUMNS]);

/** A money column's stored value in nano-dollars: its nano-dollar twin, else its USD float converted; null if both are. */
function storedNano(nano: unknown, usd: unknown): number | null {
  if (nano !== null && nano !== undefined) return Number(nano);
  return usd === null || usd === undefined ? null : usdToNano(Number(usd));
}

/** Usage deltas merged per key and day, in nano-dollars (`*_nano`) and as the USD of those (the float columns). */
function nanoUsage(deltas: KeyUsageDelta[]): NanoUsageDelta[] {
  const merged = new Map<string, NanoUsageDelta>();
  for (const d of deltas) {
    const id = `${d.key_hash}|${d.day}`;
    const prev = merged.get(id);
    const usage = usdToNano(d.usage);
    const byok = usdToNano(d.byok_usage);
    if (prev) {
      prev.usage_nano += usage;
      prev.byok_usage_nano += byok;
      prev.requests += d.requests;
    } else merged.set(id, { key_hash: d.key_hash, day: d.day, usage: 0, byok_usage: 0, usage_nano: usage, byok_usage_nano: byok, requests: d.requests });
  }
  for (const d of merged.values()) (d.usage = nanoToUsd(d.usage_nano)), (d.byok_usage = nanoToUsd(d.byok_usage_nano));
  return [...merged.values()];
}

export class SqlStore implements Store {
  private sqliteWriter?: BatchWrite;
  private readonly keyLockSlots = new Slots(KEY_LOCK_SLOTS);
  private writerStart: Promise<SqliteWriterThread> | null = null;

  constructor(
    readonly kind: Dialect,
    private readonly db: Db,
    /** The embedded SQLite database: generation batches use prepared statements there (the busiest write path). */
    private readonly embedded?: Database.Database,
    /** Its file (not for `:memory:`): generation batches are then written by a worker thread. */
    private embeddedPath?: string,
  ) {}

  /** Prepares the in-thread SQLite batch writer; the statements need the tables, so this runs after migrating. */
  private attachSqliteWriter(sqlite: Database.Database): void {
    this.sqliteWriter = makeBatchWriter(sqlite, GENERATION_COLUMNS, SQLITE_ROLLUP_UPSERT);
  }

  /** The writer thread for a database file, started on the first batch (null: write in-thread). */
  private writerThread(): Promise<SqliteWriterThread> | null {
    if (!this.embeddedPath) return null;
    this.writerStart ??= SqliteWriterThread.start(this.embeddedPath, GENERATION_COLUMNS, SQLITE_ROLLUP_UPSERT);
    return this.writerStart;
  }

  // ---- encoding ---------------------------------------------------------------------------------

  /** Encodes an API-typed row for the database. */
  private enc(row: Row): Row {
    const out: Row = {};
    for (const [k, v] of Object.entries(row)) {
      if (v === undefined) continue;
      if (JSON_COLUMNS.has(k)) out[k] = v === null ? null : JSON.stringify(v);
      else if (MONEY_COLUMNS.has(k)) {
        out[`${k}_nano`] = usdToNanoOrNull(v as number | null);
        out[k] = nanoToUsdOrNull(out[`${k}_nano`] as number | null);
      }
      else if (this.kind === 'sqlite' && typeof v === 'boolean') out[k] = v ? 1 : 0;
      else out[k] = v;
    }
    return out;
  }

  /** Decodes a database row into API types. */
  private dec<T>(row: Row | undefined): T | null {
    if (!row) return null;
    const out: Row = {};
    for (const [k, v] of Object.entries(row)) {
      if (BOOL_COLUMNS.has(k)) out[k] = v === null ? null : Boolean(v);
      else if (JSON_COLUMNS.has(k)) out[k] = typeof v === 'string' ? JSON.parse(v) : v;
      else if (MONEY_COLUMNS.has(k)) out[k] = nanoToUsdOrNull(storedNano(row[`${k}_nano`], v));
      else if (NANO_COLUMNS.has(k)) continue;
      else if (v instanceof Date) out[k] = v.toISOString();
      else out[k] = v;
    }
    return out as T;
  }

  private decAll<T>(rows: Row[]): T[] {
    return rows.map((r) => this.dec<T>(r) as T);
  }

  /**
   * SQL for a money column's value in nano-dollars (a 64-bit integer): its `_nano` twin, else its USD float converted
   * (rows the previous release wrote during a rolling update). `column` may be qualified (`table.column`).
   */
  private nanoOf(column: string) {
    const usd = sql.ref(column);
    const int = this.kind === 'postgres' ? sql`bigint` : sql`integer`;
    return sql<number>`coalesce(${sql.ref(`${column}_nano`)}, cast(round(${usd} * 1000000000) as ${int}))`;
  }

  private bool(v: boolean): boolean | number {
    return this.kind === 'sqlite' ? (v ? 1 : 0) : v;
  }

  private async guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(what);
      throw err;
    }
  }

  // ---- lifecycle --------------------------------------------------------------------------------

  async migrate(mode: MigrateMode = 'apply'): Promise<string[]> {
    const applied = await runMigrations(this.db, this.kind, mode);
    if (this.embedded && !this.sqliteWriter) this.attachSqliteWriter(this.embedded);
    return applied;
  }

  async close(): Promise<void> {
    if (this.writerStart) await (await this.writerStart.catch(() => null))?.close();
    await this.db.destroy();
  }

  async ping(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.db);
      return true;
    } catch {
      return false;
    }
  }

  // ---- organization and members ------------------------------------------------------------------

  async getOrganization(): Promise<OrganizationRow | null> {
    const row = await this.db.selectFrom('organizations').selectAll().limit(1).executeTakeFirst();
    return this.dec<OrganizationRow>(row);
  }

  async bootstrap(input: BootstrapInput): Promise<boolean> {
    try {
      await this.db.transaction().execute(async (trx) => {
        const existing = await trx.selectFrom('organizations').select('id').limit(1).executeTakeFirst();
        if (existing) throw new ConflictError('already bootstrapped');
        await trx.insertInto('organizations').values(this.enc({ ...input.organization })).execute();
        await trx.insertInto('members').values(this.enc({ ...input.member })).execute();
        await trx.insertInto('workspaces').values(this.enc({ ...input.workspace })).execute();
        await trx.insertInto('api_keys').values(this.enc({ ...input.key })).execute();
      });
      return true;
    } catch (err) {
      // Another instance won the race, or the database was already set up.
      if (err instanceof ConflictError || isUniqueViolation(err)) return false;
      throw err;
    }
  }

  async listMembers(offset: number, limit: number): Promise<Page<MemberRow>> {
    const rows = await this.db.selectFrom('members').selectAll().orderBy('created_at').orderBy('id').offset(offset).limit(limit).execute();
    const total = await this.count('members');
    return { rows: this.decAll<MemberRow>(rows), total };
  }

  async getMember(id: string): Promise<MemberRow | null> {
    return this.dec<MemberRow>(await this.db.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirst());
  }

  async insertMember(row: MemberRow): Promise<void> {
    await this.guard(`a member with email ${row.email} already exists`, () => this.db.insertInto('members').values(this.enc({ ...row })).execute());
  }

  async deleteMember(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const member = await trx.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirst();
      if (!member) return false;
      if (member.role === 'org:admin') {
        const admins = await this.countWhere(trx, 'members', 'role', 'org:admin');
        if (admins <= 1) throw new ConflictError('cannot remove the last admin of the organization');
      }
      const keys = await trx
        .selectFrom('api_keys')
        .select(sql<number>`count(*)`.as('n'))
        .where('creator_user_id', '=', id)
        .where('disabled', '=', this.bool(false))
        .executeTakeFirstOrThrow();
      if (Number(keys.n) > 0) throw new ConflictError(`member ${id} still owns ${keys.n} active key(s); disable or delete them first`);
      // Disabled keys keep a dangling creator otherwise; detach them.
      await trx.updateTable('api_keys').set({ creator_user_id: null }).where('creator_user_id', '=', id).execute();
      await trx.deleteFrom('guardrail_assignments').where('user_id', '=', id).execute();
      await trx.deleteFrom('workspace_members').where('user_id', '=', id).execute();
      await trx.deleteFrom('members').where('id', '=', id).execute();
      return true;
    });
  }

  async listWorkspaceMembers(workspace_id: string, offset: number, limit: number): Promise<Page<WorkspaceMemberRow>> {
    const rows = await this.db.selectFrom('workspace_members').selectAll().where('workspace_id', '=', workspace_id).orderBy('created_at').orderBy('id').offset(offset).limit(limit).execute();
    return { rows: this.decAll<WorkspaceMemberRow>(rows), total: await this.countWhere(this.db, 'workspace_members', 'workspace_id', workspace_id) };
  }

  async isWorkspaceMember(workspace_id: string, user_id: string): Promise<boolean> {
    const row = await this.db.selectFrom('workspace_members').select('id').where('workspace_id', '=', workspace_id).where('user_id', '=', user_id).executeTakeFirst();
    return row !== undefined;
  }

  async addWorkspaceMembers(rows: WorkspaceMemberRow[]): Promise<WorkspaceMemberRow[]> {
    if (rows.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      const present = await trx
        .selectFrom('workspace_members')
        .select('user_id')
        .where('workspace_id', '=', rows[0].workspace_id)
        .where('user_id', 'in', rows.map((r) => r.user_id))
        .execute();
      const have = new Set(present.map((r) => r.user_id as string));
      const added = rows.filter((r) => !have.has(r.user_id) && have.add(r.user_id));
      for (const r of added) await trx.insertInto('workspace_members').values(this.enc({ ...r })).execute();
      return added;
    });
  }

  async removeWorkspaceMembers(workspace_id: string, user_ids: string[]): Promise<number> {
    if (user_ids.length === 0) return 0;
    return this.db.transaction().execute(async (trx) => {
      const owners = await trx
        .selectFrom('api_keys')
        .select('creator_user_id')
        .distinct()
        .where('workspace_id', '=', workspace_id)
        .where('creator_user_id', 'in', user_ids)
        .where('disabled', '=', this.bool(false))
        .execute();
      if (owners.length > 0) {
        throw new ConflictError(`member(s) ${owners.map((o) => o.creator_user_id).join(', ')} still own active keys in the workspace; disable or delete them first`);
      }
      const res = await trx.deleteFrom('workspace_members').where('workspace_id', '=', workspace_id).where('user_id', 'in', user_ids).executeTakeFirst();
      return Number(res.numDeletedRows);
    });
  }

  // ---- workspaces -------------------------------------------------------------------------------

  async insertWorkspace(row: WorkspaceRow, members: WorkspaceMemberRow[] = []): Promise<void> {
    await this.guard(`a workspace with slug "${row.slug}" already exists`, () =>
      this.db.transaction().execute(async (trx) => {
        await trx.insertInto('workspaces').values(this.enc({ ...row })).execute();
        for (const m of members) await trx.insertInto('workspace_members').values(this.enc({ ...m })).execute();
      }),
    );
  }

  async getWorkspace(idOrSlug: string): Promise<WorkspaceRow | null> {
    const row = await this.db
      .selectFrom('workspaces')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', idOrSlug), eb('slug', '=', idOrSlug)]))
      .executeTakeFirst();
    return this.dec<WorkspaceRow>(row);
  }

  async getDefaultWorkspace(): Promise<WorkspaceRow | null> {
    return this.dec<WorkspaceRow>(await this.db.selectFrom('workspaces').selectAll().where('is_default', '=', this.bool(true)).executeTakeFirst());
  }

  async listWorkspaces(offset: number, limit: number): Promise<Page<WorkspaceRow>> {
    const rows = await this.db.selectFrom('workspaces').selectAll().orderBy('created_at').orderBy('id').offset(offset).limit(limit).execute();
    return { rows: this.decAll<WorkspaceRow>(rows), total: await this.count('workspaces') };
  }

  async updateWorkspace(id: string, patch: Partial<WorkspaceRow>): Promise<WorkspaceRow | null> {
    const values = this.enc({ ...patch, id: undefined, created_at: undefined, created_by: undefined, is_default: undefined });
    if (Object.keys(values).length > 0) {
      await this.guard(`a workspace with slug "${patch.slug}" already exists`, () =>
        this.db.updateTable('workspaces').set(values).where('id', '=', id).execute(),
      );
    }
    return this.getWorkspace(id);
  }

  async deleteWorkspace(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const ws = await trx.selectFrom('workspaces').select('id').where('id', '=', id).executeTakeFirst();
      if (!ws) return false;
      const active = await trx
        .selectFrom('api_keys')
        .select(sql<number>`count(*)`.as('n'))
        .where('workspace_id', '=', id)
        .where('disabled', '=', this.bool(false))
        .executeTakeFirstOrThrow();
      if (Number(active.n) > 0) throw new ConflictError(`workspace still has ${active.n} active key(s); disable or delete them first`);
      const presetIds = trx.selectFrom('presets').select('id').where('workspace_id', '=', id);
      await trx.deleteFrom('preset_versions').where('preset_id', 'in', presetIds).execute();
      await trx.deleteFrom('presets').where('workspace_id', '=', id).execute();
      const keyHashes = trx.selectFrom('api_keys').select('hash').where('workspace_id', '=', id);
      await trx.deleteFrom('key_usage_daily').where('key_hash', 'in', keyHashes).execute();
      // The workspace's guardrails (its default one included) and every assignment of them or of its keys.
      const guardrailIds = trx.selectFrom('guardrails').select('id').where('workspace_id', '=', id);
      await trx.deleteFrom('guardrail_assignments').where((eb) => eb.or([eb('guardrail_id', 'in', guardrailIds), eb('key_hash', 'in', keyHashes)])).execute();
      await trx.deleteFrom('guardrails').where('workspace_id', '=', id).execute();
      await trx.deleteFrom('api_keys').where('workspace_id', '=', id).execute();
      await trx.deleteFrom('workspace_members').where('workspace_id', '=', id).execute();
      await trx.deleteFrom('workspaces').where('id', '=', id).execute();
      return true;
    });
  }

  // ---- keys -------------------------------------------------------------------------------------

  async insertKey(row: KeyRow): Promise<void> {
    await this.guard('key already exists', () => this.db.insertInto('api_keys').values(this.enc({ ...row })).execute());
  }

  async getKey(hash: string): Promise<KeyRow | null> {
    return this.dec<KeyRow>(await this.db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst());
  }

  async listKeys(q: { workspace_id: string; include_disabled: boolean; offset: number; limit: number }): Promise<KeyRow[]> {
    let query = this.db.selectFrom('api_keys').selectAll().where('workspace_id', '=', q.workspace_id);
    if (!q.include_disabled) query = query.where('disabled', '=', this.bool(false));
    const rows = await query.orderBy('created_at', 'desc').orderBy('hash').offset(q.offset).limit(q.limit).execute();
    return this.decAll<KeyRow>(rows);
  }

  async updateKey(hash: string, patch: Partial<KeyRow>): Promise<KeyRow | null> {
    const values = this.enc({ ...patch, hash: undefined, kind: undefined, created_at: undefined, label: undefined });
    if (Object.keys(values).length > 0) await this.db.updateTable('api_keys').set(values).where('hash', '=', hash).execute();
    return this.getKey(hash);
  }

  async deleteKey(hash: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const res = await trx.deleteFrom('api_keys').where('hash', '=', hash).executeTakeFirst();
      await trx.deleteFrom('key_usage_daily').where('key_hash', '=', hash).execute();
      await trx.deleteFrom('guardrail_assignments').where('key_hash', '=', hash).execute();
      return Number(res.numDeletedRows) > 0;
    });
  }

  async countActiveManagementKeys(): Promise<number> {
    const row = await this.db
      .selectFrom('api_keys')
      .select(sql<number>`count(*)`.as('n'))
      .where('kind', '=', 'management')
      .where('disabled', '=', this.bool(false))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async recordGenerations(rows: GenerationRow[], usage: KeyUsageDelta[]): Promise<void> {
    if (rows.length === 0 && usage.length === 0) return;
    const thread = this.writerThread();
    const values = this.embedded ? rows.map(encodeGeneration) : null;
    const merged = nanoUsage(usage);
    // SQLite: the analytics rollups in the same transaction, by a prepared upsert (store/rollups.ts).
    const rollups = values ? sqliteRollupValues(rows) : [];
    if (thread && values) {
      try {
        await (await thread).write(values, merged, rollups);
        return;
      } catch (err) {
        if (!(err instanceof WriterGone)) throw err;
        this.embeddedPath = undefined; // the thread is gone: write in-thread from now on
      }
    }
    const writer = this.sqliteWriter;
    if (writer && values) {
      // Holding Kysely's connection guarantees no Kysely transaction is open while the prepared batch runs.
      await this.db.connection().execute(async () => writer(values, merged, rollups));
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      // Batches of 50 rows keep each statement well under the databases' parameter limits.
      const inserted = new Set<string>();
      for (let i = 0; i < rows.length; i += 50) {
        const ids = await trx
          .insertInto('generations')
          .values(rows.slice(i, i + 50).map((r) => this.enc({ ...r })))
          .onConflict((oc) => oc.column('id').doNothing())
          .returning('id')
          .execute();
        for (const r of ids) inserted.add(r.id as string);
      }
      await this.addNanoUsageIn(trx, merged);
      // The analytics rollups, in the same transaction as the records (of the rows actually inserted: a batch sent
      // again after an unclear commit adds nothing twice).
      await addRollups(trx, this.kind, inserted.size === rows.length ? rows : rows.filter((r) => inserted.has(r.id)));
    });
  }

  async deadLetterGenerations(entries: DeadLetter[], usage: KeyUsageDelta[]): Promise<void> {
    if (entries.length === 0 && usage.length === 0) return;
    const now = new Date().toISOString();
    await this.db.transaction().execute(async (trx) => {
      for (const { row, reason } of entries) {
        await trx
          .insertInto('generation_dead_letters')
          // JSON.stringify escapes NUL and lone surrogates: the text is storable even when the row was not.
          .values({ id: randomUUID(), generation_id: escapeText(row.id), key_hash: escapeText(row.key_hash), reason: escapeText(reason.slice(0, 1000)), record: JSON.stringify(row), created_at: now })
          .execute();
      }
      await this.addNanoUsageIn(trx, nanoUsage(usage));
    });
  }

  async listGenerationDeadLetters(limit: number): Promise<DeadLetterRow[]> {
    const rows = await this.db.selectFrom('generation_dead_letters').selectAll().orderBy('created_at', 'desc').limit(limit).execute();
    return this.decAll<DeadLetterRow>(rows);
  }

  async getGeneration(id: string): Promise<GenerationRow | null> {
    return this.dec<GenerationRow>(await this.db.selectFrom('generations').selectAll().where('id', '=', id).executeTakeFirst());
  }

  /** The request log (store/generation-log.ts). */
  async listGenerations(q: GenerationLogQuery): Promise<GenerationRow[]> {
    return this.decAll<GenerationRow>(await selectGenerationPage(this.db, q));
  }

  /** BYOK credentials (store/byok.ts). */
  async insertByokCredential(row: ByokCredentialRow): Promise<void> {
    await insertByok(this.db, this.kind, row);
  }

  listActiveByokCredentials(): Promise<ByokCredentialRow[]> {
    return selectActiveByok(this.db);
  }

  getByokCredential(id: string): Promise<ByokCredentialRow | null> {
    return selectByok(this.db, id);
  }

  updateByokCredential(id: string, patch: ByokCredentialPatch): Promise<boolean> {
    return updateByok(this.db, this.kind, id, patch);
  }

  nextByokSortOrder(provider: string, workspaceId: string | null): Promise<number> {
    return nextByokSortOrder(this.db, provider, workspaceId);
  }

  /** Files (store/files.ts). */
  insertFile(row: FileRow): Promise<void> {
    return insertFile(this.db, row);
  }

  getFile(workspace_id: string, id: string): Promise<FileRow | null> {
    return selectFile(this.db, workspace_id, id);
  }

  listFiles(workspace_id: string, after: string | null, limit: number): Promise<FileRow[]> {
    return selectFiles(this.db, workspace_id, after, limit);
  }

  workspaceFileBytes(workspace_id: string): Promise<number> {
    return workspaceFileBytes(this.db, workspace_id);
  }

  deleteFile(workspace_id: string, id: string): Promise<boolean> {
    return deleteFileRow(this.db, workspace_id, id);
  }

  getFileParse(sha256: string, engine: string): Promise<FileParseRow | null> {
    return selectParse(this.db, sha256, engine);
  }

  putFileParse(row: FileParseRow): Promise<void> {
    return upsertParse(this.db, row);
  }

  /** Feedback on generations (store/feedback.ts). */
  async addGenerationFeedback(row: GenerationFeedbackRow): Promise<void> {
    await insertFeedback(this.db, row);
  }

  async listGenerationFeedback(generationId: string): Promise<GenerationFeedbackRow[]> {
    return selectFeedback(this.db, generationId);
  }

  /** Logged content (store/generation-content.ts). */
  async recordGenerationContent(rows: GenerationContentRow[]): Promise<void> {
    if (rows.length > 0) await insertContent(this.db, rows);
  }

  async getGenerationContent(id: string): Promise<GenerationContentRow | null> {
    return selectContent(this.db, id);
  }

  async generationContentIds(ids: string[]): Promise<Set<string>> {
    return selectContentIds(this.db, ids);
  }

  async deleteGenerationContentBefore(before: string, limit: number): Promise<number> {
    return deleteContentBefore(this.db, before, limit);
  }

  /** Broadcast destinations (store/destinations.ts). */
  async insertDestination(row: DestinationRow): Promise<void> {
    await insertDestination(this.db, this.kind, row);
  }

  async getDestination(id: string): Promise<DestinationRow | null> {
    return selectDestination(this.db, id);
  }

  async listDestinations(workspaceId: string | null): Promise<DestinationRow[]> {
    return selectDestinations(this.db, workspaceId);
  }

  async updateDestination(id: string, patch: Partial<DestinationRow>): Promise<DestinationRow | null> {
    return updateDestinationRow(this.db, this.kind, id, patch);
  }

  async addDestinationStats(id: string, stats: DestinationStats): Promise<void> {
    await addDestinationStats(this.db, id, stats);
  }

  /** Analytics over the generation records (store/analytics.ts). */
  async analytics(q: AnalyticsQuery): Promise<Record<string, string | number | null>[]> {
    return runAnalytics(this.db, this.kind, q);
  }

  async addKeyUsage(deltas: KeyUsageDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    await this.db.transaction().execute((trx) => this.addNanoUsageIn(trx, nanoUsage(deltas)));
  }

  /** Adds deltas already in nano-dollars and merged per key and day (`nanoUsage`). */
  private async addNanoUsageIn(trx: Transaction<any>, merged: NanoUsageDelta[]): Promise<void> {
    for (const d of merged) {
      await trx
        .insertInto('key_usage_daily')
        .values({ ...d })
        .onConflict((oc) =>
          oc.columns(['key_hash', 'day']).doUpdateSet({
            // Both columns (expand/contract); a row only the previous release wrote has its nano-dollars from the float.
            usage: sql`key_usage_daily.usage + ${d.usage}`,
            usage_nano: sql`${this.nanoOf('key_usage_daily.usage')} + ${d.usage_nano}`,
            byok_usage: sql`key_usage_daily.byok_usage + ${d.byok_usage}`,
            byok_usage_nano: sql`${this.nanoOf('key_usage_daily.byok_usage')} + ${d.byok_usage_nano}`,
            requests: sql`key_usage_daily.requests + ${d.requests}`,
          }),
        )
        .execute();
    }
  }

  async getKeyUsage(hashes: string[], w: { day: string; week: string; month: string }): Promise<Map<string, KeyUsageTotals>> {
    const out = new Map<string, KeyUsageTotals>();
    for (const h of hashes) {
      out.set(h, { usage: 0, usage_daily: 0, usage_weekly: 0, usage_monthly: 0, byok_usage: 0, byok_usage_daily: 0, byok_usage_weekly: 0, byok_usage_monthly: 0 });
    }
    if (hashes.length === 0) return out;
    const rows = await this.db.selectFrom('key_usage_daily').selectAll().where('key_hash', 'in', hashes).execute();
    // Summed in nano-dollars (exact), turned into USD once.
    for (const r of rows) {
      const t = out.get(r.key_hash as string)!;
      const day = r.day as string;
      const u = storedNano(r.usage_nano, r.usage) ?? 0;
      const b = storedNano(r.byok_usage_nano, r.byok_usage) ?? 0;
      t.usage += u;
      t.byok_usage += b;
      if (day >= w.day) (t.usage_daily += u), (t.byok_usage_daily += b);
      if (day >= w.week) (t.usage_weekly += u), (t.byok_usage_weekly += b);
      if (day >= w.month) (t.usage_monthly += u), (t.byok_usage_monthly += b);
    }
    for (const t of out.values()) for (const k of Object.keys(t) as Array<keyof KeyUsageTotals>) t[k] = nanoToUsd(t[k]);
    return out;
  }

  // ---- presets ----------------------------------------------------------------------------------

  async getPreset(workspace_id: string, slug: string): Promise<PresetRow | null> {
    const row = await this.db.selectFrom('presets').selectAll().where('workspace_id', '=', workspace_id).where('slug', '=', slug).executeTakeFirst();
    return this.dec<PresetRow>(row);
  }

  async listPresets(workspace_id: string, offset: number, limit: number): Promise<Page<PresetRow>> {
    const rows = await this.db
      .selectFrom('presets')
      .selectAll()
      .where('workspace_id', '=', workspace_id)
      .orderBy('updated_at', 'desc')
      .orderBy('id')
      .offset(offset)
      .limit(limit)
      .execute();
    const total = await this.countWhere(this.db, 'presets', 'workspace_id', workspace_id);
    return { rows: this.decAll<PresetRow>(rows), total };
  }

  async getPresetVersion(preset_id: string, version: number): Promise<PresetVersionRow | null> {
    const row = await this.db.selectFrom('preset_versions').selectAll().where('preset_id', '=', preset_id).where('version', '=', version).executeTakeFirst();
    return this.dec<PresetVersionRow>(row);
  }

  async getPresetVersionById(id: string): Promise<PresetVersionRow | null> {
    return this.dec<PresetVersionRow>(await this.db.selectFrom('preset_versions').selectAll().where('id', '=', id).executeTakeFirst());
  }

  async listPresetVersions(preset_id: string, offset: number, limit: number): Promise<Page<PresetVersionRow>> {
    const rows = await this.db
      .selectFrom('preset_versions')
      .selectAll()
      .where('preset_id', '=', preset_id)
      .orderBy('version', 'asc')
      .offset(offset)
      .limit(limit)
      .execute();
    const total = await this.countWhere(this.db, 'preset_versions', 'preset_id', preset_id);
    return { rows: this.decAll<PresetVersionRow>(rows), total };
  }

  async savePresetVersion(input: SavePresetInput): Promise<{ preset: PresetRow; version: PresetVersionRow; created: boolean }> {
    return this.guard(`preset "${input.slug}" was modified concurrently; retry`, () =>
      this.db.transaction().execute(async (trx) => {
        const existing = this.dec<PresetRow>(
          await trx.selectFrom('presets').selectAll().where('workspace_id', '=', input.workspace_id).where('slug', '=', input.slug).executeTakeFirst(),
        );
        const versionId = randomUUID();
        if (!existing) {
          const preset: PresetRow = {
            id: randomUUID(),
            workspace_id: input.workspace_id,
            slug: input.slug,
            name: input.slug,
            description: null,
            status: 'active',
            status_updated_at: null,
            designated_version_id: versionId,
            creator_user_id: input.creator_id,
            created_at: input.now,
            updated_at: input.now,
          };
          const version = this.versionRow(versionId, preset.id, 1, input);
          await trx.insertInto('presets').values(this.enc({ ...preset })).execute();
          await trx.insertInto('preset_versions').values(this.enc({ ...version })).execute();
          return { preset, version, created: true };
        }
        const max = await trx
          .selectFrom('preset_versions')
          .select(sql<number>`max(version)`.as('v'))
          .where('preset_id', '=', existing.id)
          .executeTakeFirstOrThrow();
        const version = this.versionRow(versionId, existing.id, Number(max.v ?? 0) + 1, input);
        // The unique (preset_id, version) constraint turns a concurrent edit into a ConflictError.
        await trx.insertInto('preset_versions').values(this.enc({ ...version })).execute();
        await trx.updateTable('presets').set({ designated_version_id: versionId, updated_at: input.now }).where('id', '=', existing.id).execute();
        return { preset: { ...existing, designated_version_id: versionId, updated_at: input.now }, version, created: false };
      }),
    );
  }

  private versionRow(id: string, preset_id: string, version: number, input: SavePresetInput): PresetVersionRow {
    return { id, preset_id, version, config: input.config, system_prompt: input.system_prompt, creator_id: input.creator_id, created_at: input.now, updated_at: input.now };
  }

  // ---- organization settings and guardrails --------------------------------------------------------

  async getOrgSettings(): Promise<OrgSettingsRow | null> {
    return this.dec<OrgSettingsRow>(await this.db.selectFrom('organization_settings').selectAll().limit(1).executeTakeFirst());
  }

  async serverSecret(name: string, candidate: string): Promise<string> {
    await this.db.insertInto('server_secrets').values({ name, value: candidate }).onConflict((oc) => oc.column('name').doNothing()).execute();
    const row = await this.db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
    return row.value as string;
  }

  async seedOrgSettings(row: OrgSettingsRow): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('organization_settings').select('id').limit(1).executeTakeFirst();
      if (existing) return false;
      const res = await trx
        .insertInto('organization_settings')
        .values(this.enc({ ...row }))
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
    });
  }

  async saveOrgSettings(row: OrgSettingsRow): Promise<void> {
    const values = this.enc({ ...row });
    const { id: _id, created_at: _created, ...update } = values;
    await this.db
      .insertInto('organization_settings')
      .values(values)
      .onConflict((oc) => oc.column('id').doUpdateSet(update))
      .execute();
  }

  async listGuardrails(workspace_id: string, offset: number, limit: number): Promise<Page<GuardrailRow>> {
    const rows = await this.db
      .selectFrom('guardrails')
      .selectAll()
      .where('workspace_id', '=', workspace_id)
      .orderBy('created_at')
      .orderBy('id')
      .offset(offset)
      .limit(limit)
      .execute();
    return { rows: this.decAll<GuardrailRow>(rows), total: await this.countWhere(this.db, 'guardrails', 'workspace_id', workspace_id) };
  }

  async getGuardrail(id: string): Promise<GuardrailRow | null> {
    return this.dec<GuardrailRow>(await this.db.selectFrom('guardrails').selectAll().where('id', '=', id).executeTakeFirst());
  }

  async insertGuardrail(row: GuardrailRow): Promise<void> {
    await this.guard(`guardrail ${row.id} already exists`, () => this.db.insertInto('guardrails').values(this.enc({ ...row })).execute());
  }

  async updateGuardrail(id: string, patch: Partial<GuardrailRow>): Promise<GuardrailRow | null> {
    const values = this.enc({ ...patch, id: undefined, created_at: undefined, workspace_id: undefined, is_workspace_default: undefined });
    if (Object.keys(values).length > 0) await this.db.updateTable('guardrails').set(values).where('id', '=', id).execute();
    return this.getGuardrail(id);
  }

  async deleteGuardrail(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('guardrail_assignments').where('guardrail_id', '=', id).execute();
      const res = await trx.deleteFrom('guardrails').where('id', '=', id).executeTakeFirst();
      return Number(res.numDeletedRows) > 0;
    });
  }

  async assignGuardrail(input: { guardrail_id: string; kind: 'key' | 'member'; ids: string[]; assigned_by: string | null; now: string }): Promise<number> {
    const col = input.kind === 'key' ? 'key_hash' : 'user_id';
    const ids = [...new Set(input.ids)];
    if (ids.length === 0) return 0;
    return this.guard('a concurrent assignment changed the same keys or members; retry', () =>
      this.db.transaction().execute(async (trx) => {
        const existing = await trx.selectFrom('guardrail_assignments').select([col, 'guardrail_id']).where(col, 'in', ids).execute();
        const already = new Set(existing.filter((r) => r.guardrail_id === input.guardrail_id).map((r) => r[col] as string));
        const fresh = ids.filter((i) => !already.has(i));
        if (fresh.length === 0) return 0;
        // A key or member holds at most one guardrail: the new assignment replaces the old one.
        await trx.deleteFrom('guardrail_assignments').where(col, 'in', fresh).execute();
        for (let i = 0; i < fresh.length; i += 100) {
          await trx
            .insertInto('guardrail_assignments')
            .values(
              fresh.slice(i, i + 100).map((id) => ({
                id: randomUUID(),
                guardrail_id: input.guardrail_id,
                key_hash: input.kind === 'key' ? id : null,
                user_id: input.kind === 'member' ? id : null,
                assigned_by: input.assigned_by,
                created_at: input.now,
              })),
            )
            .execute();
        }
        return fresh.length;
      }),
    );
  }

  async unassignGuardrail(guardrail_id: string, kind: 'key' | 'member', ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const res = await this.db
      .deleteFrom('guardrail_assignments')
      .where('guardrail_id', '=', guardrail_id)
      .where(kind === 'key' ? 'key_hash' : 'user_id', 'in', [...new Set(ids)])
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async listKeyAssignments(guardrail_id: string | null, offset: number, limit: number): Promise<Page<KeyAssignmentRow>> {
    let q = this.db.selectFrom('guardrail_assignments as a').innerJoin('api_keys as k', 'k.hash', 'a.key_hash');
    if (guardrail_id !== null) q = q.where('a.guardrail_id', '=', guardrail_id);
    const rows = await q
      .select(['a.id', 'a.guardrail_id', 'a.key_hash', 'a.user_id', 'a.assigned_by', 'a.created_at', 'k.name as key_name', 'k.label as key_label'])
      .orderBy('a.created_at')
      .orderBy('a.id')
      .offset(offset)
      .limit(limit)
      .execute();
    const total = await q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
    return { rows: this.decAll<KeyAssignmentRow>(rows), total: Number(total.n) };
  }

  async listMemberAssignments(guardrail_id: string | null, offset: number, limit: number): Promise<Page<GuardrailAssignmentRow>> {
    let q = this.db.selectFrom('guardrail_assignments').where('user_id', 'is not', null);
    if (guardrail_id !== null) q = q.where('guardrail_id', '=', guardrail_id);
    const rows = await q.selectAll().orderBy('created_at').orderBy('id').offset(offset).limit(limit).execute();
    const total = await q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
    return { rows: this.decAll<GuardrailAssignmentRow>(rows), total: Number(total.n) };
  }

  async guardrailsFor(q: { key_hash: string; user_id: string | null; workspace_id: string }) {
    const assigned = await this.db
      .selectFrom('guardrail_assignments')
      .select(['guardrail_id', 'key_hash', 'user_id'])
      .where((eb) => eb.or([eb('key_hash', '=', q.key_hash), ...(q.user_id ? [eb('user_id', '=', q.user_id)] : [])]))
      .execute();
    const ids = assigned.map((a) => a.guardrail_id as string);
    const rows = this.decAll<GuardrailRow>(
      await this.db
        .selectFrom('guardrails')
        .selectAll()
        .where((eb) =>
          eb.or([
            ...(ids.length > 0 ? [eb('id', 'in', ids)] : []),
            eb.and([eb('workspace_id', '=', q.workspace_id), eb('is_workspace_default', '=', this.bool(true))]),
          ]),
        )
        .execute(),
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const keyA = assigned.find((a) => a.key_hash === q.key_hash);
    const memberA = q.user_id ? assigned.find((a) => a.user_id === q.user_id) : undefined;
    return {
      key: (keyA && byId.get(keyA.guardrail_id as string)) || null,
      member: (memberA && byId.get(memberA.guardrail_id as string)) || null,
      workspace: rows.find((r) => r.is_workspace_default && r.workspace_id === q.workspace_id) ?? null,
    };
  }

  /** GET /activity, from the day rollups (store/rollups.ts). */
  async activity(q: { from: string; to: string; keyHashes: string[] | null; workspaceId: string | null; byWorkspace: boolean }): Promise<ActivityRow[]> {
    return rollupActivity(this.db, this.kind, q);
  }

  async listKeyHashes(q: { creator_user_id?: string; workspace_id?: string }): Promise<string[]> {
    let query = this.db.selectFrom('api_keys').select('hash');
    if (q.creator_user_id !== undefined) query = query.where('creator_user_id', '=', q.creator_user_id);
    if (q.workspace_id !== undefined) query = query.where('workspace_id', '=', q.workspace_id);
    return (await query.execute()).map((r) => r.hash as string);
  }

  // ---- video generation jobs ------------------------------------------------------------------------------

  async insertVideoJob(row: VideoJobRow): Promise<void> {
    await this.guard(`video job ${row.id} already exists`, () => this.db.insertInto('video_jobs').values(this.enc({ ...row })).execute());
  }

  async getVideoJob(id: string): Promise<VideoJobRow | null> {
    return this.dec<VideoJobRow>(await this.db.selectFrom('video_jobs').selectAll().where('id', '=', id).executeTakeFirst());
  }

  /** The patch as column values: never `status` (only transitions change it), never the identity columns. */
  private videoValues(patch: VideoJobPatch, now: string): Row {
    const p = { ...(patch as Row) };
    for (const k of ['id', 'workspace_id', 'key_hash', 'model', 'status', 'created_at']) delete p[k];
    return this.enc({ ...p, updated_at: p.updated_at ?? now });
  }

  async transitionVideoJob(id: string, path: VideoStatus[], patch: VideoJobPatch, opts: { owner?: string; now?: string } = {}): Promise<boolean> {
    // The transition table guards before any SQL; the conditional UPDATEs make the database agree with it.
    checkPath(path);
    const now = opts.now ?? new Date().toISOString();
    const step = async (db: Db | Transaction<any>, from: VideoStatus, to: VideoStatus, values: Row): Promise<boolean> => {
      let q = db.updateTable('video_jobs').set({ ...values, status: to }).where('id', '=', id).where('status', '=', from);
      if (opts.owner !== undefined) q = q.where('lease_owner', '=', opts.owner);
      const res = await q.executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    };
    const last = this.videoValues(patch, now);
    if (path.length === 2) return step(this.db, path[0], path[1], last);
    class Lost extends Error {}
    try {
      return await this.db.transaction().execute(async (trx) => {
        for (let i = 1; i < path.length; i++) {
          const ok = await step(trx, path[i - 1], path[i], i === path.length - 1 ? last : { updated_at: now });
          if (!ok) throw new Lost();
        }
        return true;
      });
    } catch (err) {
      if (err instanceof Lost) return false;
      throw err;
    }
  }

  async updateVideoJob(id: string, patch: VideoJobPatch, when: { status?: VideoStatus | VideoStatus[]; owner?: string }): Promise<boolean> {
    if ((patch as Row).status !== undefined) throw new Error('updateVideoJob cannot change status; use transitionVideoJob');
    let q = this.db.updateTable('video_jobs').set(this.videoValues(patch, new Date().toISOString())).where('id', '=', id);
    if (when.status !== undefined) q = Array.isArray(when.status) ? q.where('status', 'in', when.status) : q.where('status', '=', when.status);
    if (when.owner !== undefined) q = q.where('lease_owner', '=', when.owner);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async claimVideoJobs(q: { owner: string; now: string; leaseUntil: string; limit: number }): Promise<VideoJobRow[]> {
    const free = (eb: any) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '=', q.owner), eb('lease_until', '<', q.now)]);
    const due = await this.db
      .selectFrom('video_jobs')
      .select('id')
      .where((eb) =>
        eb.or([
          eb.and([eb('status', 'in', [...ACTIVE_VIDEO_STATUSES]), eb.or([eb('next_poll_at', 'is', null), eb('next_poll_at', '<=', q.now)])]),
          eb.and([eb('webhook_state', '=', 'pending'), eb('webhook_next_at', '<=', q.now)]),
        ]),
      )
      .where(free)
      .orderBy('created_at')
      .limit(q.limit)
      .execute();
    const claimed: string[] = [];
    for (const { id } of due) {
      // Atomic per row on both databases: of two instances racing for a job, exactly one sees its condition hold.
      const res = await this.db
        .updateTable('video_jobs')
        .set({ lease_owner: q.owner, lease_until: q.leaseUntil })
        .where('id', '=', id as string)
        .where(free)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 1) claimed.push(id as string);
    }
    if (claimed.length === 0) return [];
    const rows = await this.db.selectFrom('video_jobs').selectAll().where('id', 'in', claimed).where('lease_owner', '=', q.owner).orderBy('created_at').execute();
    return this.decAll<VideoJobRow>(rows);
  }

  async renewVideoLeases(owner: string, leaseUntil: string): Promise<number> {
    const res = await this.db
      .updateTable('video_jobs')
      .set({ lease_until: leaseUntil })
      .where('lease_owner', '=', owner)
      .where((eb) => eb.or([eb('status', 'in', [...ACTIVE_VIDEO_STATUSES]), eb('webhook_state', '=', 'pending')]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async releaseVideoLeases(owner: string, ids?: string[], except?: string[]): Promise<number> {
    if (ids && ids.length === 0) return 0;
    let q = this.db.updateTable('video_jobs').set({ lease_owner: null, lease_until: null }).where('lease_owner', '=', owner);
    if (ids) q = q.where('id', 'in', ids);
    if (except && except.length > 0) q = q.where('id', 'not in', except);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async videoReservations(hashes: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (hashes.length === 0) return out;
    const rows = await this.db
      .selectFrom('video_jobs')
      .select(['key_hash', sql<number>`sum(${this.nanoOf('reserved_cost')})`.as('usd')])
      .where('key_hash', 'in', hashes)
      .where('status', 'in', [...ACTIVE_VIDEO_STATUSES])
      .groupBy('key_hash')
      .execute();
    for (const r of rows) if (r.usd !== null && Number(r.usd) > 0) out.set(r.key_hash as string, nanoToUsd(Number(r.usd)));
    return out;
  }

  async withKeyLock<T>(hash: string, fn: () => Promise<T>): Promise<T> {
    if (this.kind === 'sqlite') return fn();
    // A session-level advisory lock on a connection of its own, so that `fn` may use the pool (and transactions)
    // freely; the lock id is a 64-bit hash of the key's hash in a namespace of its own.
    const id = sql`hashtextextended(${hash}, ${KEY_LOCK_SEED})`;
    return this.keyLockSlots.run(() =>
      this.db.connection().execute(async (conn) => {
        await sql`select pg_advisory_lock(${id})`.execute(conn);
        try {
          return await fn();
        } finally {
          await sql`select pg_advisory_unlock(${id})`.execute(conn);
        }
      }),
    );
  }

  // ---- credits and workspace budgets (docs/spend.md) -------------------------------------------------------------

  async insertCreditEntry(row: CreditEntryRow): Promise<void> {
    const { amount_usd, ...rest } = row;
    await this.guard(`credit entry ${row.id} already exists`, () => this.db.insertInto('credit_ledger').values({ ...rest, amount_nano: usdToNano(amount_usd) }).execute());
  }

  private creditRow(r: Row): CreditEntryRow {
    const { amount_nano, ...rest } = this.dec<Row>(r)!;
    return { ...(rest as Omit<CreditEntryRow, 'amount_usd'>), amount_usd: nanoToUsd(Number(amount_nano)) };
  }

  async listCreditEntries(offset: number, limit: number): Promise<Page<CreditEntryRow>> {
    const rows = await this.db.selectFrom('credit_ledger').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit).execute();
    return { rows: rows.map((r) => this.creditRow(r)), total: await this.count('credit_ledger') };
  }

  async creditTotal(): Promise<number> {
    const row = await this.db.selectFrom('credit_ledger').select(sql<string>`cast(coalesce(sum(amount_nano), 0) as text)`.as('n')).executeTakeFirstOrThrow();
    return nanoToUsd(Number(row.n));
  }

  async organizationUsage(): Promise<number> {
    const row = await this.db
      .selectFrom('generations')
      .select(sql<string>`cast(coalesce(sum(${this.nanoOf('total_cost')}), 0) as text)`.as('n'))
      .where('is_byok', '=', this.bool(false))
      .where(this.nanoOf('total_cost'), '>', 0)
      .executeTakeFirstOrThrow();
    return nanoToUsd(Number(row.n));
  }

  private budgetRow(r: Row): WorkspaceBudgetRow {
    const d = this.dec<Row>(r)!;
    return {
      id: d.id as string,
      workspace_id: d.workspace_id as string,
      interval: d.budget_interval as BudgetInterval,
      limit_usd: nanoToUsd(Number(d.limit_nano)),
      created_at: d.created_at as string,
      updated_at: d.updated_at as string,
    };
  }

  private async budgetsIn(db: Db | Transaction<any>, workspace_id: string): Promise<WorkspaceBudgetRow[]> {
    const rows = await db.selectFrom('workspace_budgets').selectAll().where('workspace_id', '=', workspace_id).execute();
    const order: BudgetInterval[] = ['daily', 'weekly', 'monthly', 'lifetime'];
    return rows.map((r) => this.budgetRow(r)).sort((a, b) => order.indexOf(a.interval) - order.indexOf(b.interval));
  }

  async listWorkspaceBudgets(workspace_id: string): Promise<{ budgets: WorkspaceBudgetRow[]; include_byok_in_budgets: boolean }> {
    const [budgets, settings] = await Promise.all([
      this.budgetsIn(this.db, workspace_id),
      this.db.selectFrom('workspace_budget_settings').select('include_byok_in_budgets').where('workspace_id', '=', workspace_id).executeTakeFirst(),
    ]);
    return { budgets, include_byok_in_budgets: Boolean(settings?.include_byok_in_budgets ?? false) };
  }

  async saveWorkspaceBudget(row: WorkspaceBudgetRow, includeByok: boolean | undefined, check: (all: WorkspaceBudgetRow[]) => void): Promise<WorkspaceBudgetRow> {
    return this.db.transaction().execute(async (trx) => {
      // Serializes the workspace's budget changes (PostgreSQL; a SQLite transaction holds the write lock already).
      if (this.kind === 'postgres') await sql`select id from workspaces where id = ${row.workspace_id} for update`.execute(trx);
      const current = await this.budgetsIn(trx, row.workspace_id);
      const existing = current.find((b) => b.interval === row.interval);
      const saved: WorkspaceBudgetRow = existing ? { ...row, id: existing.id, created_at: existing.created_at } : row;
      check([...current.filter((b) => b.interval !== row.interval), saved]);
      const values = { limit_nano: usdToNano(saved.limit_usd), updated_at: saved.updated_at };
      if (existing) await trx.updateTable('workspace_budgets').set(values).where('id', '=', existing.id).execute();
      else {
        await trx
          .insertInto('workspace_budgets')
          .values({ id: saved.id, workspace_id: saved.workspace_id, budget_interval: saved.interval, created_at: saved.created_at, ...values })
          .execute();
      }
      if (includeByok !== undefined) {
        await trx
          .insertInto('workspace_budget_settings')
          .values({ workspace_id: row.workspace_id, include_byok_in_budgets: this.bool(includeByok), updated_at: saved.updated_at })
          .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ include_byok_in_budgets: this.bool(includeByok), updated_at: saved.updated_at }))
          .execute();
      }
      return saved;
    });
  }

  async deleteWorkspaceBudget(workspace_id: string, interval: BudgetInterval): Promise<boolean> {
    const res = await this.db.deleteFrom('workspace_budgets').where('workspace_id', '=', workspace_id).where('budget_interval', '=', interval).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  // ---- helpers ----------------------------------------------------------------------------------

  private async count(table: string): Promise<number> {
    const row = await this.db.selectFrom(table).select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  private async countWhere(db: Db | Transaction<any>, table: string, column: string, value: unknown): Promise<number> {
    const row = await db.selectFrom(table).select(sql<number>`count(*)`.as('n')).where(column, '=', value).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

/**
 * SQLite transactions that take the write lock when they begin (`BEGIN IMMEDIATE`). The generation writer thread
 * writes to the same file on its own connection: a deferred transaction that has read and then writes fails at once
 * (SQLITE_BUSY, which the busy timeout cannot wait out) when that thread committed in between; an immediate one waits
 * for the lock. Every store transaction writes.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly cfg: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(cfg);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.cfg);
  }
}

/** Opens the store named by a database URL: `sqlite:<path>` (or `sqlite::memory:`) or `postgres://…`. */
export function openStore(url: string): SqlStore {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
    const database = new Database(path === ':memory:' ? ':memory:' : resolve(path));
    database.pragma('journal_mode = WAL');
    for (const pragma of CONNECTION_PRAGMAS) database.pragma(pragma);
    const db: Db = new Kysely({ dialect: new ImmediateSqliteDialect({ database }) });
    return new SqlStore('sqlite', db, database, path === ':memory:' ? undefined : resolve(path));
  }
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      // timestamptz and timestamp: ISO strings like the SQLite backend; int8 (count): numbers.
      if (oid === 1184 || oid === 1114) return (v: string) => new Date(oid === 1114 ? `${v}Z` : v).toISOString();
      if (oid === 20) return (v: string) => Number(v);
      return pg.types.getTypeParser(oid, format as 'text');
    },
  };
  const pool = new pg.Pool({ connectionString: url, max: PG_POOL_MAX, types: types as pg.CustomTypesConfig });
  // An idle client whose connection drops (server restart, terminated backend) is discarded and replaced by the pool;
  // without a listener its 'error' event would be an uncaught exception that kills the process.
  pool.on('error', () => undefined);
  return new SqlStore('postgres', new Kysely({ dialect: new PostgresDialect({ pool }) }));
}
