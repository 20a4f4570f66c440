/**
 * Migrations as deployments run them: GATEWAY_MIGRATE=off (a migration Job applies them; instances only check),
 * instances starting at once on one fresh PostgreSQL database, and an older instance on a newer version's schema.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { createGateway } from '../../src/gateway.js';
import { migrations } from '../../src/store/migrations/index.js';
import { appliedMigrations, migrationState } from '../../src/store/migrate.js';
import { openStore, type SqlStore } from '../../src/store/sql-store.js';
import { ADMIN_KEY, BACKENDS, freshDatabase, startGateway, type TestGateway } from '../helpers.js';

const ALL = Object.keys(migrations('postgres')).sort();
const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!().catch(() => undefined);
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const kysely = (store: SqlStore) => (store as unknown as { db: import('kysely').Kysely<any> }).db;

function config(url: string, env: Record<string, string> = {}) {
  return loadConfig({ PORT: '0', HOST: '127.0.0.1', GATEWAY_DATABASE_URL: url, GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_LOG_LEVEL: 'silent', ...env });
}

describe('migrationState', () => {
  it('tells pending and newer migrations apart', () => {
    expect(migrationState(['0001', '0002'], [])).toEqual({ pending: ['0001', '0002'], newer: [] });
    expect(migrationState(['0001', '0002'], ['0001', '0002', '0003'])).toEqual({ pending: [], newer: ['0003'] });
  });
});

describe('GATEWAY_MIGRATE', () => {
  it('is auto by default, takes off, and refuses anything else', () => {
    expect(loadConfig({}).migrate).toBe('auto');
    expect(loadConfig({ GATEWAY_MIGRATE: 'OFF' }).migrate).toBe('off');
    expect(() => loadConfig({ GATEWAY_MIGRATE: 'later' })).toThrow(/GATEWAY_MIGRATE must be auto or off \(got "later"\)/);
  });
});

describe.each(BACKENDS)('migrations at start (%s)', (backend) => {
  it('GATEWAY_MIGRATE=off refuses a database lacking migrations, names them, and applies nothing', async () => {
    const db = await freshDatabase(backend);
    cleanup.push(db.drop);
    await expect(createGateway(config(db.url, { GATEWAY_MIGRATE: 'off' }))).rejects.toThrow(
      /pending migrations 0001_init, .*model-gateway migrate/,
    );
    const store = openStore(db.url);
    try {
      expect(await appliedMigrations(kysely(store))).toEqual([]);
      // What the migration Job runs (`model-gateway migrate`): then the instance starts.
      expect(await store.migrate()).toEqual(ALL);
    } finally {
      await store.close();
    }
    const t = await startGateway(backend, { databaseUrl: db.url, env: { GATEWAY_MIGRATE: 'off' } });
    cleanup.push(t.stop);
    expect((await fetch(`${t.url}/ready`)).status).toBe(200);
    expect((await t.call('POST', '/keys', { body: { name: 'after the job' } })).status).toBe(201);
  });

  it('an instance of this version starts on a newer version\'s schema (rolling update, rollback)', async () => {
    const db = await freshDatabase(backend);
    cleanup.push(db.drop);
    const store = openStore(db.url);
    try {
      await store.migrate();
      // A newer release's expand-only migration: a table and a nullable column this version does not know.
      const k = kysely(store);
      await k.schema.createTable('from_a_newer_release').addColumn('id', 'text', (c) => c.primaryKey()).execute();
      await k.schema.alterTable('api_keys').addColumn('newer_release_note', 'text').execute();
      await k.insertInto('kysely_migration').values({ name: '9999_newer_release', timestamp: new Date().toISOString() }).execute();
    } finally {
      await store.close();
    }
    for (const mode of ['auto', 'off']) {
      const t = await startGateway(backend, { databaseUrl: db.url, env: { GATEWAY_MIGRATE: mode } });
      try {
        expect((await fetch(`${t.url}/ready`)).status).toBe(200);
        const created = await t.call('POST', '/keys', { body: { name: `on the newer schema (${mode})` } });
        expect(created.status).toBe(201);
        expect((await t.call('GET', `/keys/${created.body.data.hash}`)).status).toBe(200);
      } finally {
        await t.stop();
      }
    }
  });

  it('refuses a database with a newer version\'s migrations that lacks one of its own', async () => {
    const db = await freshDatabase(backend);
    cleanup.push(db.drop);
    const store = openStore(db.url);
    cleanup.push(() => store.close());
    await store.migrate();
    const k = kysely(store);
    const last = ALL[ALL.length - 1];
    await k.deleteFrom('kysely_migration').where('name', '=', last).execute();
    await k.insertInto('kysely_migration').values({ name: '9999_newer_release', timestamp: new Date().toISOString() }).execute();
    await expect(store.migrate()).rejects.toThrow(new RegExp(`another version \\(9999_newer_release\\) but lacks this version's ${last}`));
    await expect(store.migrate('check')).rejects.toThrow(/another version/);
  });
});

describe('instances starting at once on one fresh PostgreSQL database', () => {
  it('all come up and every migration is applied exactly once', async () => {
    const db = await freshDatabase('postgres');
    cleanup.push(db.drop);
    const n = 3;
    const started: TestGateway[] = [];
    const results = await Promise.allSettled(Array.from({ length: n }, () => startGateway('postgres', { databaseUrl: db.url })));
    for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
    cleanup.push(async () => void (await Promise.all(started.map((t) => t.stop()))));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    for (const t of started) expect((await fetch(`${t.url}/ready`)).status).toBe(200);

    const store = openStore(db.url);
    try {
      const rows = await sql<{ name: string; n: number }>`select name, count(*)::int as n from kysely_migration group by name order by name`.execute(kysely(store));
      expect(rows.rows).toEqual(ALL.map((name) => ({ name, n: 1 })));
      // One bootstrap: one organization, and the one management key every instance accepts.
      const orgs = await sql<{ n: number }>`select count(*)::int as n from organizations`.execute(kysely(store));
      expect(orgs.rows[0].n).toBe(1);
    } finally {
      await store.close();
    }
    // A key created on one instance works on the others (one database, one schema).
    const made = await started[0].call('POST', '/keys', { body: { name: 'shared' } });
    expect(made.status).toBe(201);
    for (const t of started.slice(1)) expect((await t.call('GET', `/keys/${made.body.data.hash}`)).status).toBe(200);
  });
});
