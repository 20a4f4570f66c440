/**
 * A rolling update on PostgreSQL: the previous release (its whole src/ tree taken from git at BASE) serves on a
 * database it migrated; the current code starts on the same database and migrates it forward; then both serve side
 * by side. Checks: every table and column of the previous release's schema is still there with its type and
 * nullability; no column added to one of its tables is NOT NULL without a default (its inserts would fail); the old
 * code still writes and reads keys, chats (generation records, key usage), workspaces and presets on the upgraded
 * database, and each version reads what the other wrote. docs/operations.md, "Expand, then contract".
 *
 * BASE is the last release: move it forward at each release (any commit whose src/ builds on today's dependencies).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { stringify } from 'yaml';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { migrations } from '../../src/store/migrations/index.js';
import { simCatalog } from '../chat-helpers.js';
import { ADMIN_KEY, freshDatabase, startGateway, type TestGateway } from '../helpers.js';

/** The previous release: the commit before the deployment work (migrations 0001–0007). */
const BASE = '208daee2b7dc4d41ee555e6481716303aced55bf';
const ROOT = resolve(import.meta.dirname, '../..');

/** The previous release's src/ tree, inside the repository so that it resolves today's node_modules. */
function checkoutBase(): string {
  const dir = join(ROOT, '.scratch', `upgrade-base-${BASE.slice(0, 12)}`);
  if (existsSync(join(dir, 'src', 'gateway.ts'))) return dir;
  try {
    execFileSync('git', ['cat-file', '-e', `${BASE}^{commit}`], { cwd: ROOT, stdio: 'pipe' });
  } catch {
    throw new Error(`the rolling-upgrade test needs commit ${BASE} (the previous release) in this clone's history (git fetch --unshallow)`);
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tar = execFileSync('git', ['archive', '--format=tar', BASE, 'src'], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  return dir;
}

interface Column {
  table: string;
  column: string;
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}

async function columns(url: string): Promise<Column[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query(
      `select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
        where table_schema = 'public' and table_name not like 'kysely_%' order by table_name, ordinal_position`,
    );
    return r.rows.map((x) => ({ table: x.table_name, column: x.column_name, type: x.data_type, nullable: x.is_nullable === 'YES', hasDefault: x.column_default !== null }));
  } finally {
    await c.end();
  }
}

async function appliedNames(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query('select name from kysely_migration order by name')).rows.map((r) => r.name);
  } finally {
    await c.end();
  }
}

/** Minimal HTTP client of a running gateway (the old one has no test helpers of its own). */
function client(base: string) {
  return async (method: string, path: string, body?: unknown, key = ADMIN_KEY) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

describe('rolling update on PostgreSQL: the previous release and the current code on one database', () => {
  let sim: Simulator;
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let oldGw: any;
  let oldCall: ReturnType<typeof client>;
  let current: TestGateway;
  let before: Column[];
  let oldMigrations: string[];
  let forward: string[];
  const dir = mkdtempSync(join(tmpdir(), 'gw-upgrade-'));

  beforeAll(async () => {
    const base = checkoutBase();
    sim = await createSimulator();
    db = await freshDatabase('postgres');
    // The previous release, as it ran before the update: its config, its migrations, its code.
    const oldConfigFile = join(dir, 'old.yaml');
    writeFileSync(
      oldConfigFile,
      stringify({
        providers: [{ slug: 'sim-a', name: 'Sim A', protocol: 'openai', base_url: `${sim.url}/sim-a/v1`, no_auth: true }],
        models: [{ id: 'old/model', name: 'Old Model', context_length: 32000 }],
        endpoints: [{ model: 'old/model', provider: 'sim-a', upstream_model: 'old-a', pricing: { prompt: '0.000001', completion: '0.000002' } }],
      }),
    );
    const oldConfig = await import(pathToFileURL(join(base, 'src/config.ts')).href);
    const oldGateway = await import(pathToFileURL(join(base, 'src/gateway.ts')).href);
    const oldMig = await import(pathToFileURL(join(base, 'src/store/migrations/index.ts')).href);
    oldMigrations = Object.keys(oldMig.migrations('postgres')).sort();
    const config = oldConfig.loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      GATEWAY_DATABASE_URL: db.url,
      GATEWAY_ADMIN_KEY: ADMIN_KEY,
      GATEWAY_LOG_LEVEL: 'silent',
      GATEWAY_CONFIG: oldConfigFile,
      GATEWAY_DEFAULT_CATALOG: 'false',
    });
    oldGw = await oldGateway.createGateway(config);
    oldCall = client(await oldGw.listen());
    before = await columns(db.url);
  }, 120_000);

  afterAll(async () => {
    await current?.stop();
    await oldGw?.close();
    await sim?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  let oldKey: { key: string; hash: string };
  let oldGeneration: string;

  it('the previous release serves on the schema it migrated', async () => {
    expect(await appliedNames(db.url)).toEqual(oldMigrations);
    const made = await oldCall('POST', '/keys', { name: 'made by the old release', limit: 10 });
    expect(made.status).toBe(201);
    oldKey = { key: made.body.key, hash: made.body.data.hash };
    const chat = await oldCall('POST', '/chat/completions', { model: 'old/model', messages: [{ role: 'user', content: 'before the update' }] }, oldKey.key);
    expect(chat.status).toBe(200);
    oldGeneration = chat.body.id;
    expect((await oldCall('POST', '/workspaces', { name: 'Old WS', slug: 'old-ws' })).status).toBe(201);
    await oldGw.svc.recorder.flush();
  });

  it('the current code starts on it and migrates it forward', async () => {
    const file = join(dir, 'current.yaml');
    writeFileSync(file, stringify(simCatalog(sim.url)));
    current = await startGateway('postgres', { databaseUrl: db.url, env: { GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false' } });
    const now = Object.keys(migrations('postgres')).sort();
    const applied = await appliedNames(db.url);
    expect(applied).toEqual(now);
    forward = now.filter((n) => !oldMigrations.includes(n));
    // The previous release's migrations are a prefix of today's: history is never rewritten.
    expect(now.slice(0, oldMigrations.length)).toEqual(oldMigrations);
  });

  it('expand only: every old table and column is still there, with its type and nullability', async () => {
    const after = await columns(db.url);
    const byName = new Map(after.map((c) => [`${c.table}.${c.column}`, c]));
    const problems: string[] = [];
    for (const c of before) {
      const now = byName.get(`${c.table}.${c.column}`);
      if (!now) problems.push(`${c.table}.${c.column} was dropped or renamed (migrations ${forward.join(', ')})`);
      else if (now.type !== c.type) problems.push(`${c.table}.${c.column} changed type: ${c.type} → ${now.type}`);
      else if (c.nullable && !now.nullable) problems.push(`${c.table}.${c.column} became NOT NULL: the old release writes null there`);
    }
    // A column added to an old table must accept the old release's inserts, which do not name it.
    const oldTables = new Set(before.map((c) => c.table));
    const known = new Set(before.map((c) => `${c.table}.${c.column}`));
    for (const c of after) {
      if (oldTables.has(c.table) && !known.has(`${c.table}.${c.column}`) && !c.nullable && !c.hasDefault) {
        problems.push(`${c.table}.${c.column} was added NOT NULL without a default: the old release's inserts fail`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('the previous release keeps serving on the upgraded database: keys, chats, usage, workspaces, presets', async () => {
    const made = await oldCall('POST', '/keys', { name: 'made by the old release after the update' });
    expect(made.status).toBe(201);
    expect((await oldCall('GET', `/keys/${oldKey.hash}`)).status).toBe(200);
    expect((await oldCall('GET', '/keys')).body.data.map((k: { hash: string }) => k.hash)).toEqual(expect.arrayContaining([oldKey.hash, made.body.data.hash]));
    const chat = await oldCall('POST', '/chat/completions', { model: 'old/model', messages: [{ role: 'user', content: 'during the update' }] }, oldKey.key);
    expect(chat.status).toBe(200);
    await oldGw.svc.recorder.flush();
    expect((await oldCall('GET', `/generation?id=${chat.body.id}`)).status).toBe(200);
    const me = await oldCall('GET', '/key', undefined, oldKey.key);
    expect(me.status).toBe(200);
    expect(me.body.data.usage).toBeGreaterThan(0);
    expect((await oldCall('PATCH', `/keys/${made.body.data.hash}`, { disabled: true })).status).toBe(200);
    const preset = await oldCall('POST', '/presets/old-preset/chat/completions', { model: 'old/model', temperature: 0.5, messages: [{ role: 'system', content: 'Be brief.' }] });
    expect(preset.status).toBe(200);
    expect((await oldCall('GET', '/presets/old-preset')).status).toBe(200);
    expect((await oldCall('GET', '/workspaces')).status).toBe(200);
  });

  it('the current code reads what the previous release wrote, and the previous release reads what it writes', async () => {
    // Rows written by the old release (keys, generation records, usage) through the current code.
    const record = await current.call('GET', `/generation?id=${oldGeneration}`);
    expect(record.status).toBe(200);
    expect(record.body.data).toMatchObject({ id: oldGeneration, model: 'old/model' });
    const key = await current.call('GET', `/keys/${oldKey.hash}`);
    expect(key.status).toBe(200);
    expect(key.body.data.usage).toBeGreaterThan(0);
    const ws = await current.call('GET', '/workspaces');
    expect(ws.body.data.map((w: { slug: string }) => w.slug)).toContain('old-ws');
    const preset = await current.call('GET', '/presets/old-preset');
    expect(preset.status).toBe(200);
    // The old key chats through the current code; the old release reads that record and the usage it added.
    const chat = await current.call('POST', '/chat/completions', { key: oldKey.key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'after the update' }] } });
    expect(chat.status).toBe(200);
    await current.gw.svc.recorder.flush();
    const seenByOld = await oldCall('GET', `/generation?id=${chat.body.id}`);
    expect(seenByOld.status).toBe(200);
    expect(seenByOld.body.data).toMatchObject({ id: chat.body.id, model: 'test/alpha' });
    const made = await current.call('POST', '/keys', { body: { name: 'made by the current code' } });
    expect(made.status).toBe(201);
    expect((await oldCall('GET', `/keys/${made.body.data.hash}`)).status).toBe(200);
  });
});
