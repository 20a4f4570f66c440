/**
 * BYOK credentials (docs/byok.md): /byok management, secrets encrypted at rest, a workspace's credentials used for
 * its keys only, the routing order (prioritized BYOK by sort_order → the operator's shared key → fallback BYOK;
 * always_use), rotation of a credential and of GATEWAY_ENCRYPTION_KEY, is_byok and byok_usage, and BYOK spend in the
 * key's limit only with include_byok_in_limit.
 *
 * Catalog: test/own is served by sim-own (no operator key: BYOK only) and sim-pool (operator key `operator-pool-key`),
 * both priced like test/alpha ($0.000001 prompt, $0.000002 completion per token).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { SecretKeyring } from '../../src/services/secrets-crypto.js';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { PRICES, simCatalog, startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { createInferenceKey, startGateway, startTwoInstances, type TestGateway } from '../helpers.js';

const ENC_A = 'byok-test-encryption-key-A-0123456789abcdef';
const ENC_B = 'byok-test-encryption-key-B-fedcba9876543210';
const SECRET = 'sk-own-SECRET-7c1f0e9d2b4a6c8e';

function extraCatalog(simUrl: string) {
  const params = ['temperature', 'max_tokens', 'tools', 'tool_choice'];
  return {
    providers: [
      { slug: 'sim-own', name: 'Sim Own', protocol: 'openai', base_url: `${simUrl}/sim-own/v1`, data_policy: { training: false, retains_prompts: false, zdr: true } },
      { slug: 'sim-pool', name: 'Sim Pool', protocol: 'openai', base_url: `${simUrl}/sim-pool/v1`, api_key: 'operator-pool-key', data_policy: { training: false, retains_prompts: false, zdr: true } },
    ],
    models: [{ id: 'test/own', name: 'Test Own', context_length: 32000 }],
    endpoints: [
      { model: 'test/own', provider: 'sim-own', upstream_model: 'own-1', pricing: PRICES.a, supported_parameters: params },
      { model: 'test/own', provider: 'sim-pool', upstream_model: 'own-1', pricing: PRICES.a, supported_parameters: params },
    ],
  };
}

describe('BYOK (SQLite)', () => {
  let env: ChatEnv;
  let wsId: string;
  let wsKey: { key: string; hash: string };
  beforeAll(async () => {
    env = await startChatEnv('sqlite', { env: { GATEWAY_ENCRYPTION_KEY: ENC_A }, catalog: extraCatalog });
    const ws = await env.t.call('POST', '/workspaces', { body: { name: 'Team A', slug: 'team-a' } });
    wsId = ws.body.data.id;
    wsKey = await createInferenceKey(env.t, { name: 'team-a key', workspace_id: wsId });
  });
  afterAll(async () => env?.close());

  const client = (key: string) => new OpenAI({ baseURL: env.t.api, apiKey: key, maxRetries: 0 });
  const ask = (key: string, only: string[]) =>
    client(key).chat.completions.create({ model: 'test/own', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, provider: { only } } as never) as unknown as Promise<OpenAI.ChatCompletion & { usage: { is_byok: boolean; cost: number } }>;
  /** The keys each provider received, in order, since `from`. */
  const sentKeys = (provider: string, from: number) => env.sim.requests.filter((r) => r.provider === provider && r.seq > from).map((r) => String(r.headers.authorization ?? '').replace(/^Bearer /, ''));
  const lastSeq = () => env.sim.requests.at(-1)?.seq ?? 0;

  it('creates, lists, reads, updates and deletes credentials; the key is never returned', async () => {
    const created = await env.t.call('POST', '/byok', { body: { provider: 'sim-own', key: SECRET, name: 'Own', workspace_id: 'team-a' } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ provider: 'sim-own', workspace_id: wsId, name: 'Own', label: 'sk-...6c8e', disabled: false, is_fallback: false, always_use: false, sort_order: 0, allowed_models: null, allowed_api_key_hashes: null, allowed_user_ids: null });
    const id = created.body.data.id;
    const list = await env.t.call('GET', '/byok?workspace_id=team-a');
    expect(list.body).toMatchObject({ total_count: 1, data: [{ id }] });
    expect((await env.t.call('GET', '/byok')).body.total_count).toBe(0); // the default workspace has none
    expect((await env.t.call('GET', `/byok/${id}`)).body.data.id).toBe(id);
    const patched = await env.t.call('PATCH', `/byok/${id}`, { body: { name: 'Renamed', allowed_models: ['test/own'] } });
    expect(patched.body.data).toMatchObject({ name: 'Renamed', allowed_models: ['test/own'], label: 'sk-...6c8e' });
    for (const r of [created, list, patched]) expect(JSON.stringify(r.body)).not.toContain(SECRET);
    expect((await env.t.call('DELETE', `/byok/${id}`)).body).toEqual({ deleted: true });
    expect((await env.t.call('GET', `/byok/${id}`)).status).toBe(404);
    expect((await env.t.call('PATCH', `/byok/${id}`, { body: { name: 'x' } })).status).toBe(404);
  });

  it('validates input with a 400 naming the field', async () => {
    const bad = async (body: unknown, field: string) => {
      const r = await env.t.call('POST', '/byok', { body });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toContain(field);
    };
    await bad({ provider: 'nope', key: 'k' }, 'provider');
    await bad({ provider: 'sim-own' }, 'key');
    await bad({ provider: 'sim-own', key: '' }, 'key');
    await bad({ provider: 'sim-own', key: 'k', allowed_api_key_hashes: [] }, 'allowed_api_key_hashes');
    await bad({ provider: 'sim-own', key: 'k', allowed_api_key_hashes: ['f'.repeat(64)] }, 'allowed_api_key_hashes');
    await bad({ provider: 'sim-own', key: 'k', sort_order: -1 }, 'sort_order');
    await bad({ provider: 'sim-own', key: 'k', secret: 'x' }, 'secret');
    expect((await env.t.call('GET', '/byok/not-a-uuid')).status).toBe(400);
    // Inference keys cannot manage credentials.
    expect((await env.t.call('GET', '/byok', { key: wsKey.key })).status).toBe(403);
  });

  it("a workspace's credential serves its keys only, with is_byok, and the secret is not in the database file", async () => {
    const created = await env.t.call('POST', '/byok', { body: { provider: 'sim-own', key: SECRET, workspace_id: wsId } });
    const from = lastSeq();
    const r = await ask(wsKey.key, ['sim-own']);
    expect(r.usage.is_byok).toBe(true);
    expect(sentKeys('sim-own', from)).toEqual([SECRET]);
    // A key of another workspace: sim-own has no operator key, so nothing can serve it.
    const other = await ask(env.key, ['sim-own']).catch((e: { status?: number }) => e.status);
    expect(other).toBe(404);
    // Stored sealed: neither the database file nor its WAL holds the secret.
    await env.t.gw.svc.recorder.flush();
    const file = env.t.databaseUrl.replace(/^sqlite:/, '');
    for (const f of [file, `${file}-wal`]) if (existsSync(f)) expect(readFileSync(f).includes(Buffer.from(SECRET))).toBe(false);
    expect(readFileSync(file).length).toBeGreaterThan(0);
    await env.t.call('DELETE', `/byok/${created.body.data.id}`);
    expect(await ask(wsKey.key, ['sim-own']).catch((e: { status?: number }) => e.status)).toBe(404);
  });

  it('routes prioritized credentials by sort_order, then the shared key, then fallback credentials; always_use drops the shared key', async () => {
    const mk = async (key: string, extra: Record<string, unknown> = {}) => (await env.t.call('POST', '/byok', { body: { provider: 'sim-pool', key, workspace_id: wsId, ...extra } })).body.data.id as string;
    const fb = await mk('k-fallback', { is_fallback: true, sort_order: 0 });
    const p1 = await mk('k-prio-1', { sort_order: 5 });
    const p0 = await mk('k-prio-0', { sort_order: 1 });
    try {
      let from = lastSeq();
      expect((await ask(wsKey.key, ['sim-pool'])).usage.is_byok).toBe(true);
      expect(sentKeys('sim-pool', from)).toEqual(['k-prio-0']);

      // The prioritized ones refused: the operator's key serves (not BYOK).
      env.sim.setKnobs('sim-pool', { rejectKeys: ['k-prio-0', 'k-prio-1'] });
      from = lastSeq();
      expect((await ask(wsKey.key, ['sim-pool'])).usage.is_byok).toBe(false);
      expect(sentKeys('sim-pool', from)).toEqual(['k-prio-0', 'k-prio-1', 'operator-pool-key']);

      // The operator's key refused too: the fallback credential.
      env.sim.setKnobs('sim-pool', { rejectKeys: ['k-prio-0', 'k-prio-1', 'operator-pool-key'] });
      from = lastSeq();
      expect((await ask(wsKey.key, ['sim-pool'])).usage.is_byok).toBe(true);
      expect(sentKeys('sim-pool', from)).toEqual(['k-prio-0', 'k-prio-1', 'operator-pool-key', 'k-fallback']);

      // always_use on a credential: no shared attempt for this provider.
      await env.t.call('PATCH', `/byok/${p1}`, { body: { always_use: true } });
      from = lastSeq();
      await ask(wsKey.key, ['sim-pool']);
      expect(sentKeys('sim-pool', from)).toEqual(['k-prio-0', 'k-prio-1', 'k-fallback']);

      // Another workspace's key only ever sees the operator key.
      env.sim.setKnobs('sim-pool', { rejectKeys: null });
      from = lastSeq();
      expect((await ask(env.key, ['sim-pool'])).usage.is_byok).toBe(false);
      expect(sentKeys('sim-pool', from)).toEqual(['operator-pool-key']);

      // allowed_api_key_hashes: a credential restricted to another key is skipped.
      const other = await createInferenceKey(env.t, { name: 'team-a other', workspace_id: wsId });
      await env.t.call('PATCH', `/byok/${p0}`, { body: { allowed_api_key_hashes: [other.hash] } });
      from = lastSeq();
      await ask(wsKey.key, ['sim-pool']);
      expect(sentKeys('sim-pool', from)).toEqual(['k-prio-1']);
      // disabled: skipped too.
      await env.t.call('PATCH', `/byok/${p1}`, { body: { disabled: true } });
      from = lastSeq();
      await ask(wsKey.key, ['sim-pool']);
      expect(sentKeys('sim-pool', from)).toEqual(['operator-pool-key']);
    } finally {
      env.sim.setKnobs('sim-pool', { rejectKeys: null });
      for (const id of [fb, p0, p1]) await env.t.call('DELETE', `/byok/${id}`);
    }
  });

  it('PATCH with key rotates the credential: the next request sends the new key', async () => {
    const id = (await env.t.call('POST', '/byok', { body: { provider: 'sim-own', key: 'sk-old-key-0000000000', workspace_id: wsId } })).body.data.id;
    let from = lastSeq();
    await ask(wsKey.key, ['sim-own']);
    expect(sentKeys('sim-own', from)).toEqual(['sk-old-key-0000000000']);
    const rotated = await env.t.call('PATCH', `/byok/${id}`, { body: { key: 'sk-new-key-1111111111' } });
    expect(rotated.body.data.label).toBe('sk-...1111');
    from = lastSeq();
    await ask(wsKey.key, ['sim-own']);
    expect(sentKeys('sim-own', from)).toEqual(['sk-new-key-1111111111']);
    await env.t.call('DELETE', `/byok/${id}`);
  });

  it("BYOK spend is byok_usage, and counts in the key's limit only with include_byok_in_limit", async () => {
    const id = (await env.t.call('POST', '/byok', { body: { provider: 'sim-own', key: SECRET, workspace_id: wsId } })).body.data.id;
    try {
      // One request costs $0.00003 and reserves its bound (~$0.000052: the prompt's bytes + 12 output tokens). Not
      // counted, BYOK never reserves in the limit; counted, a $0.00006 limit has room for one request, never two.
      const excluded = await createInferenceKey(env.t, { name: 'byok not counted', workspace_id: wsId, limit: 0.00004 });
      const served: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await ask(excluded.key, ['sim-own']);
        expect(r.usage).toMatchObject({ is_byok: true, cost: 0.00003 });
        served.push(r.id);
      }
      const included = await createInferenceKey(env.t, { name: 'byok counted', workspace_id: wsId, limit: 0.00006, include_byok_in_limit: true });
      expect((await ask(included.key, ['sim-own'])).usage.is_byok).toBe(true);
      expect(await ask(included.key, ['sim-own']).catch((e: { status?: number }) => e.status)).toBe(402);

      await env.t.gw.svc.recorder.flush();
      const ex = (await env.t.call('GET', `/keys/${excluded.hash}`)).body.data;
      expect(ex).toMatchObject({ usage: 0, byok_usage: 0.00009, byok_usage_daily: 0.00009, limit_remaining: 0.00004 });
      const inc = (await env.t.call('GET', `/keys/${included.hash}`)).body.data;
      expect(inc).toMatchObject({ usage: 0, byok_usage: 0.00003 });
      expect(inc.limit_remaining).toBeCloseTo(0.00003, 12);
      // The generation record says so too.
      const g = await env.t.call('GET', `/generation?id=${served[0]}`, { key: excluded.key });
      expect(g.body.data).toMatchObject({ is_byok: true, provider_name: 'sim-own', total_cost: 0.00003 });
    } finally {
      await env.t.call('DELETE', `/byok/${id}`);
    }
  });

  it('workspace budgets count BYOK spend only with include_byok_in_budgets', async () => {
    const ws = (await env.t.call('POST', '/workspaces', { body: { name: 'Team B', slug: 'team-b' } })).body.data.id as string;
    const k = await createInferenceKey(env.t, { name: 'team-b key', workspace_id: ws });
    const id = (await env.t.call('POST', '/byok', { body: { provider: 'sim-own', key: SECRET, workspace_id: ws } })).body.data.id;
    try {
      // $0.00004 a day: room for one counted request ($0.00003), never two.
      expect((await env.t.call('PUT', `/workspaces/${ws}/budgets/daily`, { body: { limit_usd: 0.00004, include_byok_in_budgets: false } })).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await ask(k.key, ['sim-own'])).usage.is_byok).toBe(true);
      await env.t.gw.svc.recorder.flush();
      // Counted from now on: the BYOK spend of the day ($0.00009) fills the budget.
      expect((await env.t.call('PUT', `/workspaces/${ws}/budgets/daily`, { body: { limit_usd: 0.00004, include_byok_in_budgets: true } })).status).toBe(200);
      expect(await ask(k.key, ['sim-own']).catch((e: { status?: number }) => e.status)).toBe(402);
    } finally {
      await env.t.call('DELETE', `/byok/${id}`);
    }
  });
});

/** A simulator and a catalog file with test/own, for gateways started by hand. */
async function simWithCatalog(): Promise<{ sim: Simulator; env: Record<string, string> }> {
  const sim = await createSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'gw-byok-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, stringify(simCatalog(sim.url, extraCatalog(sim.url))));
  return { sim, env: { GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false' } };
}

const askOn = (t: TestGateway, key: string) =>
  new OpenAI({ baseURL: t.api, apiKey: key, maxRetries: 0 }).chat.completions
    .create({ model: 'test/own', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5, provider: { only: ['sim-own'] } } as never)
    .then((r) => (r as unknown as { usage: { is_byok: boolean } }).usage.is_byok, (e: { status?: number }) => e.status);

describe('GATEWAY_ENCRYPTION_KEY', () => {
  let sim: Simulator;
  let env: Record<string, string>;
  beforeAll(async () => ({ sim, env } = await simWithCatalog()));
  afterAll(async () => sim?.close());

  it('is required to store credentials (503 naming it)', async () => {
    const t = await startGateway('sqlite', { env });
    try {
      const r = await t.call('POST', '/byok', { body: { provider: 'sim-own', key: SECRET } });
      expect(r.status).toBe(503);
      expect(r.body.error.message).toContain('GATEWAY_ENCRYPTION_KEY');
    } finally {
      await t.close();
    }
  });

  it('rotates: secrets sealed with the previous key still open and are sealed again with the new one', async () => {
    let t = await startGateway('sqlite', { env: { ...env, GATEWAY_ENCRYPTION_KEY: ENC_A } });
    const databaseUrl = t.databaseUrl;
    const k = await createInferenceKey(t, { name: 'rotation' });
    await t.call('POST', '/byok', { body: { provider: 'sim-own', key: SECRET } });
    expect(await askOn(t, k.key)).toBe(true);
    await t.stop();

    const idOf = (secret: string) => secret.split('.')[1];
    // The new key current, the old one previous: served, and the stored blob now names the new key.
    t = await startGateway('sqlite', { databaseUrl, env: { ...env, GATEWAY_ENCRYPTION_KEY: ENC_B, GATEWAY_ENCRYPTION_KEY_PREVIOUS: ENC_A } });
    expect(await askOn(t, k.key)).toBe(true);
    const [row] = await t.gw.svc.store.listActiveByokCredentials();
    expect(idOf(row.secret)).toBe(new SecretKeyring(ENC_B).encrypt('x').split('.')[1]);
    await t.stop();

    // The old key removed: still served (resealed).
    t = await startGateway('sqlite', { databaseUrl, env: { ...env, GATEWAY_ENCRYPTION_KEY: ENC_B } });
    expect(await askOn(t, k.key)).toBe(true);
    await t.stop();

    // Only the old key: the blob cannot be opened, the credential is not used (sim-own has no operator key).
    t = await startGateway('sqlite', { databaseUrl, env: { ...env, GATEWAY_ENCRYPTION_KEY: ENC_A } });
    expect(await askOn(t, k.key)).toBe(404);
    await t.close();
  });

  it('rejects short keys at start-up', () => {
    expect(() => loadConfig({ GATEWAY_ENCRYPTION_KEY: 'short' })).toThrow(/GATEWAY_ENCRYPTION_KEY must be at least 32 characters/);
    expect(() => loadConfig({ GATEWAY_ENCRYPTION_KEY_PREVIOUS: ENC_A })).toThrow(/needs GATEWAY_ENCRYPTION_KEY/);
  });
});

describe('BYOK across instances (PostgreSQL, Redis invalidation)', () => {
  let sim: Simulator;
  let two: Awaited<ReturnType<typeof startTwoInstances>>;
  beforeAll(async () => {
    const s = await simWithCatalog();
    sim = s.sim;
    two = await startTwoInstances({ ...s.env, GATEWAY_ENCRYPTION_KEY: ENC_A, GATEWAY_KEY_CACHE_TTL_MS: '600000' });
  });
  afterAll(async () => {
    await two?.close();
    await sim?.close();
  });

  /** Polls until `fn` gives `want` (the other instance hears of a change through Redis, asynchronously). */
  async function until<T>(fn: () => Promise<T>, want: T): Promise<T> {
    let got = await fn();
    for (let i = 0; i < 40 && got !== want; i++) {
      await new Promise((r) => setTimeout(r, 50));
      got = await fn();
    }
    return got;
  }

  it('a credential created, rotated and deleted on one instance is used, rotated and dropped on the other at once', async () => {
    const k = await createInferenceKey(two.a, { name: 'two' });
    expect(await askOn(two.b, k.key)).toBe(404);
    const id = (await two.a.call('POST', '/byok', { body: { provider: 'sim-own', key: 'sk-two-instances-0001' } })).body.data.id;
    expect(await until(() => askOn(two.b, k.key), true)).toBe(true);
    expect(sim.requests.filter((r) => r.provider === 'sim-own').at(-1)!.headers.authorization).toBe('Bearer sk-two-instances-0001');

    await two.a.call('PATCH', `/byok/${id}`, { body: { key: 'sk-two-instances-0002' } });
    const sent = async () => (await askOn(two.b, k.key), String(sim.requests.filter((r) => r.provider === 'sim-own').at(-1)!.headers.authorization));
    expect(await until(sent, 'Bearer sk-two-instances-0002')).toBe('Bearer sk-two-instances-0002');

    expect((await two.b.call('GET', `/byok/${id}`)).body.data).toMatchObject({ id, label: 'sk-...0002' });
    await two.a.call('DELETE', `/byok/${id}`);
    expect(await until(() => askOn(two.b, k.key), 404)).toBe(404);
  });
});
