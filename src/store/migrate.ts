/**
 * Migrating a database that several gateway versions share (several instances, rolling updates; docs/operations.md).
 *
 * - `apply`: pending migrations run under Kysely's migration lock (on PostgreSQL an advisory lock, with the migrations
 *   in one transaction), so instances starting at once on one database apply each migration once; the others find
 *   nothing pending. (A SQLite file belongs to one instance.)
 * - `check` (GATEWAY_MIGRATE=off): nothing is applied; a database lacking one of this version's migrations is refused
 *   with their names, so that an instance never serves on a schema older than its code (`model-gateway migrate`, a
 *   migration Job, applies them).
 *
 * Migrations applied by a newer version, after every one of this version's, are accepted: a release only expands the
 * schema (new tables, nullable or defaulted columns); what an older release still reads is dropped no earlier than
 * the release after the one that stopped reading it. So during a rolling update, or after a rollback, an instance
 * of the previous version still starts on the newer schema (Kysely alone would refuse it: "previously executed
 * migration … is missing").
 */
import { Migrator, type Kysely, type Migration } from 'kysely';
import { migrations, type Dialect } from './migrations/index.js';

export type MigrateMode = 'apply' | 'check';

/** Kysely's bookkeeping table (its default name). */
const MIGRATION_TABLE = 'kysely_migration';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

/** Names of the migrations applied to the database (none when it was never migrated). */
export async function appliedMigrations(db: Db): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((t) => t.name === MIGRATION_TABLE)) return [];
  const rows = await db.selectFrom(MIGRATION_TABLE).select('name').execute();
  return rows.map((r) => String(r.name)).sort();
}

export interface MigrationState {
  /** This version's migrations not applied yet. */
  pending: string[];
  /** Applied migrations this version does not know (a newer version's). */
  newer: string[];
}

export function migrationState(known: string[], applied: string[]): MigrationState {
  const have = new Set(applied);
  const mine = new Set(known);
  return { pending: known.filter((n) => !have.has(n)), newer: applied.filter((n) => !mine.has(n)) };
}

/** A stand-in for a newer version's applied migration: never run (it is applied), it only keeps Kysely's checks. */
function appliedElsewhere(name: string): Migration {
  return {
    async up() {
      throw new Error(`migration ${name} belongs to a newer version of the gateway`);
    },
  };
}

function refuseDivergent(state: MigrationState): void {
  if (state.newer.length > 0 && state.pending.length > 0) {
    throw new Error(
      `database has migrations of another version (${state.newer.join(', ')}) but lacks this version's ${state.pending.join(', ')}: ` +
        'migrate it with the newest release (model-gateway migrate) before starting this one',
    );
  }
}

/** Applies (or, in `check` mode, verifies) this version's migrations; returns the names applied. */
export async function runMigrations(db: Db, dialect: Dialect, mode: MigrateMode): Promise<string[]> {
  const mine = migrations(dialect);
  for (let attempt = 0; ; attempt++) {
    const state = migrationState(Object.keys(mine).sort(), await appliedMigrations(db));
    refuseDivergent(state);
    if (mode === 'check') {
      if (state.pending.length > 0) {
        throw new Error(
          `database schema is older than this version: pending migrations ${state.pending.join(', ')}. ` +
            'GATEWAY_MIGRATE=off: run `model-gateway migrate` (the migration Job) first, or unset GATEWAY_MIGRATE',
        );
      }
      return [];
    }
    const all: Record<string, Migration> = { ...mine };
    for (const name of state.newer) all[name] = appliedElsewhere(name);
    const migrator = new Migrator({ db, provider: { getMigrations: async () => all } });
    const { error, results } = await migrator.migrateToLatest();
    if (error) {
      // A newer instance applied its migrations between our look and the lock: look again, once.
      if (attempt === 0 && error instanceof Error && error.message.startsWith('corrupted migrations')) continue;
      throw error instanceof Error ? error : new Error(String(error));
    }
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }
}
