/**
 * What every part of the SQL store shares (store/sql-store.ts assembles the parts): the connection, the dialect, and
 * the value encoding. Dialect differences are confined to value encoding: SQLite keeps booleans as 0/1 and JSON as text.
 */
import Database from 'better-sqlite3';
import { sql, type Kysely, type Transaction } from 'kysely';
import { makeBatchWriter, rowEncoder, SqliteWriterThread, type BatchWrite, type NanoUsageDelta } from '../sqlite-writer.js';
import { SQLITE_ROLLUP_UPSERT } from '../rollups.js';
import { type Dialect } from '../migrations/index.js';
import { ConflictError, type GenerationRow, type KeyUsageDelta } from '../types.js';
import { nanoToUsd, nanoToUsdOrNull, usdToNano, usdToNanoOrNull } from '../../core/money.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Db = Kysely<any>;
export type Row = Record<string, unknown>;

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
export function escapeText(s: string): string {
  return s.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_BUSY';
}

/** Seed of the advisory-lock ids of `withKeyLock` (keeps them apart from any other use of advisory locks). */
export const KEY_LOCK_SEED = 0x6777;
/** Connections of an instance's PostgreSQL pool. */
export const PG_POOL_MAX = 10;
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

export const GENERATION_COLUMNS = [
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
export const encodeGeneration = rowEncoder(GENERATION_COLUMNS, [...JSON_COLUMNS], [...MONEY_COLUMNS]);

/** A money column's stored value in nano-dollars: its nano-dollar twin, else its USD float converted; null if both are. */
export function storedNano(nano: unknown, usd: unknown): number | null {
  if (nano !== null && nano !== undefined) return Number(nano);
  return usd === null || usd === undefined ? null : usdToNano(Number(usd));
}

/** Usage deltas merged per key and day, in nano-dollars (`*_nano`) and as the USD of those (the float columns). */
export function nanoUsage(deltas: KeyUsageDelta[]): NanoUsageDelta[] {
  const merged = new Map<string, { key_hash: string; day: string; usage_nano: number; byok_usage_nano: number; requests: number }>();
  for (const d of deltas) {
    const id = `${d.key_hash}|${d.day}`;
    const prev = merged.get(id);
    const usage = usdToNano(d.usage);
    const byok = usdToNano(d.byok_usage);
    if (prev) {
      prev.usage_nano += usage;
      prev.byok_usage_nano += byok;
      prev.requests += d.requests;
    } else merged.set(id, { key_hash: d.key_hash, day: d.day, usage_nano: usage, byok_usage_nano: byok, requests: d.requests });
  }
  // Each delta built whole, in one literal: one whose USD fields went from 0 to a fraction afterwards has a map V8 has
  // generalized, and the writer thread's structured clone copies such an object by its slow path (2-3x the time).
  const out: NanoUsageDelta[] = [];
  for (const m of merged.values()) {
    out.push({ key_hash: m.key_hash, day: m.day, usage: nanoToUsd(m.usage_nano), byok_usage: nanoToUsd(m.byok_usage_nano), usage_nano: m.usage_nano, byok_usage_nano: m.byok_usage_nano, requests: m.requests });
  }
  return out;
}

/**
 * The state and helpers of the SQL store. The table groups (store/sql/*.ts) extend it and are never instantiated:
 * `SqlStore` (store/sql-store.ts) extends it too and takes on their methods, so all of them share one instance.
 * State lives here only (a group's own field initializers would never run).
 */
export abstract class SqlBase {
  protected sqliteWriter?: BatchWrite;
  protected readonly keyLockSlots = new Slots(KEY_LOCK_SLOTS);
  protected writerStart: Promise<SqliteWriterThread> | null = null;

  constructor(
    readonly kind: Dialect,
    protected readonly db: Db,
    /** The embedded SQLite database: generation batches use prepared statements there (the busiest write path). */
    protected readonly embedded?: Database.Database,
    /** Its file (not for `:memory:`): generation batches are then written by a worker thread. */
    protected embeddedPath?: string,
  ) {}

  /** Prepares the in-thread SQLite batch writer; the statements need the tables, so this runs after migrating. */
  protected attachSqliteWriter(sqlite: Database.Database): void {
    this.sqliteWriter = makeBatchWriter(sqlite, GENERATION_COLUMNS, SQLITE_ROLLUP_UPSERT);
  }

  /** The writer thread for a database file, started on the first batch (null: write in-thread). */
  protected writerThread(): Promise<SqliteWriterThread> | null {
    if (!this.embeddedPath) return null;
    this.writerStart ??= SqliteWriterThread.start(this.embeddedPath, GENERATION_COLUMNS, SQLITE_ROLLUP_UPSERT);
    return this.writerStart;
  }

  // ---- encoding ---------------------------------------------------------------------------------

  /** Encodes an API-typed row for the database. */
  protected enc(row: Row): Row {
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
  protected dec<T>(row: Row | undefined): T | null {
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

  protected decAll<T>(rows: Row[]): T[] {
    return rows.map((r) => this.dec<T>(r) as T);
  }

  /**
   * SQL for a money column's value in nano-dollars (a 64-bit integer): its `_nano` twin, else its USD float converted
   * (rows the previous release wrote during a rolling update). `column` may be qualified (`table.column`).
   */
  protected nanoOf(column: string) {
    const usd = sql.ref(column);
    const int = this.kind === 'postgres' ? sql`bigint` : sql`integer`;
    return sql<number>`coalesce(${sql.ref(`${column}_nano`)}, cast(round(${usd} * 1000000000) as ${int}))`;
  }

  protected bool(v: boolean): boolean | number {
    return this.kind === 'sqlite' ? (v ? 1 : 0) : v;
  }

  protected async guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(what);
      throw err;
    }
  }

  // ---- helpers ----------------------------------------------------------------------------------

  protected async count(table: string): Promise<number> {
    const row = await this.db.selectFrom(table).select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  protected async countWhere(db: Db | Transaction<any>, table: string, column: string, value: unknown): Promise<number> {
    const row = await db.selectFrom(table).select(sql<number>`count(*)`.as('n')).where(column, '=', value).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
