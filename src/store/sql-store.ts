/**
 * The Store implemented once over Kysely; `openStore` picks the dialect (SQLite file or PostgreSQL pool).
 * The queries live per table group in store/sql/ (each group a class over `SqlBase`, never instantiated on its own);
 * `SqlStore` takes on every group's methods, so one instance serves the whole `Store` interface.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type Driver } from 'kysely';
import { CONNECTION_PRAGMAS } from './sqlite-writer.js';
import { runMigrations, type MigrateMode } from './migrate.js';
import { PG_POOL_MAX, SqlBase, type Db } from './sql/base.js';
import { OrgSql } from './sql/org.js';
import { GenerationSql } from './sql/generations.js';
import { RecordSql } from './sql/records.js';
import { PresetSql } from './sql/presets.js';
import { GuardrailSql } from './sql/guardrails.js';
import { VideoSql } from './sql/videos.js';
import { SpendSql } from './sql/spend.js';
import type { Store } from './types.js';

/** The table groups whose methods `SqlStore` takes on. */
const GROUPS = [OrgSql, GenerationSql, RecordSql, PresetSql, GuardrailSql, VideoSql, SpendSql] as const;

/** A group's public methods (its private helpers are copied too, but stay out of the type). */
type Methods<T> = Pick<T, keyof T>;

export interface SqlStore
  extends Methods<OrgSql>,
    Methods<GenerationSql>,
    Methods<RecordSql>,
    Methods<PresetSql>,
    Methods<GuardrailSql>,
    Methods<VideoSql>,
    Methods<SpendSql> {}

export class SqlStore extends SqlBase implements Store {
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
}

for (const group of GROUPS) {
  for (const name of Object.getOwnPropertyNames(group.prototype)) {
    if (name === 'constructor') continue;
    // Two groups defining one method would silently shadow each other: refuse at load.
    if (Object.prototype.hasOwnProperty.call(SqlStore.prototype, name)) throw new Error(`SqlStore: ${name} is defined twice`);
    Object.defineProperty(SqlStore.prototype, name, Object.getOwnPropertyDescriptor(group.prototype, name)!);
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

const requireLazily = createRequire(import.meta.url);

/**
 * Opens the store named by a database URL: `sqlite:<path>` (or `sqlite::memory:`) or `postgres://…`. The PostgreSQL
 * driver is loaded only for a PostgreSQL URL: a gateway on SQLite does not keep it in the heap every full collection
 * marks (docs/benchmark.md, "Megabyte bodies: a smaller heap to mark").
 */
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
  const pg = requireLazily('pg') as typeof import('pg');
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
