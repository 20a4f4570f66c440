/** GET /activity: served generations of the last 30 completed UTC days, summed per day, model and endpoint. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenRouter } from '@openrouter/sdk';
import { BACKENDS, createInferenceKey } from '../helpers.js';
import { ADMIN_KEY } from '../helpers.js';
import { startClockedEnv, type ClockedEnv } from '../chat/util.js';
import { expectError, expectStatus } from './util.js';

const DAY = 24 * 3600_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe.each(BACKENDS)('GET /activity (%s)', (backend) => {
  let env: ClockedEnv;
  let other: { key: string; hash: string };
  /** Generation records made two days ago, as the API shows them. */
  const made: any[] = [];
  const twoDaysAgo = dayOf(Date.now() - 2 * DAY);

  beforeAll(async () => {
    env = await startClockedEnv(backend);
    other = await createInferenceKey(env.t, { name: 'other' });
    env.advance(-2 * DAY);
    const ask = async (key: string, model: string, content: string) => {
      const res = await env.t.call('POST', '/chat/completions', { key, body: { model, messages: [{ role: 'user', content }] } });
      expectStatus(res, 200);
      return res.body.id as string;
    };
    const ids = [await ask(env.key, 'test/alpha', 'one'), await ask(env.key, 'test/alpha', 'two two'), await ask(env.key, 'test/beta', 'three'), await ask(other.key, 'test/alpha', 'four')];
    // A failed request (unknown model) is not activity.
    expect((await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'nobody/nothing', messages: [{ role: 'user', content: 'x' }] } })).status).toBe(404);
    env.advance(2 * DAY);
    await env.t.gw.svc.recorder.flush();
    for (const id of ids) made.push((await env.t.call('GET', `/generation?id=${id}`)).body.data);
  });
  afterAll(async () => env?.close());

  /** What /activity should say, summed from the generation records. */
  function expected(rows: any[], withWorkspace = false) {
    const by = new Map<string, any>();
    for (const g of rows) {
      const k = `${g.model}|${g.endpoint_tag}${withWorkspace ? `|${g.workspace_id}` : ''}`;
      const e = by.get(k) ?? { date: twoDaysAgo, model: g.model, endpoint_id: g.endpoint_tag, usage: 0, byok_usage_inference: 0, requests: 0, prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, ...(withWorkspace ? { workspace_id: g.workspace_id } : {}) };
      e.usage += g.total_cost;
      e.requests += 1;
      e.prompt_tokens += g.tokens_prompt;
      e.completion_tokens += g.tokens_completion;
      e.reasoning_tokens += g.native_tokens_reasoning;
      by.set(k, e);
    }
    return [...by.values()];
  }
  const comparable = (rows: any[]) =>
    rows.map(({ provider_name: _p, model_permaslug: _s, usage, ...r }) => ({ ...r, usage: Math.round(usage * 1e9) })).sort((a, b) => `${a.model}${a.endpoint_id}`.localeCompare(`${b.model}${b.endpoint_id}`));

  it('sums the served generations per day, model and endpoint (failures left out)', async () => {
    const res = await env.t.call('GET', '/activity');
    expectStatus(res, 200);
    expect(comparable(res.body.data)).toEqual(comparable(expected(made)));
    for (const row of res.body.data) {
      expect(row.provider_name).toMatch(/^Sim /); // the provider's name, not its slug
      expect(row.model_permaslug).toBe(row.model);
      expect(Object.keys(row).sort()).toEqual(['byok_usage_inference', 'completion_tokens', 'date', 'endpoint_id', 'model', 'model_permaslug', 'prompt_tokens', 'provider_name', 'reasoning_tokens', 'requests', 'usage']);
    }
    // The same for that one day; another day in the window has nothing.
    expect(comparable((await env.t.call('GET', `/activity?date=${twoDaysAgo}`)).body.data)).toEqual(comparable(expected(made)));
    expect((await env.t.call('GET', `/activity?date=${dayOf(Date.now() - 5 * DAY)}`)).body.data).toEqual([]);
  });

  it('filters by key, by member, by workspace; splits per workspace', async () => {
    const mine = made.filter((g) => g.api_key_hash === env.keyHash);
    expect(comparable((await env.t.call('GET', `/activity?api_key_hash=${env.keyHash}`)).body.data)).toEqual(comparable(expected(mine)));
    expect(comparable((await env.t.call('GET', `/activity?api_key_hash=${other.hash}`)).body.data)).toEqual(comparable(expected(made.filter((g) => g.api_key_hash === other.hash))));
    // Both keys were created by the admin member.
    const owner = (await env.t.call('GET', '/organization/members')).body.data[0].id;
    expect(comparable((await env.t.call('GET', `/activity?user_id=${owner}`)).body.data)).toEqual(comparable(expected(made)));
    expect(comparable((await env.t.call('GET', `/activity?user_id=${owner}&api_key_hash=${other.hash}`)).body.data)).toEqual(comparable(expected(made.filter((g) => g.api_key_hash === other.hash))));
    const split = (await env.t.call('GET', '/activity?group_by=workspace')).body.data;
    expect(comparable(split)).toEqual(comparable(expected(made, true)));
    expect(comparable((await env.t.call('GET', '/activity?workspace_id=default')).body.data)).toEqual(comparable(expected(made)));
    expectStatus(await env.t.call('POST', '/workspaces', { body: { name: 'Empty', slug: 'empty-activity' } }), 201);
    expect((await env.t.call('GET', '/activity?workspace_id=empty-activity')).body.data).toEqual([]);
  });

  it('refuses bad input: a day outside the window or malformed (400 naming date), bad filters, inference keys', async () => {
    expectError(await env.t.call('GET', `/activity?date=${dayOf(Date.now())}`), 400, { field: 'date', message: 'last 30 completed UTC days' });
    expectError(await env.t.call('GET', `/activity?date=${dayOf(Date.now() - 31 * DAY)}`), 400, { field: 'date' });
    expectError(await env.t.call('GET', '/activity?date=2026-02-30'), 400, { field: 'date' });
    expectError(await env.t.call('GET', '/activity?date=yesterday'), 400, { field: 'date' });
    expectError(await env.t.call('GET', '/activity?api_key_hash=xyz'), 400, { field: 'api_key_hash' });
    expectError(await env.t.call('GET', '/activity?group_by=model'), 400, { field: 'group_by' });
    expectError(await env.t.call('GET', '/activity?user_id=user_nobody'), 400, { field: 'user_id' });
    expectError(await env.t.call('GET', '/activity?workspace_id=no-such-workspace'), 404);
    expectError(await env.t.call('GET', '/activity', { key: env.key }), 403);
    expectError(await env.t.call('GET', '/activity', { key: null }), 401);
  });

  it('is what @openrouter/sdk reads (analytics.getUserActivity)', async () => {
    const admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: env.t.api });
    const res = await admin.analytics.getUserActivity({});
    expect(res.data.map((r) => r.requests).reduce((a, b) => a + b, 0)).toBe(made.length);
    expect(res.data[0]).toMatchObject({ date: twoDaysAgo, endpointId: expect.any(String), byokUsageInference: 0 });
  });
});
