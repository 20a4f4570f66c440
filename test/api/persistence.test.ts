import { existsSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ADMIN_KEY, BACKENDS, createInferenceKey, freshDatabase, startGateway, type Backend, type TestGateway } from '../helpers.js';
import { KEY_PREFIX } from '../../src/core/keys.js';
import { expectError, expectStatus } from './util.js';

/** Every text-like value stored in the database, as one string per value (PostgreSQL). */
async function pgDump(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const out: string[] = [];
    const cols = await c.query<{ table_name: string; column_name: string }>(
      `select table_name, column_name from information_schema.columns
        where table_schema = 'public' and data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'ARRAY', 'USER-DEFINED')`,
    );
    expect(cols.rows.length).toBeGreaterThan(0);
    for (const { table_name, column_name } of cols.rows) {
      const r = await c.query(`select "${column_name}"::text as v from "${table_name}"`);
      for (const row of r.rows) if (row.v !== null) out.push(String(row.v));
    }
    // And each whole row as text, whatever the column types.
    const tables = await c.query<{ tablename: string }>(`select tablename from pg_tables where schemaname = 'public'`);
    for (const { tablename } of tables.rows) {
      const r = await c.query(`select t::text as v from "${tablename}" t`);
      for (const row of r.rows) out.push(String(row.v));
    }
    return out;
  } finally {
    await c.end();
  }
}

/** The raw bytes of the SQLite database and its write-ahead log. */
function sqliteBytes(url: string): Buffer {
  const path = url.slice('sqlite:'.length);
  const parts = [path, `${path}-wal`, `${path}-journal`].filter(existsSync).map((p) => readFileSync(p));
  expect(parts.length).toBeGreaterThan(0);
  return Buffer.concat(parts);
}

async function expectSecretsAbsent(backend: Backend, url: string, secrets: string[]): Promise<void> {
  // The secret, and its random part alone (in case a prefix were stored apart), in text and hex encodings.
  const needles = secrets.flatMap((s) => [s, s.slice(KEY_PREFIX.length)]);
  if (backend === 'sqlite') {
    const bytes = sqliteBytes(url);
    expect(bytes.length).toBeGreaterThan(0);
    for (const n of needles) {
      expect(bytes.includes(Buffer.from(n, 'utf8')), `secret found in the SQLite files`).toBe(false);
      expect(bytes.includes(Buffer.from(n, 'utf16le')), `secret found in the SQLite files (UTF-16)`).toBe(false);
    }
    return;
  }
  const values = await pgDump(url);
  expect(values.length).toBeGreaterThan(0);
  for (const n of needles) {
    for (const v of values) expect(v.includes(n), 'secret found in a PostgreSQL column').toBe(false);
  }
}

describe.each(BACKENDS)('Persistence and secrets (%s)', (backend) => {
  const cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
  });

  it('a key secret is never stored (database files / every text column) and never returned after creation', async () => {
    const db = await freshDatabase(backend);
    const t = await startGateway(backend, { databaseUrl: db.url, dropDatabase: db.drop });
    cleanup.push(() => t.close());

    const inf = await createInferenceKey(t, { name: 'secret inference', limit: 10 });
    const mgmt = await t.call('POST', '/keys', { body: { name: 'secret management', management: true } });
    expectStatus(mgmt, 201);
    const secrets = [ADMIN_KEY, inf.key, mgmt.body.key];
    for (const s of secrets) expect(s.startsWith(KEY_PREFIX)).toBe(true);

    // Never in any reply after creation.
    const replies = [
      await t.call('GET', '/keys?include_disabled=true'),
      await t.call('GET', `/keys/${inf.hash}`),
      await t.call('GET', `/keys/${mgmt.body.data.hash}`),
      await t.call('PATCH', `/keys/${inf.hash}`, { body: { name: 'renamed' } }),
      await t.call('GET', '/key', { key: inf.key }),
      await t.call('GET', '/key', { key: mgmt.body.key }),
      await t.call('GET', '/key'),
    ];
    for (const r of replies) {
      expectStatus(r, 200);
      const text = JSON.stringify(r.body);
      for (const s of secrets) {
        expect(text).not.toContain(s);
        expect(text).not.toContain(s.slice(KEY_PREFIX.length));
      }
    }
    // The label is a masked rendering.
    expect(inf.data.label).toMatch(/^sk-gw-v1-[0-9a-f]{3}\.\.\.[0-9a-f]{4}$/);

    await expectSecretsAbsent(backend, t.databaseUrl, secrets);
    // Also after a clean shutdown (SQLite checkpoints its WAL into the main file).
    await t.stop();
    await expectSecretsAbsent(backend, t.databaseUrl, secrets);

    // The search itself works: the hash, which is stored, is found.
    if (backend === 'sqlite') expect(sqliteBytes(t.databaseUrl).includes(Buffer.from(inf.hash))).toBe(true);
    else expect((await pgDump(t.databaseUrl)).some((v) => v.includes(inf.hash))).toBe(true);
  });

  it('a restart keeps all data: workspaces, keys (with their state), presets and versions, members; old keys still authenticate', async () => {
    const db = await freshDatabase(backend);
    let t: TestGateway = await startGateway(backend, { databaseUrl: db.url, dropDatabase: db.drop });
    cleanup.push(() => t.close());

    const ws = await t.call('POST', '/workspaces', {
      body: { name: 'Durable', slug: 'durable', description: 'kept', default_provider_sort: 'throughput', io_logging_api_key_ids: [7], io_logging_sampling_rate: 0.5, is_observability_broadcast_enabled: true },
    });
    expectStatus(ws, 201);
    const patchedWs = await t.call('PATCH', '/workspaces/durable', { body: { default_text_model: 'openai/gpt-4o' } });
    expectStatus(patchedWs, 200);
    const member = await t.call('POST', '/organization/members', { body: { email: 'keep@example.com', first_name: 'Kee', last_name: 'Per', role: 'org:admin' } });
    expectStatus(member, 201);
    const inf = await createInferenceKey(t, { name: 'durable inference', limit: 4.5, limit_reset: 'daily', workspace_id: 'durable', creator_user_id: member.body.data.id, expires_at: '2099-12-31T23:59:59.000Z' });
    const dis = await createInferenceKey(t, { name: 'durable disabled' });
    expectStatus(await t.call('PATCH', `/keys/${dis.hash}`, { body: { disabled: true } }), 200);
    const mgmt = await t.call('POST', '/keys', { body: { name: 'durable management', management: true } });
    expectStatus(mgmt, 201);
    expectStatus(await t.call('POST', '/presets/durable-preset/responses?workspace_id=durable', { body: { model: 'm/one', instructions: 'v1' } }), 200);
    expectStatus(await t.call('POST', '/presets/durable-preset/responses?workspace_id=durable', { body: { model: 'm/two', temperature: 0.4, metadata: { a: 'b' } } }), 200);
    expectStatus(await t.call('POST', '/presets/chatty/chat/completions', { body: { model: 'm/c', messages: [{ role: 'system', content: 'sys' }] } }), 200);

    const snapshot = async (g: TestGateway) => ({
      workspaces: (await g.call('GET', '/workspaces?limit=100')).body,
      workspace: (await g.call('GET', '/workspaces/durable')).body,
      members: (await g.call('GET', '/organization/members?limit=100')).body,
      keysDefault: (await g.call('GET', '/keys?include_disabled=true')).body,
      keysDurable: (await g.call('GET', '/keys?workspace_id=durable&include_disabled=true')).body,
      key: (await g.call('GET', `/keys/${inf.hash}`)).body,
      presetsDefault: (await g.call('GET', '/presets')).body,
      presetsDurable: (await g.call('GET', '/presets?workspace_id=durable')).body,
      preset: (await g.call('GET', '/presets/durable-preset?workspace_id=durable')).body,
      versions: (await g.call('GET', '/presets/durable-preset/versions?workspace_id=durable')).body,
      version1: (await g.call('GET', '/presets/durable-preset/versions/1?workspace_id=durable')).body,
    });
    const before = await snapshot(t);
    expect(before.workspaces.total_count).toBe(2);
    expect(before.members.total_count).toBe(2);
    expect(before.keysDefault.data).toHaveLength(3);
    expect(before.keysDurable.data).toHaveLength(1);
    expect(before.versions.total_count).toBe(2);
    expect(before.presetsDefault.total_count).toBe(1);

    await t.stop();
    // Same database, a different GATEWAY_ADMIN_KEY: it applies only to an empty database, so it is not a key now.
    const otherAdmin = 'sk-gw-v1-' + 'b'.repeat(64);
    t = await startGateway(backend, { databaseUrl: db.url, dropDatabase: db.drop, env: { GATEWAY_ADMIN_KEY: otherAdmin } });
    cleanup.push(() => t.close());

    const after = await snapshot(t);
    expect(after).toEqual(before);
    expect(after.workspace.data).toMatchObject({ default_text_model: 'openai/gpt-4o', io_logging_api_key_ids: [7], io_logging_sampling_rate: 0.5, is_observability_broadcast_enabled: true });
    expect(after.key.data).toMatchObject({ limit: 4.5, limit_reset: 'daily', creator_user_id: member.body.data.id, expires_at: '2099-12-31T23:59:59.000Z' });
    expect(after.version1.data).toMatchObject({ system_prompt: 'v1', config: { model: 'm/one' } });
    expect(after.preset.data.designated_version).toMatchObject({ version: 2, config: { model: 'm/two', temperature: 0.4, metadata: { a: 'b' } } });

    // Keys keep working (or not) exactly as before the restart.
    const me = await t.call('GET', '/key', { key: inf.key });
    expectStatus(me, 200);
    expect(me.body.data).toMatchObject({ label: inf.data.label, limit: 4.5, is_management_key: false });
    expectStatus(await t.call('GET', '/keys', { key: mgmt.body.key }), 200);
    expectStatus(await t.call('GET', '/keys', { key: ADMIN_KEY }), 200);
    expectError(await t.call('GET', '/key', { key: dis.key }), 401);
    expectError(await t.call('GET', '/keys', { key: otherAdmin }), 401);
    expectError(await t.call('GET', '/workspaces', { key: inf.key }), 403);

    // And the data stays writable: a new preset version continues the numbering.
    const v3 = await t.call('POST', '/presets/durable-preset/responses?workspace_id=durable', { body: { model: 'm/three' } });
    expectStatus(v3, 200);
    expect(v3.body.data.designated_version.version).toBe(3);
    expectError(await t.call('POST', '/workspaces', { body: { name: 'dup', slug: 'durable' } }), 400, { field: 'slug' });
    expectError(await t.call('POST', '/organization/members', { body: { email: 'keep@example.com' } }), 409);
  });
});
