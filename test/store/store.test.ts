/**
 * The Store contract, run directly against both backends (SQLite file and a fresh PostgreSQL database).
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, freshDatabase } from '../helpers.js';
import { openStore, type SqlStore } from '../../src/store/sql-store.js';
import { ConflictError, type BootstrapInput, type KeyRow, type MemberRow, type WorkspaceRow } from '../../src/store/types.js';

let clock = Date.parse('2024-05-15T10:00:00.000Z');
/** Strictly increasing ISO timestamps (ms precision, as stored). */
const ts = () => new Date((clock += 1000)).toISOString();
let seq = 0;
const uid = (p: string) => `${p}_${++seq}_${randomUUID().slice(0, 8)}`;

function member(over: Partial<MemberRow> = {}): MemberRow {
  return { id: uid('user'), email: `${uid('m')}@example.com`, first_name: 'First', last_name: 'Last', role: 'org:member', created_at: ts(), ...over };
}

function workspace(over: Partial<WorkspaceRow> = {}): WorkspaceRow {
  return {
    id: randomUUID(),
    name: 'Workspace',
    slug: `ws-${++seq}`,
    description: null,
    default_text_model: null,
    default_image_model: null,
    default_provider_sort: null,
    io_logging_api_key_ids: null,
    io_logging_sampling_rate: 1,
    is_data_discount_logging_enabled: true,
    is_observability_broadcast_enabled: false,
    is_observability_io_logging_enabled: false,
    is_default: false,
    created_by: 'user_test',
    created_at: ts(),
    updated_at: null,
    ...over,
  };
}

function key(workspace_id: string, over: Partial<KeyRow> = {}): KeyRow {
  const hash = (randomUUID() + randomUUID()).replace(/-/g, '').slice(0, 64);
  return {
    hash,
    name: 'key',
    label: 'sk-gw-v1-abc...wxyz',
    kind: 'inference',
    disabled: false,
    limit: null,
    limit_reset: null,
    include_byok_in_limit: false,
    expires_at: null,
    creator_user_id: null,
    workspace_id,
    created_at: ts(),
    updated_at: null,
    rate_limit_requests: null,
    rate_limit_interval_s: null,
    rate_limit_tokens_per_minute: null,
    ...over,
  };
}

function bootstrapInput(over: { email?: string; slug?: string } = {}): BootstrapInput {
  const owner = member({ role: 'org:admin', email: over.email ?? 'owner@example.com' });
  const ws = workspace({ name: 'Default', slug: over.slug ?? 'default', is_default: true, created_by: owner.id });
  return {
    organization: { id: uid('org'), name: 'Org', created_at: ts() },
    member: owner,
    workspace: ws,
    key: key(ws.id, { kind: 'management', creator_user_id: owner.id, name: 'bootstrap' }),
  };
}

async function expectConflict(p: Promise<unknown>): Promise<void> {
  await expect(p).rejects.toBeInstanceOf(ConflictError);
}

describe.each(BACKENDS)('Store (%s)', (backend) => {
  let url: string;
  let drop: () => Promise<void>;
  let store: SqlStore;
  let boot: BootstrapInput;

  beforeAll(async () => {
    ({ url, drop } = await freshDatabase(backend));
    store = openStore(url);
  });
  afterAll(async () => {
    await store?.close();
    await drop?.();
  });

  it('reports its kind and answers ping', async () => {
    expect(store.kind).toBe(backend);
    expect(await store.ping()).toBe(true);
  });

  it('migrate applies every migration once; running it again is a no-op', async () => {
    const first = await store.migrate();
    expect(first.length).toBeGreaterThan(0);
    expect(first[0]).toBe('0001_init');
    expect(await store.migrate()).toEqual([]);
    // A second connection to the same database sees it migrated too.
    const other = openStore(url);
    try {
      expect(await other.migrate()).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('bootstrap is all-or-nothing', async () => {
    expect(await store.getOrganization()).toBeNull();
    const broken = bootstrapInput();
    // The key insert fails (NOT NULL): nothing of the four rows may remain.
    (broken.key as unknown as Record<string, unknown>).name = null;
    await expect(store.bootstrap(broken)).rejects.toThrow();
    expect(await store.getOrganization()).toBeNull();
    expect((await store.listMembers(0, 100)).total).toBe(0);
    expect((await store.listWorkspaces(0, 100)).total).toBe(0);
    expect(await store.getKey(broken.key.hash)).toBeNull();
    expect(await store.getDefaultWorkspace()).toBeNull();
  });

  it('bootstrap creates organization, owner, default workspace and key, and returns false the second time (also when raced)', async () => {
    boot = bootstrapInput();
    // Several instances starting at once: exactly one wins.
    const racers = [boot, bootstrapInput(), bootstrapInput()];
    const results = await Promise.all(racers.map((b) => store.bootstrap(b)));
    expect(results.filter(Boolean)).toHaveLength(1);
    boot = racers[results.indexOf(true)];

    const org = await store.getOrganization();
    expect(org).toEqual(boot.organization);
    expect((await store.listMembers(0, 100)).rows).toEqual([boot.member]);
    expect(await store.getDefaultWorkspace()).toEqual(boot.workspace);
    expect((await store.listWorkspaces(0, 100)).total).toBe(1);
    expect(await store.getKey(boot.key.hash)).toEqual(boot.key);
    expect(await store.countActiveManagementKeys()).toBe(1);

    expect(await store.bootstrap(bootstrapInput({ email: 'other@example.com', slug: 'other-default' }))).toBe(false);
    expect(await store.getOrganization()).toEqual(boot.organization);
    expect((await store.listMembers(0, 100)).total).toBe(1);
  });

  describe('members', () => {
    it('insert, get, list oldest first with total, delete', async () => {
      const a = member({ first_name: 'A' });
      const b = member({ first_name: 'B', role: 'org:admin' });
      await store.insertMember(a);
      await store.insertMember(b);
      expect(await store.getMember(a.id)).toEqual(a);
      expect(await store.getMember('user_missing')).toBeNull();
      const page = await store.listMembers(0, 100);
      expect(page.total).toBe(3);
      expect(page.rows.map((m) => m.id)).toEqual([boot.member.id, a.id, b.id]);
      const second = await store.listMembers(1, 1);
      expect(second).toEqual({ rows: [a], total: 3 });
      expect(await store.deleteMember(a.id)).toBe(true);
      expect(await store.deleteMember(a.id)).toBe(false);
      expect(await store.getMember(a.id)).toBeNull();
      expect(await store.deleteMember(b.id)).toBe(true);
    });

    it('a duplicate email → ConflictError', async () => {
      const m = member();
      await store.insertMember(m);
      await expectConflict(store.insertMember(member({ email: m.email })));
      await expectConflict(store.insertMember(member({ email: boot.member.email })));
      await expectConflict(store.insertMember({ ...member(), id: m.id }));
    });

    it('refuses to remove the last admin or a member owning active keys; detaches disabled keys', async () => {
      await expectConflict(store.deleteMember(boot.member.id));
      expect(await store.getMember(boot.member.id)).toEqual(boot.member);

      const owner = member();
      await store.insertMember(owner);
      const k = key(boot.workspace.id, { creator_user_id: owner.id });
      await store.insertKey(k);
      await expectConflict(store.deleteMember(owner.id));
      await store.updateKey(k.hash, { disabled: true });
      expect(await store.deleteMember(owner.id)).toBe(true);
      expect((await store.getKey(k.hash))?.creator_user_id).toBeNull();

      // Another admin may go while the owner remains.
      const admin = member({ role: 'org:admin' });
      await store.insertMember(admin);
      expect(await store.deleteMember(admin.id)).toBe(true);
    });
  });

  describe('workspaces', () => {
    it('insert, get by id or slug, list, update, with every type kept', async () => {
      const w = workspace({
        name: 'Typed',
        description: 'desc',
        default_text_model: 'a/b',
        default_image_model: 'c/d',
        default_provider_sort: 'latency',
        io_logging_api_key_ids: [1, 2],
        io_logging_sampling_rate: 0.25,
        is_data_discount_logging_enabled: false,
        is_observability_broadcast_enabled: true,
        is_observability_io_logging_enabled: true,
      });
      await store.insertWorkspace(w);
      expect(await store.getWorkspace(w.id)).toEqual(w);
      expect(await store.getWorkspace(w.slug)).toEqual(w);
      expect(await store.getWorkspace('missing')).toBeNull();
      expect((await store.getDefaultWorkspace())?.id).toBe(boot.workspace.id);

      const list = await store.listWorkspaces(0, 100);
      expect(list.total).toBe(list.rows.length);
      expect(list.rows[0].id).toBe(boot.workspace.id);
      expect(list.rows.at(-1)).toEqual(w);
      expect((await store.listWorkspaces(list.total - 1, 10)).rows).toEqual([w]);

      const updatedAt = ts();
      const updated = await store.updateWorkspace(w.id, { name: 'Renamed', description: null, io_logging_api_key_ids: null, is_observability_broadcast_enabled: false, updated_at: updatedAt });
      expect(updated).toEqual({ ...w, name: 'Renamed', description: null, io_logging_api_key_ids: null, is_observability_broadcast_enabled: false, updated_at: updatedAt });
      // id, created_at, created_by and is_default are never changed by an update.
      const same = await store.updateWorkspace(w.id, { id: 'x', created_at: ts(), created_by: 'y', is_default: true } as Partial<WorkspaceRow>);
      expect(same).toEqual(updated);
      expect(await store.updateWorkspace(randomUUID(), { name: 'nobody' })).toBeNull();
    });

    it('a duplicate slug → ConflictError, on insert and on update', async () => {
      const w = workspace();
      await store.insertWorkspace(w);
      await expectConflict(store.insertWorkspace(workspace({ slug: w.slug })));
      const other = workspace();
      await store.insertWorkspace(other);
      await expectConflict(store.updateWorkspace(other.id, { slug: w.slug }));
      expect((await store.getWorkspace(other.id))?.slug).toBe(other.slug);
    });

    it('deleteWorkspace refuses while keys are active, then removes its keys, usage and presets', async () => {
      const w = workspace();
      await store.insertWorkspace(w);
      const k = key(w.id);
      await store.insertKey(k);
      await store.addKeyUsage([{ key_hash: k.hash, day: '2024-05-15', usage: 1, byok_usage: 0, requests: 1 }]);
      const { preset, version } = await store.savePresetVersion({ workspace_id: w.id, slug: 'p', creator_id: 'c', config: { model: 'm' }, system_prompt: null, now: ts() });

      await expectConflict(store.deleteWorkspace(w.id));
      expect(await store.getWorkspace(w.id)).not.toBeNull();
      expect(await store.getPreset(w.id, 'p')).not.toBeNull();

      await store.updateKey(k.hash, { disabled: true });
      expect(await store.deleteWorkspace(w.id)).toBe(true);
      expect(await store.getWorkspace(w.id)).toBeNull();
      expect(await store.getKey(k.hash)).toBeNull();
      expect(await store.getPreset(w.id, 'p')).toBeNull();
      expect(await store.getPresetVersionById(version.id)).toBeNull();
      expect((await store.listPresetVersions(preset.id, 0, 10)).total).toBe(0);
      expect((await store.getKeyUsage([k.hash], { day: '2024-05-15', week: '2024-05-13', month: '2024-05-01' })).get(k.hash)?.usage).toBe(0);
      expect(await store.deleteWorkspace(w.id)).toBe(false);
    });
  });

  describe('keys', () => {
    it('insert, get, list (active only unless asked, newest first, paged), update, delete, count management keys', async () => {
      const w = workspace();
      await store.insertWorkspace(w);
      const a = key(w.id, { name: 'a', limit: 2.5, limit_reset: 'weekly', include_byok_in_limit: true, expires_at: '2099-01-01T00:00:00.000Z' });
      const b = key(w.id, { name: 'b' });
      const c = key(w.id, { name: 'c', kind: 'management' });
      for (const k of [a, b, c]) await store.insertKey(k);
      expect(await store.getKey(a.hash)).toEqual(a);
      expect(await store.getKey('0'.repeat(64))).toBeNull();
      await expectConflict(store.insertKey({ ...key(w.id), hash: a.hash }));

      expect((await store.listKeys({ workspace_id: w.id, include_disabled: false, offset: 0, limit: 100 })).map((k) => k.name)).toEqual(['c', 'b', 'a']);
      expect(await store.countActiveManagementKeys()).toBe(2);

      const updatedAt = ts();
      const upd = await store.updateKey(b.hash, { disabled: true, name: 'b2', limit: 0, limit_reset: 'daily', updated_at: updatedAt });
      expect(upd).toEqual({ ...b, disabled: true, name: 'b2', limit: 0, limit_reset: 'daily', updated_at: updatedAt });
      await store.updateKey(c.hash, { disabled: true });
      expect(await store.countActiveManagementKeys()).toBe(1);

      expect((await store.listKeys({ workspace_id: w.id, include_disabled: false, offset: 0, limit: 100 })).map((k) => k.name)).toEqual(['a']);
      expect((await store.listKeys({ workspace_id: w.id, include_disabled: true, offset: 0, limit: 100 })).map((k) => k.name)).toEqual(['c', 'b2', 'a']);
      expect((await store.listKeys({ workspace_id: w.id, include_disabled: true, offset: 1, limit: 1 })).map((k) => k.name)).toEqual(['b2']);
      expect(await store.listKeys({ workspace_id: boot.workspace.id, include_disabled: true, offset: 0, limit: 100 })).not.toContainEqual(expect.objectContaining({ hash: a.hash }));

      expect(await store.deleteKey(a.hash)).toBe(true);
      expect(await store.deleteKey(a.hash)).toBe(false);
      expect(await store.getKey(a.hash)).toBeNull();
      expect(await store.updateKey(a.hash, { name: 'ghost' })).toBeNull();
    });

    it('addKeyUsage sums per key and day; getKeyUsage windows (daily, weekly, monthly) are right', async () => {
      const k = key(boot.workspace.id);
      const quiet = key(boot.workspace.id);
      await store.insertKey(k);
      await store.insertKey(quiet);
      const d = (day: string, usage: number, byok_usage = 0) => ({ key_hash: k.hash, day, usage, byok_usage, requests: 1 });
      await store.addKeyUsage([
        d('2024-04-30', 1, 0.5), // last month: all-time only
        d('2024-05-01', 2), // this month
        d('2024-05-12', 4, 1), // this month, previous week (Sunday)
        d('2024-05-13', 8), // this week (Monday)
        d('2024-05-15', 16, 2), // today
        d('2024-05-15', 0.25), // same key and day in one batch: summed
      ]);
      await store.addKeyUsage([d('2024-05-15', 0.125)]); // a later batch adds to the same day
      await store.addKeyUsage([]);

      const w = { day: '2024-05-15', week: '2024-05-13', month: '2024-05-01' };
      const usage = await store.getKeyUsage([k.hash, quiet.hash, 'f'.repeat(64)], w);
      expect(usage.get(k.hash)).toEqual({
        usage: 31.375,
        usage_daily: 16.375,
        usage_weekly: 24.375,
        usage_monthly: 30.375,
        byok_usage: 3.5,
        byok_usage_daily: 2,
        byok_usage_weekly: 2,
        byok_usage_monthly: 3,
      });
      const zero = { usage: 0, usage_daily: 0, usage_weekly: 0, usage_monthly: 0, byok_usage: 0, byok_usage_daily: 0, byok_usage_weekly: 0, byok_usage_monthly: 0 };
      expect(usage.get(quiet.hash)).toEqual(zero);
      expect(usage.get('f'.repeat(64))).toEqual(zero);
      expect((await store.getKeyUsage([], w)).size).toBe(0);

      // The next day, "daily" starts over; the week and month go on.
      const next = await store.getKeyUsage([k.hash], { day: '2024-05-16', week: '2024-05-13', month: '2024-05-01' });
      expect(next.get(k.hash)).toMatchObject({ usage_daily: 0, usage_weekly: 24.375, usage_monthly: 30.375, byok_usage_daily: 0 });

      // Many concurrent batches lose nothing.
      await Promise.all(Array.from({ length: 10 }, () => store.addKeyUsage([{ key_hash: quiet.hash, day: '2024-05-15', usage: 0.5, byok_usage: 0.25, requests: 1 }])));
      expect((await store.getKeyUsage([quiet.hash], w)).get(quiet.hash)).toMatchObject({ usage: 5, usage_daily: 5, byok_usage: 2.5 });

      // Deleting a key deletes its usage.
      await store.deleteKey(quiet.hash);
      expect((await store.getKeyUsage([quiet.hash], w)).get(quiet.hash)).toEqual(zero);
    });

    it('addKeyTokens sums per key and minute and drops old minutes; keyTokensInMinute reads one minute, through the primary key', async () => {
      const [k1, k2, k3] = ['1', '2', '3'].map((c) => c.repeat(64));
      const M = 29_000_000;
      await store.addKeyTokens([{ key_hash: k1, minute: M, tokens: 10 }, { key_hash: k2, minute: M, tokens: 5 }, { key_hash: k1, minute: M, tokens: 7 }, { key_hash: k1, minute: M - 1, tokens: 100 }], M - 2);
      // Concurrent batches (two instances) add up.
      await Promise.all(Array.from({ length: 10 }, () => store.addKeyTokens([{ key_hash: k2, minute: M, tokens: 1 }, { key_hash: k1, minute: M, tokens: 1 }], M - 2)));
      expect(await store.keyTokensInMinute([k1], M)).toBe(27);
      expect(await store.keyTokensInMinute([k1, k2, k3], M)).toBe(42);
      expect(await store.keyTokensInMinute([k1], M - 1)).toBe(100);
      expect(await store.keyTokensInMinute([], M)).toBe(0);
      // Minutes before `keepFrom` are dropped by the next write.
      await store.addKeyTokens([{ key_hash: k3, minute: M + 5, tokens: 2 }], M + 3);
      expect(await store.keyTokensInMinute([k1, k2], M)).toBe(0);
      expect(await store.keyTokensInMinute([k1], M - 1)).toBe(0);
      expect(await store.keyTokensInMinute([k3], M + 5)).toBe(2);
      // The seed's read is an index search, never a scan of the table.
      const db = (store as unknown as { db: Kysely<any> }).db;
      const q = sql`select sum(tokens) from key_tokens_minute where minute = ${M} and key_hash in (${k1}, ${k2})`;
      if (backend === 'sqlite') {
        const plan = (await sql<{ detail: string }>`explain query plan ${q}`.execute(db)).rows.map((r) => r.detail).join('\n');
        expect(plan).toMatch(/SEARCH key_tokens_minute USING (COVERING )?INDEX/);
      } else {
        const plan = await db.transaction().execute(async (trx) => {
          await sql`set local enable_seqscan = off`.execute(trx);
          return (await sql<{ 'QUERY PLAN': string }>`explain ${q}`.execute(trx)).rows.map((r) => r['QUERY PLAN']).join('\n');
        });
        expect(plan).toMatch(/Index (Only )?Scan using key_tokens_minute_pk/);
      }
    });

    it('addKeyTokens writes many keys in a few multi-row statements; keyTokensInMinute reads more keys than a statement takes parameters', { timeout: 60_000 }, async () => {
      const M = 29_100_000;
      // 25,000 keys: 75,000 parameters in one statement would pass both limits (SQLite 32,766, PostgreSQL 65,535).
      const hashes = Array.from({ length: 25_000 }, (_, i) => `t${String(i).padStart(63, '0')}`);
      const db = (store as unknown as { db: Kysely<any> }).db;
      let statements = 0;
      (store as unknown as { db: Kysely<any> }).db = db.withPlugin({
        transformQuery: (a) => (statements++, a.node),
        transformResult: async (a) => a.result,
      });
      try {
        await store.addKeyTokens(hashes.map((key_hash, i) => ({ key_hash, minute: M, tokens: 1 + (i % 3) })), M - 10);
        await store.addKeyTokens(hashes.slice(0, 3).map((key_hash) => ({ key_hash, minute: M, tokens: 10 })), M - 10);
      } finally {
        (store as unknown as { db: Kysely<any> }).db = db;
      }
      expect(statements).toBeLessThanOrEqual(10); // before: one INSERT per row (25,004 statements)
      const total = hashes.reduce((n, _, i) => n + 1 + (i % 3), 0) + 30;
      // 40,000 keys (25,000 with tokens): more than SQLite's parameter limit in one `in (…)`.
      const asked = hashes.concat(Array.from({ length: 15_000 }, (_, i) => `u${String(i).padStart(63, '0')}`));
      expect(await store.keyTokensInMinute(asked, M)).toBe(total);
      expect(await store.keyTokensInMinute(hashes.slice(0, 3), M)).toBe(1 + 2 + 3 + 30);
    });
  });

  describe('presets', () => {
    it('savePresetVersion creates version 1, then adds and designates the next; reads by slug, number and id', async () => {
      const now1 = ts();
      const first = await store.savePresetVersion({ workspace_id: boot.workspace.id, slug: 'alpha', creator_id: 'user_x', config: { model: 'm/1', nested: { a: [1, 2] } }, system_prompt: 'sys', now: now1 });
      expect(first.created).toBe(true);
      expect(first.preset).toMatchObject({ workspace_id: boot.workspace.id, slug: 'alpha', name: 'alpha', description: null, status: 'active', status_updated_at: null, creator_user_id: 'user_x', created_at: now1, updated_at: now1 });
      expect(first.version).toMatchObject({ preset_id: first.preset.id, version: 1, config: { model: 'm/1', nested: { a: [1, 2] } }, system_prompt: 'sys', creator_id: 'user_x' });
      expect(first.preset.designated_version_id).toBe(first.version.id);
      expect(await store.getPreset(boot.workspace.id, 'alpha')).toEqual(first.preset);

      const now2 = ts();
      const second = await store.savePresetVersion({ workspace_id: boot.workspace.id, slug: 'alpha', creator_id: 'user_y', config: {}, system_prompt: null, now: now2 });
      expect(second.created).toBe(false);
      expect(second.version.version).toBe(2);
      expect(second.preset).toEqual({ ...first.preset, designated_version_id: second.version.id, updated_at: now2 });
      expect(await store.getPreset(boot.workspace.id, 'alpha')).toEqual(second.preset);

      expect(await store.getPresetVersion(first.preset.id, 1)).toEqual(first.version);
      expect(await store.getPresetVersion(first.preset.id, 2)).toEqual(second.version);
      expect(await store.getPresetVersion(first.preset.id, 3)).toBeNull();
      expect(await store.getPresetVersionById(second.version.id)).toEqual(second.version);
      expect(await store.getPresetVersionById(randomUUID())).toBeNull();
      const versions = await store.listPresetVersions(first.preset.id, 0, 10);
      expect(versions).toEqual({ rows: [first.version, second.version], total: 2 });
      expect(await store.listPresetVersions(first.preset.id, 1, 10)).toEqual({ rows: [second.version], total: 2 });

      // The same slug in another workspace is another preset.
      const w = workspace();
      await store.insertWorkspace(w);
      const elsewhere = await store.savePresetVersion({ workspace_id: w.id, slug: 'alpha', creator_id: 'c', config: {}, system_prompt: null, now: ts() });
      expect(elsewhere.created).toBe(true);
      expect(elsewhere.preset.id).not.toBe(first.preset.id);

      await store.savePresetVersion({ workspace_id: boot.workspace.id, slug: 'beta', creator_id: 'c', config: {}, system_prompt: null, now: ts() });
      const list = await store.listPresets(boot.workspace.id, 0, 10);
      expect(list.total).toBe(2);
      expect(list.rows.map((p) => p.slug)).toEqual(['beta', 'alpha']); // most recently updated first
      expect((await store.listPresets(boot.workspace.id, 1, 1)).rows.map((p) => p.slug)).toEqual(['alpha']);
      expect(await store.getPreset(boot.workspace.id, 'missing')).toBeNull();
    });

    it('concurrent savePresetVersion calls never produce the same number (losers get ConflictError)', async () => {
      const save = (slug: string, i: number) =>
        store.savePresetVersion({ workspace_id: boot.workspace.id, slug, creator_id: 'c', config: { i }, system_prompt: null, now: new Date().toISOString() });

      for (const slug of ['race-new', 'race-existing']) {
        if (slug === 'race-existing') await save(slug, -1);
        const already = slug === 'race-existing' ? 1 : 0;
        const settled = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => save(slug, i)));
        const ok = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        for (const r of settled) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConflictError);
        expect(ok.length).toBeGreaterThanOrEqual(1);
        const numbers = ok.map((r) => r.version.version);
        expect(new Set(numbers).size).toBe(numbers.length);

        const preset = await store.getPreset(boot.workspace.id, slug);
        const versions = await store.listPresetVersions(preset!.id, 0, 100);
        expect(versions.total).toBe(already + ok.length);
        expect(versions.rows.map((v) => v.version)).toEqual(Array.from({ length: versions.total }, (_, i) => i + 1));
        // The designated version is the newest one.
        expect(preset!.designated_version_id).toBe(versions.rows.at(-1)!.id);
        // Exactly one call created the preset.
        if (slug === 'race-new') expect(ok.filter((r) => r.created)).toHaveLength(1);
      }
    });
  });
});

describe.each(BACKENDS)('migration 0007: workspace members (%s)', (backend) => {
  it('gives every existing workspace but the default one its creator as an admin member', async () => {
    const { Migrator } = await import('kysely');
    const { migrations } = await import('../../src/store/migrations/index.js');
    const db = await freshDatabase(backend);
    const store = openStore(db.url);
    try {
      const kysely = (store as unknown as { db: import('kysely').Kysely<any> }).db;
      const migrator = new Migrator({ db: kysely, provider: { getMigrations: async () => migrations(store.kind) } });
      const before = await migrator.migrateTo('0006_video_reservations');
      expect(before.error).toBeUndefined();
      const creator = member();
      await store.insertMember(creator);
      const made = workspace({ created_by: creator.id });
      const byOther = workspace({ created_by: 'system' }); // not a member: no membership
      const def = workspace({ created_by: creator.id, is_default: true });
      for (const w of [made, byOther, def]) await store.insertWorkspace(w);
      const applied = await migrator.migrateTo('0007_workspace_members');
      expect(applied.error).toBeUndefined();
      expect(applied.results?.map((r) => r.migrationName)).toEqual(['0007_workspace_members']);
      const rows = (await store.listWorkspaceMembers(made.id, 0, 10)).rows;
      expect(rows).toEqual([expect.objectContaining({ workspace_id: made.id, user_id: creator.id, role: 'admin', created_at: made.created_at })]);
      expect((await store.listWorkspaceMembers(byOther.id, 0, 10)).total).toBe(0);
      expect((await store.listWorkspaceMembers(def.id, 0, 10)).total).toBe(0);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
