/**
 * Guardrail rate limits (our extension, docs/guardrails.md "Rate limits"): `rate_limit` {requests, interval,
 * tokens_per_minute} on a guardrail, validated as a key's, shown on get/list and in the OpenAPI document; counted
 * like the guardrail's budget — per key (key-assigned), per member (member-assigned), for the whole workspace (its
 * default guardrail); checked with the key's own limit, the strictest refusal wins and names its limit, with
 * Retry-After and X-RateLimit-*. Request limits exact on one instance (SQLite) and across two (PostgreSQL + Redis);
 * token limits reserve each attempt's bound and settle to what it used.
 * Sizes: `hello there` with max_tokens 12 reserves 27 + 12 = 39 tokens and uses 6 + 12 = 18.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { simCatalog } from '../chat-helpers.js';
import { createInferenceKey, startGateway, startTwoInstances, type TestGateway } from '../helpers.js';
import { expectError, expectStatus } from '../api/util.js';
import { watchSpendSeam, type SpendSeamWatch } from '../chat/spend-seam.js';

const RESERVED = 39;
const USED = 18;
const body = { model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, provider: { only: ['sim-a'] } };

async function newGuardrail(t: TestGateway, fields: Record<string, unknown>): Promise<{ id: string; [k: string]: unknown }> {
  const res = await t.call('POST', '/guardrails', { body: { name: `rl-${Math.random().toString(36).slice(2, 8)}`, ...fields } });
  expectStatus(res, 201);
  return res.body.data;
}

async function assignKeys(t: TestGateway, id: string, hashes: string[]): Promise<void> {
  expectStatus(await t.call('POST', `/guardrails/${id}/assignments/keys`, { body: { key_hashes: hashes } }), 200);
}

/** Waits for a fresh clock minute when the current one ends within `ms` (token counters are per clock minute). */
async function roomInMinute(ms: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < ms) await new Promise((r) => setTimeout(r, left + 50));
}

describe('guardrail rate limits: API and request limits on one instance (SQLite)', () => {
  let t: TestGateway;
  let clock = Date.UTC(2026, 10, 24, 9, 0, 10);
  beforeAll(async () => {
    t = await startGateway('sqlite', { gateway: { now: () => clock } });
  });
  afterAll(() => t.close());

  it('is set on create, shown on get and list, changed and removed by PATCH; in the OpenAPI document', async () => {
    const g = await newGuardrail(t, { rate_limit: { requests: 10, interval: '60s', tokens_per_minute: 5000 } });
    expect(g.rate_limit).toEqual({ requests: 10, interval: '1m', tokens_per_minute: 5000 });
    expect((await t.call('GET', `/guardrails/${g.id}`)).body.data.rate_limit).toEqual({ requests: 10, interval: '1m', tokens_per_minute: 5000 });
    const list = (await t.call('GET', '/guardrails')).body.data as Array<{ id: string; rate_limit: unknown }>;
    expect(list.find((x) => x.id === g.id)?.rate_limit).toEqual({ requests: 10, interval: '1m', tokens_per_minute: 5000 });
    const patched = await t.call('PATCH', `/guardrails/${g.id}`, { body: { rate_limit: { tokens_per_minute: 100 } } });
    expect(patched.body.data.rate_limit).toEqual({ tokens_per_minute: 100 });
    // Another field changed alone keeps the rate limit.
    expect((await t.call('PATCH', `/guardrails/${g.id}`, { body: { description: 'x' } })).body.data.rate_limit).toEqual({ tokens_per_minute: 100 });
    expect((await t.call('PATCH', `/guardrails/${g.id}`, { body: { rate_limit: null } })).body.data.rate_limit).toBeNull();
    expect((await newGuardrail(t, {})).rate_limit).toBeNull();

    const doc = (await t.call('GET', '/openapi.json')).body;
    const post = doc.paths['/guardrails'].post.requestBody.content['application/json'].schema;
    const patch = doc.paths['/guardrails/{id}'].patch.requestBody.content['application/json'].schema;
    const view = doc.paths['/guardrails/{id}'].get.responses['200'].content['application/json'].schema.properties.data;
    for (const s of [post, patch, view]) {
      const rl = JSON.stringify(s.properties.rate_limit);
      for (const f of ['requests', 'interval', 'tokens_per_minute']) expect(rl).toContain(`"${f}"`);
      expect(rl).toContain('Extension');
    }
  });

  it('refuses bad settings naming the field, and changes nothing', async () => {
    const g = await newGuardrail(t, { rate_limit: { requests: 4, interval: '1h' } });
    const bad: Array<[unknown, string]> = [
      [{ requests: 10, interval: 'minute' }, 'rate_limit.interval'],
      [{ requests: 10, interval: '31d' }, 'rate_limit.interval'],
      [{ requests: 10 }, 'rate_limit.interval'],
      [{ interval: '1m' }, 'rate_limit.requests'],
      [{ requests: -1, interval: '1m' }, 'rate_limit.requests'],
      [{ requests: 0, interval: '1m' }, 'rate_limit.requests'],
      [{ requests: 1.5, interval: '1m' }, 'rate_limit.requests'],
      [{ tokens_per_minute: -5 }, 'rate_limit.tokens_per_minute'],
      [{ tokens_per_minute: 0 }, 'rate_limit.tokens_per_minute'],
      [{}, 'rate_limit'],
      [{ requests: 1, interval: '1m', burst: 3 }, 'rate_limit'],
    ];
    for (const [rate_limit, field] of bad) {
      expectError(await t.call('PATCH', `/guardrails/${g.id}`, { body: { rate_limit } }), 400, { field });
      expectError(await t.call('POST', '/guardrails', { body: { name: 'bad', rate_limit } }), 400, { field });
    }
    expect((await t.call('GET', `/guardrails/${g.id}`)).body.data.rate_limit).toEqual({ requests: 4, interval: '1h' });
  });

  it('key-assigned: counted per key; a burst admits exactly the limit; 429 names the guardrail with Retry-After and X-RateLimit-*', async () => {
    clock = Date.UTC(2026, 10, 24, 9, 5, 20);
    const g = await newGuardrail(t, { rate_limit: { requests: 3, interval: '1m' } });
    const k1 = await createInferenceKey(t, { name: 'k1' });
    const k2 = await createInferenceKey(t, { name: 'k2' });
    const free = await createInferenceKey(t, { name: 'free' });
    await assignKeys(t, g.id, [k1.hash, k2.hash]);
    const replies = await Promise.all(Array.from({ length: 10 }, () => t.call('GET', '/key', { key: k1.key })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(3);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(7);
    const r = refused[0];
    expectError(r, 429, { message: `guardrail "${g.name}" (${g.id}) allows 3 requests per 1m per key` });
    expect(r.body.error.metadata).toMatchObject({ error_type: 'rate_limit_exceeded', limit_source: 'guardrail', guardrail_id: g.id, guardrail_scope: 'key', limit: 3, interval: '1m', reset_at: '2026-11-24T09:06:00.000Z' });
    expect(r.headers.get('retry-after')).toBe('40');
    expect(r.headers.get('x-ratelimit-limit')).toBe('3');
    expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(r.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2026, 10, 24, 9, 6)));
    // Per key: the other key assigned has its own three; a key without the guardrail is not limited.
    const other = await Promise.all(Array.from({ length: 5 }, () => t.call('GET', '/key', { key: k2.key })));
    expect(other.filter((x) => x.status === 200)).toHaveLength(3);
    for (let i = 0; i < 5; i++) expect((await t.call('GET', '/key', { key: free.key })).status).toBe(200);
    // Model calls count too (every authenticated request of the key); the next window admits again.
    clock = Date.UTC(2026, 10, 24, 9, 6, 0);
    expect((await t.call('GET', '/key', { key: k1.key })).status).toBe(200);
    // A change applies at once: removed, nothing is counted any more.
    expectStatus(await t.call('PATCH', `/guardrails/${g.id}`, { body: { rate_limit: null } }), 200);
    for (let i = 0; i < 6; i++) expect((await t.call('GET', '/key', { key: k1.key })).status).toBe(200);
  });

  it('member-assigned: shared by the member\'s keys; workspace default: shared by the whole workspace', async () => {
    clock = Date.UTC(2026, 10, 24, 10, 0, 0);
    const m = await t.call('POST', '/organization/members', { body: { email: 'rl-member@example.com' } });
    expectStatus(m, 201);
    const mk1 = await createInferenceKey(t, { name: 'mk1', creator_user_id: m.body.data.id });
    const mk2 = await createInferenceKey(t, { name: 'mk2', creator_user_id: m.body.data.id });
    const g = await newGuardrail(t, { rate_limit: { requests: 4, interval: '1h' } });
    expectStatus(await t.call('POST', `/guardrails/${g.id}/assignments/members`, { body: { member_user_ids: [m.body.data.id] } }), 200);
    const mixed = await Promise.all(Array.from({ length: 10 }, (_, i) => t.call('GET', '/key', { key: (i % 2 ? mk1 : mk2).key })));
    expect(mixed.filter((r) => r.status === 200)).toHaveLength(4);
    expectError(mixed.find((r) => r.status === 429)!, 429, { message: 'per member' });

    const ws = (await t.call('POST', '/workspaces', { body: { name: 'RL', slug: 'rl-ws' } })).body.data;
    const w1 = await createInferenceKey(t, { name: 'w1', workspace_id: ws.id });
    const w2 = await createInferenceKey(t, { name: 'w2', workspace_id: ws.id });
    expectStatus(await t.call('PATCH', `/guardrails/${ws.default_guardrail_id}`, { body: { rate_limit: { requests: 5, interval: '1m' } } }), 200);
    const shared = await Promise.all(Array.from({ length: 12 }, (_, i) => t.call('GET', '/key', { key: (i % 2 ? w1 : w2).key })));
    expect(shared.filter((r) => r.status === 200)).toHaveLength(5);
    const r = shared.find((x) => x.status === 429)!;
    expectError(r, 429, { message: 'for its whole workspace' });
    expect(r.body.error.metadata).toMatchObject({ guardrail_id: ws.default_guardrail_id, guardrail_scope: 'workspace' });
  });

  it("with the key's own limit: the strictest refusal wins and names its limit; refusals use no guardrail room", async () => {
    clock = Date.UTC(2026, 10, 24, 11, 0, 30);
    const g = await newGuardrail(t, { rate_limit: { requests: 3, interval: '1h' } });
    const k = await createInferenceKey(t, { name: 'both', rate_limit: { requests: 1, interval: '1m' } });
    await assignKeys(t, g.id, [k.hash]);
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200);
    // The key's own limit refuses (the guardrail has room): named as the key's, Retry-After to the minute's end.
    const own = await t.call('GET', '/key', { key: k.key });
    expectError(own, 429, { message: 'this key may make 1 requests per 1m' });
    expect(own.body.error.metadata.limit_source).toBe('key');
    expect(own.headers.get('retry-after')).toBe('30');
    // Refused by the key: the guardrail's room is untouched (two more fit in the hour, one per minute).
    clock += 60_000;
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200);
    clock += 60_000;
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200);
    clock += 60_000;
    // Both refuse now: the guardrail's window ends last, so its answer is the one given.
    const both = await t.call('GET', '/key', { key: k.key });
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(429);
    expectError(both, 429, { message: `guardrail "${g.name}"` });
    expect(both.headers.get('x-ratelimit-limit')).toBe('3');
    expect(both.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2026, 10, 24, 12)));
  });
});

describe('guardrail token rate limits and exactness across instances', () => {
  let sim: Simulator;
  let file: string;
  beforeAll(async () => {
    sim = await createSimulator();
    file = join(mkdtempSync(join(tmpdir(), 'gw-grl-')), 'gateway.yaml');
    writeFileSync(file, stringify(simCatalog(sim.url)));
  });
  afterAll(async () => sim?.close());

  /**
   * `n` chat requests at once on `key`, spread over `instances`, with every upstream answer held `holdMs`; and whether
   * every one was decided (reserved or refused) before any reservation gave room back (`seam`, test/chat/spend-seam.ts).
   * A loaded machine can take longer than `holdMs` to decide a burst; the first answers then settle (freeing 21 tokens
   * each) before the last requests are decided, which may rightly be admitted: the burst proves nothing.
   */
  const heldBurst = async (seam: SpendSeamWatch, instances: TestGateway[], key: string, n: number, holdMs: number) => {
    seam.reset();
    sim.setKnobs('sim-a', { latencyMs: holdMs });
    try {
      const replies = await Promise.all(Array.from({ length: n }, (_, i) => instances[i % instances.length].call('POST', '/chat/completions', { key, body })));
      return { replies, decidedFirst: seam.decidedFirst() };
    } finally {
      sim.setKnobs('sim-a', { latencyMs: null });
    }
  };

  /**
   * TPM: room for exactly 10 reservations at once; after they settle to what they used, 5 more fit. One run on a new
   * guardrail and key with answers held `holdMs`: false when a burst was not decided before room was given back, or the
   * run left its clock minute (a new minute has new room): it proves nothing and the caller runs again, holding longer.
   */
  const tokensRun = async (instances: TestGateway[], seam: SpendSeamWatch, holdMs: number): Promise<boolean> => {
    const [a] = instances;
    const TPM = 10 * RESERVED;
    const g = await newGuardrail(a, { rate_limit: { tokens_per_minute: TPM } });
    const keys = [await createInferenceKey(a, { name: 'tpm-1' }), await createInferenceKey(a, { name: 'tpm-2' })];
    // Workspace default would be shared; here a member-less key-assigned guardrail counts per key: use one key.
    await assignKeys(a, g.id, [keys[0].hash]);
    await roomInMinute(7_000 + 4 * holdMs);
    const minute = Math.floor(Date.now() / 60_000);
    const first = await heldBurst(seam, instances, keys[0].key, 40, holdMs);
    if (!first.decidedFirst || Math.floor(Date.now() / 60_000) !== minute) return false;
    const replies = first.replies;
    expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(30);
    const r = refused[0];
    expectError(r, 429, { message: `guardrail "${g.name}" (${g.id}) allows ${TPM} tokens per minute per key` });
    expect(r.body.error.metadata).toMatchObject({ error_type: 'rate_limit_exceeded', limit_source: 'guardrail', guardrail_id: g.id, limit_tokens: TPM, requested_tokens: RESERVED });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(r.headers.get('x-ratelimit-limit')).toBe(String(TPM));
    expect(Number(r.headers.get('x-ratelimit-reset')) % 60_000).toBe(0);
    // The other key is not under the guardrail.
    expect((await a.call('POST', '/chat/completions', { key: keys[1].key, body })).status).toBe(200);
    // Settled to what they used (10 × 18): 210 tokens left in this minute — five more reservations of 39.
    // Held like the first burst: unheld, the first answers can settle (freeing 21 tokens each) before the last are
    // decided, and a loaded machine admits six (as test/api/token-rate-limits.test.ts found).
    await new Promise((res) => setTimeout(res, 1_300));
    const more = await heldBurst(seam, instances, keys[0].key, 8, holdMs);
    if (!more.decidedFirst || Math.floor(Date.now() / 60_000) !== minute) return false;
    expect(more.replies.filter((x) => x.status === 200)).toHaveLength(Math.floor((TPM - 10 * USED) / RESERVED));
    // A request that can never fit is told so.
    expectStatus(await a.call('PATCH', `/guardrails/${g.id}`, { body: { rate_limit: { tokens_per_minute: 20 } } }), 200);
    expectError(await a.call('POST', '/chat/completions', { key: keys[0].key, body }), 429, { message: 'more than guardrail' });
    return true;
  };

  /** Up to three runs (answers held 2, 4, then 8 s), each possibly waiting for a fresh clock minute first. */
  const tokensExact = async (instances: TestGateway[]) => {
    const seam = watchSpendSeam(instances);
    for (const holdMs of [2_000, 4_000, 8_000]) {
      if (await tokensRun(instances, seam, holdMs)) return;
      console.log(`guardrail TPM: a burst was not decided within ${holdMs} ms (or the minute ended); again, holding longer`);
    }
    throw new Error('no burst was decided within 8 s: the machine is too slow for this test');
  };

  /** Requests: N concurrent requests, from two keys, through every instance, against a workspace limit of M. */
  const requestsExact = async (instances: TestGateway[], n: number, m: number) => {
    const [a] = instances;
    const ws = (await a.call('POST', '/workspaces', { body: { name: 'Exact', slug: `exact-${Date.now()}` } })).body.data;
    const keys = [await createInferenceKey(a, { name: 'x1', workspace_id: ws.id }), await createInferenceKey(a, { name: 'x2', workspace_id: ws.id })];
    expectStatus(await a.call('PATCH', `/guardrails/${ws.default_guardrail_id}`, { body: { rate_limit: { requests: m, interval: '1h' } } }), 200);
    // Every instance learns of the change (invalidation bus) before the burst.
    for (const t of instances) expect((await t.call('GET', `/guardrails/${ws.default_guardrail_id}`)).body.data.rate_limit).toEqual({ requests: m, interval: '1h' });
    const replies = await Promise.all(Array.from({ length: n }, (_, i) => instances[i % instances.length].call('GET', '/key', { key: keys[Math.floor(i / instances.length) % 2].key })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(m);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(n - m);
    // Refusals used no room (the count is M). Raised by 3 on the first instance, the change reaches every instance
    // (their cached policies are dropped through the invalidation bus): exactly 3 more, wherever they land.
    expectStatus(await a.call('PATCH', `/guardrails/${ws.default_guardrail_id}`, { body: { rate_limit: { requests: m + 3, interval: '1h' } } }), 200);
    await new Promise((r) => setTimeout(r, 300));
    const more = await Promise.all(Array.from({ length: 10 }, (_, i) => instances[(i + 1) % instances.length].call('GET', '/key', { key: keys[i % 2].key })));
    expect(more.filter((r) => r.status === 200)).toHaveLength(3);
  };

  it('one instance (SQLite): exactly M of N requests; TPM reserves and settles', { timeout: 240_000 }, async () => {
    const t = await startGateway('sqlite', { env: { GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false' } });
    try {
      await requestsExact([t], 60, 17);
      await tokensExact([t]);
    } finally {
      await t.close();
    }
  });

  it('two instances (PostgreSQL + Redis): exactly M of N requests across both; TPM exact across both', { timeout: 240_000 }, async () => {
    const { a, b, close } = await startTwoInstances({ GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false' });
    try {
      for (let i = 0; i < 3; i++) await requestsExact([a, b], 80, 13 + i);
      await tokensExact([a, b]);
    } finally {
      await close();
    }
  });
});
