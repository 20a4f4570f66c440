/**
 * Every policy rule, end to end, on both backends: for one key, GET /models/user and chat routing change together —
 * a model of the catalog is listed if and only if a chat request to it succeeds (a model that is not listed fails by
 * policy, unless it is unreachable anyway). Filtered models give 404 with the reason in metadata; guardrail lists and
 * budgets give 403 naming the guardrail.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/core/keys.js';
import { BACKENDS } from '../helpers.js';
import { expectError, expectStatus } from '../api/util.js';
import { CHEAP, chat, newKey, PRICES, newMember, REACHABLE, startPolicyEnv, views, without, type PolicyEnv } from './util.js';

const DEFAULT_SETTINGS = { allowed_providers: null, ignored_providers: null, allowed_models: null, ignored_models: null, default_provider_sort: null, data_collection: 'allow', enforce_zdr: false };

describe.each(BACKENDS)('Policy enforcement: /models/user and routing agree (%s)', (backend) => {
  let env: PolicyEnv;
  let n = 0;
  beforeAll(async () => {
    env = await startPolicyEnv(backend);
  });
  afterAll(async () => env?.close());

  const call = (method: string, path: string, body?: unknown) => env.t.call(method, path, { body });
  const settings = async (body: Record<string, unknown>) => expectStatus(await call('PATCH', '/organization/settings', body), 200);
  const guardrail = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/guardrails', { name: `rule-${++n}`, ...body });
    expectStatus(res, 201);
    return res.body.data as { id: string; name: string };
  };
  const assignKey = async (g: { id: string }, key: string) => {
    const hash = hashSecret(key);
    expectStatus(await call('POST', `/guardrails/${g.id}/assignments/keys`, { key_hashes: [hash] }), 200);
    return hash as string;
  };
  /** A key and its unrestricted baseline (every reachable model listed and routed). */
  const baselineKey = async (body: Record<string, unknown> = {}) => {
    const key = await newKey(env.t, body);
    expect((await views(env.t, key)).listed).toEqual(REACHABLE);
    return key;
  };

  describe('organization settings', () => {
    afterEach(async () => settings(DEFAULT_SETTINGS));

    it('allowed_providers: only endpoints of those providers; others → 404 with the reason', async () => {
      const key = await baselineKey();
      await settings({ allowed_providers: ['sim-a'] });
      const v = await views(env.t, key);
      expect(v.listed).toEqual(['test/alpha', 'test/delta']);
      expect(v.replies.get('test/alpha')!.body.provider).toBe('Sim A');
      const beta = v.replies.get('test/beta')!;
      expectError(beta as any, 404, { message: 'organization settings' });
      expect(beta.body.error.metadata).toMatchObject({ excluded_by: ['allowed_providers'], policy: { setting: 'allowed_providers', source: 'organization' } });
      // The workspace's default sort, the request's `only`: nothing can widen the ceiling.
      expect((await chat(env.t, key, 'test/alpha', { provider: { only: ['sim-b'] } })).status).toBe(404);
    });

    it('ignored_providers: pricing reflects the endpoints left', async () => {
      const key = await baselineKey();
      expect((await env.t.call('GET', '/models/user', { key })).body.data.find((m: any) => m.id === 'openai/sim-gpt').pricing.prompt).toBe(CHEAP.prompt);
      await settings({ ignored_providers: ['sim-b'] });
      const v = await views(env.t, key);
      expect(v.listed).toEqual(without('test/gamma', 'anthropic/sim-claude'));
      expect(v.byId.get('openai/sim-gpt').pricing.prompt).toBe(PRICES.b.prompt);
      expect(v.replies.get('openai/sim-gpt')!.body.provider).toBe('Sim C');
      expect(v.replies.get('test/gamma')!.body.error.metadata.excluded_by).toEqual(['ignored_providers']);
    });

    it('allowed_models: only those models; another → 404 naming the setting', async () => {
      const key = await baselineKey();
      await settings({ allowed_models: ['test/beta', 'test/gamma'] });
      const v = await views(env.t, key);
      expect(v.listed).toEqual(['test/beta', 'test/gamma']);
      const alpha = v.replies.get('test/alpha')!;
      expect(alpha.status).toBe(404);
      expect(alpha.body.error.message).toContain('allowed models of the organization settings');
      expect(alpha.body.error.metadata).toMatchObject({ excluded_by: ['allowed_models'], policy: { setting: 'allowed_models', source: 'organization' } });
    });

    it('ignored_models: those models are gone; models[] falls back past a filtered model', async () => {
      const key = await baselineKey();
      await settings({ ignored_models: ['test/alpha'] });
      const v = await views(env.t, key);
      expect(v.listed).toEqual(without('test/alpha'));
      expect(v.replies.get('test/alpha')!.body.error.metadata.excluded_by).toEqual(['ignored_models']);
      const fallback = await chat(env.t, key, 'test/alpha', { models: ['test/beta'] });
      expectStatus(fallback, 200);
      expect(fallback.body.model).toBe('test/beta');
    });

    it('data_collection deny: no endpoint that trains on or retains prompts', async () => {
      const key = await baselineKey();
      await settings({ data_collection: 'deny' });
      const v = await views(env.t, key);
      expect(v.listed).toEqual(without('test/gamma', 'anthropic/sim-claude'));
      const gamma = v.replies.get('test/gamma')!;
      expect(gamma.status).toBe(404);
      expect(gamma.body.error.message).toContain('data collection denied by the organization settings');
      expect(gamma.body.error.metadata).toMatchObject({ error_type: 'privacy_restricted', excluded_by: ['data_policy:training'] });
      // Routing never picks a collecting endpoint, even when asked to.
      const pinned = await chat(env.t, key, 'openai/sim-gpt', { provider: { order: ['sim-b'] } });
      expect(pinned.body.provider).toBe('Sim C');
      expect(pinned.body.gateway_metadata.excluded).toEqual([{ model: 'openai/sim-gpt', provider: 'sim-b', reason: 'data_policy:training' }]);
      expect(v.byId.get('openai/sim-gpt').pricing.prompt).toBe(PRICES.b.prompt);
    });

    it('enforce_zdr: only zero-data-retention endpoints (stricter than data_collection)', async () => {
      const key = await baselineKey();
      await settings({ enforce_zdr: true });
      const v = await views(env.t, key);
      expect(v.listed).toEqual(without('test/gamma', 'anthropic/sim-claude', 'test/delta'));
      expect(v.replies.get('test/delta')!.body.error.metadata).toMatchObject({ error_type: 'privacy_restricted', excluded_by: ['data_policy:zdr'] });
      expect(v.replies.get('test/alpha')!.body.provider).toBe('Sim A');
      // A request cannot relax it.
      expect((await chat(env.t, key, 'test/gamma', { provider: { zdr: false, data_collection: 'allow' } })).status).toBe(404);
    });

    it('default_provider_sort applies when neither the request nor the workspace sorts', async () => {
      const key = await newKey(env.t);
      expect((await chat(env.t, key, 'test/alpha')).body.gateway_metadata.strategy).toBe('direct');
      await settings({ default_provider_sort: 'price' });
      expect((await chat(env.t, key, 'test/alpha')).body.gateway_metadata.strategy).toBe('sort:price');
      expect((await chat(env.t, key, 'test/alpha', { provider: { sort: 'latency' } })).body.gateway_metadata.strategy).toBe('sort:latency');
    });
  });

  describe('guardrails', () => {
    it('on a key: allowed_models → only those; another → 403 naming the guardrail; unassigning restores', async () => {
      const key = await baselineKey();
      const g = await guardrail({ allowed_models: ['test/alpha', 'openai/sim-gpt'] });
      const hash = await assignKey(g, key);
      const v = await views(env.t, key);
      expect(v.listed).toEqual(['openai/sim-gpt', 'test/alpha']);
      const beta = v.replies.get('test/beta')!;
      expectError(beta as any, 403, { message: `Blocked by guardrail "${g.name}"` });
      expect(beta.body.error.metadata).toMatchObject({ guardrail_id: g.id, guardrail_name: g.name, guardrail_scope: 'key', excluded_by: ['allowed_models'] });
      // Another key is not affected.
      expect((await views(env.t, await newKey(env.t))).listed).toEqual(REACHABLE);
      expectStatus(await call('POST', `/guardrails/${g.id}/assignments/keys/remove`, { key_hashes: [hash] }), 200);
      expect((await views(env.t, key)).listed).toEqual(REACHABLE);
    });

    it('on a key: ignored_models and ignored_providers; a PATCH takes effect at once', async () => {
      const key = await baselineKey();
      const g = await guardrail({ ignored_models: ['test/beta'] });
      await assignKey(g, key);
      expect((await views(env.t, key)).listed).toEqual(without('test/beta'));
      expectStatus(await call('PATCH', `/guardrails/${g.id}`, { ignored_models: null, ignored_providers: ['sim-c'] }), 200);
      const v = await views(env.t, key);
      expect(v.listed).toEqual(without('test/beta', 'test/unpriced'));
      expect(v.byId.get('openai/sim-gpt').pricing.prompt).toBe(CHEAP.prompt);
      expect(v.replies.get('test/beta')!.body.error.message).toBe(`Blocked by guardrail "${g.name}": every provider of test/beta is among its ignored providers`);
      expectStatus(await call('DELETE', `/guardrails/${g.id}`), 200);
      expect((await views(env.t, key)).listed).toEqual(REACHABLE);
    });

    it("on a member: the member's keys inherit it; other members' keys do not", async () => {
      const member = await newMember(env.t);
      const key = await baselineKey({ creator_user_id: member });
      const g = await guardrail({ ignored_providers: ['sim-b'] });
      expectStatus(await call('POST', `/guardrails/${g.id}/assignments/members`, { member_user_ids: [member] }), 200);
      const v = await views(env.t, key);
      expect(v.listed).toEqual(without('test/gamma', 'anthropic/sim-claude'));
      expect(v.replies.get('test/gamma')!.body.error.metadata).toMatchObject({ guardrail_id: g.id, guardrail_scope: 'member' });
      // A second key of the member, created after the assignment, inherits it too.
      expect((await views(env.t, await newKey(env.t, { creator_user_id: member }))).listed).toEqual(v.listed);
      expect((await views(env.t, await newKey(env.t, { creator_user_id: await newMember(env.t) }))).listed).toEqual(REACHABLE);
    });

    it("the workspace default guardrail covers every key of its workspace, and only those", async () => {
      const ws = (await call('POST', '/workspaces', { name: 'Restricted', slug: `restricted-${++n}` })).body.data;
      const key = await baselineKey({ workspace_id: ws.id });
      expectStatus(await call('PATCH', `/guardrails/${ws.default_guardrail_id}`, { allowed_providers: ['sim-c'] }), 200);
      const v = await views(env.t, key);
      expect(v.listed).toEqual(['openai/sim-gpt', 'test/beta', 'test/unpriced']);
      expect(v.replies.get('test/alpha')!.body.error.message).toBe(`Blocked by guardrail "Workspace ${ws.id} Default": no provider of test/alpha is among its allowed providers`);
      expect(v.replies.get('test/alpha')!.body.error.metadata.guardrail_scope).toBe('workspace');
      expect((await views(env.t, await newKey(env.t))).listed).toEqual(REACHABLE);
    });

    it('allowlists intersect across key, member and workspace guardrails; the refusing one is named', async () => {
      const member = await newMember(env.t);
      const key = await baselineKey({ creator_user_id: member });
      const onKey = await guardrail({ allowed_providers: ['sim-a', 'sim-c'] });
      const onMember = await guardrail({ allowed_providers: ['sim-a', 'sim-b'] });
      await assignKey(onKey, key);
      expectStatus(await call('POST', `/guardrails/${onMember.id}/assignments/members`, { member_user_ids: [member] }), 200);
      const v = await views(env.t, key);
      expect(v.listed).toEqual(['test/alpha', 'test/delta']);
      expect(v.replies.get('test/beta')!.body.error.metadata.guardrail_id).toBe(onMember.id);
      expect(v.replies.get('test/gamma')!.body.error.metadata.guardrail_id).toBe(onKey.id);
      expect(v.replies.get('test/alpha')!.body.provider).toBe('Sim A');
    });

    it('ZDR is ORed: one guardrail requiring it is enough, whatever the others and the request say', async () => {
      const ws = (await call('POST', '/workspaces', { name: 'ZDR', slug: `zdr-${++n}` })).body.data;
      const key = await baselineKey({ workspace_id: ws.id });
      await assignKey(await guardrail({ enforce_zdr: false }), key);
      expectStatus(await call('PATCH', `/guardrails/${ws.default_guardrail_id}`, { enforce_zdr: true }), 200);
      const v = await views(env.t, key);
      expect(v.listed).toEqual(without('test/gamma', 'anthropic/sim-claude', 'test/delta'));
      const gamma = v.replies.get('test/gamma')!;
      expect(gamma.status).toBe(404);
      expect(gamma.body.error.message).toContain(`zero data retention required by guardrail "Workspace ${ws.id} Default"`);
      expect(gamma.body.error.metadata).toMatchObject({ error_type: 'privacy_restricted', excluded_by: ['data_policy:zdr'], policy: { source: 'guardrail', guardrail_scope: 'workspace' } });
      expect((await chat(env.t, key, 'openai/sim-gpt', { provider: { zdr: false, order: ['sim-b'] } })).body.provider).toBe('Sim C');
    });

    it('per-vendor ZDR applies to its model group only', async () => {
      const key = await baselineKey();
      const g = await guardrail({ enforce_zdr_openai: true });
      await assignKey(g, key);
      let v = await views(env.t, key);
      expect(v.listed).toEqual(REACHABLE);
      expect(v.byId.get('openai/sim-gpt').pricing.prompt).toBe(PRICES.b.prompt);
      expect(v.replies.get('openai/sim-gpt')!.body.provider).toBe('Sim C');
      expect(v.replies.get('test/gamma')!.body.provider).toBe('Sim B');
      expectStatus(await call('PATCH', `/guardrails/${g.id}`, { enforce_zdr_anthropic: true }), 200);
      v = await views(env.t, key);
      expect(v.listed).toEqual(without('anthropic/sim-claude'));
      expect(v.replies.get('anthropic/sim-claude')!.body.error.metadata.excluded_by).toEqual(['data_policy:zdr']);
    });

    it('training switches: enable_paid_model_training false drops paid endpoints that train', async () => {
      const key = await baselineKey();
      await assignKey(await guardrail({ enable_paid_model_training: false }), key);
      const v = await views(env.t, key);
      expect(v.listed).toEqual(without('test/gamma', 'anthropic/sim-claude'));
      expect(v.replies.get('test/gamma')!.body.error.metadata.excluded_by).toEqual(['data_policy:training']);
    });

    it('organization settings and guardrails combine (allowlists intersect across both)', async () => {
      const key = await baselineKey();
      await assignKey(await guardrail({ allowed_providers: ['sim-a', 'sim-b'] }), key);
      await settings({ allowed_providers: ['sim-b', 'sim-c'] });
      try {
        const v = await views(env.t, key);
        expect(v.listed).toEqual(['anthropic/sim-claude', 'openai/sim-gpt', 'test/alpha', 'test/gamma']);
        expect(v.replies.get('test/alpha')!.body.provider).toBe('Sim B');
        // sim-a is refused by the organization first (404); sim-c by the guardrail (403).
        expect(v.replies.get('test/delta')!.status).toBe(404);
        expect(v.replies.get('test/beta')!.status).toBe(403);
      } finally {
        await settings(DEFAULT_SETTINGS);
      }
    });

    it('a streaming request refused by policy gets the JSON error before any stream starts', async () => {
      const key = await newKey(env.t);
      const g = await guardrail({ allowed_models: ['test/alpha'] });
      await assignKey(g, key);
      const res = await chat(env.t, key, 'test/beta', { stream: true });
      expectError(res as any, 403, { message: `Blocked by guardrail "${g.name}"` });
    });
  });

  describe('budgets', () => {
    it('on a key: once limit_usd is spent, every request is 403 naming the guardrail and /models/user is empty', async () => {
      const key = await baselineKey();
      const g = await guardrail({ limit_usd: 0.00001, reset_interval: 'daily' });
      await assignKey(g, key);
      // The baseline above already spent more than that on priced models.
      const v = await views(env.t, key);
      expect(v.listed).toEqual([]);
      const r = v.replies.get('test/alpha')!;
      expectError(r as any, 403, { message: `Blocked by guardrail "${g.name}": its daily budget of $0.00001 is spent` });
      expect(r.body.error.metadata).toMatchObject({ guardrail_id: g.id, excluded_by: ['budget'], limit_usd: 0.00001, reset_interval: 'daily' });
      // Still refused after the spend is flushed to the database (flushed now: a fixed sleep could end first).
      await env.t.gw.svc.recorder.flush();
      expect((await chat(env.t, key, 'test/alpha')).status).toBe(403);
      // Raising the budget lifts the block at once.
      expectStatus(await call('PATCH', `/guardrails/${g.id}`, { limit_usd: 100 }), 200);
      expect((await views(env.t, key)).listed).toEqual(REACHABLE);
    });

    /**
     * A request's maximum cost is reserved against the budget before its upstream call (docs/spend.md): a budget of
     * exactly that maximum (the prompt's byte bound and max_tokens at the endpoint's prices, as the 402 of a key with
     * no room states it) admits the request; once it is lowered to what the request really cost, the budget is spent.
     */
    const oneRequest = async (model: string) => {
      const body = { messages: [{ role: 'user', content: 'x'.repeat(400) }] };
      const probe = await chat(env.t, await newKey(env.t), model, body);
      expectStatus(probe, 200);
      const sized = { ...body, max_tokens: probe.body.usage.completion_tokens as number };
      const refused = await chat(env.t, await newKey(env.t, { limit: 0.000000001 }), model, sized);
      expect(refused.status).toBe(402);
      return { limit_usd: refused.body.error.metadata.requested_max_cost as number, cost: probe.body.usage.cost as number, body: sized };
    };

    it('a fresh key: the request that spends the budget succeeds, the next one is refused', async () => {
      const key = await newKey(env.t);
      const one = await oneRequest('test/alpha');
      const g = await guardrail({ limit_usd: one.limit_usd });
      await assignKey(g, key);
      expect((await env.t.call('GET', '/models/user', { key })).body.total_count).toBe(REACHABLE.length);
      expectStatus(await chat(env.t, key, 'test/alpha', one.body), 200);
      expectStatus(await call('PATCH', `/guardrails/${g.id}`, { limit_usd: one.cost }), 200);
      expect((await chat(env.t, key, 'test/beta')).status).toBe(403);
      expect((await env.t.call('GET', '/models/user', { key })).body.data).toEqual([]);
    });

    it("on a member: spend of all the member's keys counts", async () => {
      const member = await newMember(env.t);
      const k1 = await newKey(env.t, { creator_user_id: member });
      const k2 = await newKey(env.t, { creator_user_id: member });
      const one = await oneRequest('test/alpha');
      const g = await guardrail({ limit_usd: one.limit_usd, reset_interval: 'monthly' });
      expectStatus(await call('POST', `/guardrails/${g.id}/assignments/members`, { member_user_ids: [member] }), 200);
      expectStatus(await chat(env.t, k1, 'test/alpha', one.body), 200);
      expectStatus(await call('PATCH', `/guardrails/${g.id}`, { limit_usd: one.cost }), 200);
      const refused = await chat(env.t, k2, 'test/alpha');
      expectError(refused as any, 403, { message: `Blocked by guardrail "${g.name}"` });
      expect(refused.body.error.metadata.guardrail_scope).toBe('member');
      expect((await views(env.t, k2)).listed).toEqual([]);
    });

    it('on the workspace default guardrail: spend of every key of the workspace counts', async () => {
      const ws = (await call('POST', '/workspaces', { name: 'Budget', slug: `budget-${++n}` })).body.data;
      const k1 = await newKey(env.t, { workspace_id: ws.id });
      const k2 = await newKey(env.t, { workspace_id: ws.id });
      const one = await oneRequest('test/beta');
      expectStatus(await call('PATCH', `/guardrails/${ws.default_guardrail_id}`, { limit_usd: one.limit_usd }), 200);
      expectStatus(await chat(env.t, k1, 'test/beta', one.body), 200);
      expectStatus(await call('PATCH', `/guardrails/${ws.default_guardrail_id}`, { limit_usd: one.cost }), 200);
      expect((await chat(env.t, k2, 'test/beta')).status).toBe(403);
      expect((await views(env.t, k2)).listed).toEqual([]);
      expect((await views(env.t, await newKey(env.t))).listed).toEqual(REACHABLE);
    });
  });
});

describe.each(BACKENDS)('Organization settings from the config file (%s)', (backend) => {
  it('the `organization` section seeds the settings, which apply at once; the database then wins', async () => {
    const env = await startPolicyEnv(backend, { organization: { ignored_providers: ['sim-b'], default_provider_sort: 'price', data_collection: 'deny' } });
    try {
      const s = await env.t.call('GET', '/organization/settings');
      expectStatus(s, 200);
      expect(s.body.data).toMatchObject({ ignored_providers: ['sim-b'], default_provider_sort: 'price', data_collection: 'deny', enforce_zdr: false, allowed_providers: null });
      const key = await newKey(env.t);
      expect((await views(env.t, key)).listed).toEqual(without('test/gamma', 'anthropic/sim-claude'));
      expectStatus(await env.t.call('PATCH', '/organization/settings', { body: { ignored_providers: null, data_collection: 'allow' } }), 200);
      expect((await views(env.t, key)).listed).toEqual(REACHABLE);
    } finally {
      await env.close();
    }
  });

  it('an invalid section stops the start with every problem named', async () => {
    await expect(startPolicyEnv(backend, { organization: { allowed_providers: ['nope'], data_collection: 'maybe', colour: 'blue' } })).rejects.toThrow(
      /organization\.colour[\s\S]*organization\.allowed_providers\[0\][\s\S]*organization\.data_collection/,
    );
  });
});
