/**
 * Request validation of POST /chat/completions (limits at and just past each boundary), the handling of parameters
 * an endpoint does not support, and who may call what (inference vs management keys).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { chat, USER, type Json } from './util.js';

let env: ChatEnv;
beforeAll(async () => {
  env = await startChatEnv('sqlite');
});
afterAll(async () => env?.close());
beforeEach(() => {
  env.sim.resetKnobs();
  env.sim.resetStats();
});

const lastUpstream = (provider = 'sim-a'): Json => env.sim.stats(provider).lastBody;

describe('body limits', () => {
  const meta = (pairs: number, keyLen = 3, valueLen = 3) =>
    Object.fromEntries(Array.from({ length: pairs }, (_, i) => [`${i}`.padStart(keyLen, 'k'), 'v'.repeat(valueLen)]));

  const invalid: Array<[string, Record<string, unknown>, RegExp]> = [
    ['messages empty', { messages: [] }, /messages must have at least 1 item/],
    ['temperature > 2', { temperature: 2.01 }, /temperature must be at most 2/],
    ['temperature < 0', { temperature: -0.1 }, /temperature must be at least 0/],
    ['top_p > 1', { top_p: 1.5 }, /top_p must be at most 1/],
    ['top_p < 0', { top_p: -0.5 }, /top_p must be at least 0/],
    ['frequency_penalty > 2', { frequency_penalty: 2.5 }, /frequency_penalty must be at most 2/],
    ['frequency_penalty < -2', { frequency_penalty: -2.5 }, /frequency_penalty must be at least -2/],
    ['presence_penalty > 2', { presence_penalty: 3 }, /presence_penalty must be at most 2/],
    ['presence_penalty < -2', { presence_penalty: -3 }, /presence_penalty must be at least -2/],
    ['top_logprobs > 20', { top_logprobs: 21 }, /top_logprobs must be at most 20/],
    ['top_logprobs < 0', { top_logprobs: -1 }, /top_logprobs must be at least 0/],
    ['5 stop sequences', { stop: ['a', 'b', 'c', 'd', 'e'] }, /stop must have at most 4 items/],
    ['17 metadata pairs', { metadata: meta(17) }, /metadata must have at most 16 entries/],
    ['a 65-character metadata key', { metadata: meta(1, 65) }, /metadata key "k+0" must be at most 64 characters/],
    ['a 513-character metadata value', { metadata: meta(1, 3, 513) }, /metadata.* must be at most 512 characters/],
    ['a bad role', { messages: [{ role: 'robot', content: 'x' }] }, /messages\[0\]\.role must be one of/],
    ['max_tokens 0', { max_tokens: 0 }, /max_tokens must be at least 1/],
    ['reasoning_effort differs from reasoning.effort', { reasoning_effort: 'high', reasoning: { effort: 'low' } }, /reasoning_effort.*differs from reasoning\.effort/],
  ];

  it.each(invalid)('400 for %s, before any upstream call', async (_name, body, message) => {
    const r = await chat(env, { model: 'test/alpha', ...body });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe(400);
    expect(r.body.error.message).toMatch(message);
    expect(env.sim.stats('sim-a').requests + env.sim.stats('sim-b').requests).toBe(0);
  });

  it('400 when messages is missing', async () => {
    const r = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'test/alpha' } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/messages is required/);
  });

  it('400 when no model is given and the workspace has no default model', async () => {
    const r = await env.t.call('POST', '/chat/completions', { key: env.key, body: { messages: USER } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/model/);
  });

  it('values at each boundary are accepted and forwarded', async () => {
    const body = {
      model: 'test/alpha',
      temperature: 2,
      top_p: 1,
      frequency_penalty: -2,
      presence_penalty: 2,
      top_logprobs: 20,
      logprobs: true,
      stop: ['w', 'x', 'y', 'z'],
      metadata: meta(16, 64, 512),
    };
    const r = await chat(env, body);
    expect(r.status).toBe(200);
    expect(lastUpstream()).toMatchObject({ temperature: 2, top_p: 1, frequency_penalty: -2, presence_penalty: 2, top_logprobs: 20, stop: ['w', 'x', 'y', 'z'] });
    // metadata is the gateway's own: never sent upstream.
    expect(lastUpstream().metadata).toBeUndefined();
    const zero = await chat(env, { model: 'test/alpha', temperature: 0, top_p: 0, top_logprobs: 0, stop: 'halt' });
    expect(zero.status).toBe(200);
  });

  it('the presets-only limits do not apply to chat: a metadata key with brackets and a long user are accepted', async () => {
    const user = `u-${'f'.repeat(600)}`;
    const r = await chat(env, { model: 'test/alpha', metadata: { 'a[b]': 'v' }, user });
    expect(r.status).toBe(200);
    expect(lastUpstream().user).toBe(user);
  });

  it('reasoning_effort equal to reasoning.effort is accepted', async () => {
    const r = await chat(env, { model: 'test/alpha', reasoning_effort: 'low', reasoning: { effort: 'low' } });
    expect(r.status).toBe(200);
  });

  it('max_tokens (deprecated) is accepted and limits the output like max_completion_tokens', async () => {
    const r = await chat(env, { model: 'test/alpha', max_tokens: 3 });
    expect(r.status).toBe(200);
    expect(r.body.usage.completion_tokens).toBe(3);
    expect(r.body.choices[0].finish_reason).toBe('length');
    // The endpoint takes max_completion_tokens: one name in, the endpoint's name out.
    expect(lastUpstream().max_completion_tokens).toBe(3);
    expect(lastUpstream().max_tokens).toBeUndefined();
    const r2 = await chat(env, { model: 'test/alpha', max_completion_tokens: 2 });
    expect(r2.body.usage.completion_tokens).toBe(2);
  });

  it('gateway fields never reach the upstream', async () => {
    const r = await chat(env, {
      model: 'test/alpha',
      models: ['test/beta'],
      provider: { sort: 'price' },
      session_id: 's-1',
      trace: { trace_id: 't' },
      metadata: { a: 'b' },
      user: 'someone',
      max_tool_calls: 3,
      stop_server_tools_when: [{ type: 'step_count_is', step_count: 2 }],
    });
    expect(r.status).toBe(200);
    const up = lastUpstream();
    for (const k of ['models', 'provider', 'session_id', 'trace', 'metadata', 'preset', 'route', 'max_tool_calls', 'stop_server_tools_when']) expect(up).not.toHaveProperty(k);
    expect(up.model).toBe('alpha-a');
    expect(up.messages).toEqual(USER);
  });
});

describe('unsupported parameters', () => {
  it('are dropped silently (listed in gateway_metadata) when require_parameters is not set', async () => {
    // Neither alpha endpoint lists top_k or min_p.
    const r = await chat(env, { model: 'test/alpha', top_k: 40, min_p: 0.1, temperature: 0.5 }, { headers: { 'X-Gateway-Metadata': 'enabled' } });
    expect(r.status).toBe(200);
    expect(lastUpstream()).not.toHaveProperty('top_k');
    expect(lastUpstream()).not.toHaveProperty('min_p');
    expect(lastUpstream().temperature).toBe(0.5);
    expect(r.body.gateway_metadata.dropped_parameters.sort()).toEqual(['min_p', 'top_k']);
  });

  it('with provider.require_parameters, endpoints lacking one are skipped (404 when none is left)', async () => {
    const r = await chat(env, { model: 'test/alpha', top_k: 40, provider: { require_parameters: true } });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toMatch(/top_k/);
    expect(r.body.error.metadata.excluded_by).toEqual(['require_parameters']);
    expect(env.sim.stats('sim-a').requests + env.sim.stats('sim-b').requests).toBe(0);
  });

  it('unknown (non-model) fields pass through to the upstream', async () => {
    const r = await chat(env, { model: 'test/alpha', some_new_vendor_flag: { on: true } });
    expect(r.status).toBe(200);
    expect(lastUpstream().some_new_vendor_flag).toEqual({ on: true });
  });
});

describe('key kinds', () => {
  it('a management key on /chat/completions → 403', async () => {
    const r = await chat(env, { model: 'test/alpha' }, { key: env.t.adminKey });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe(403);
  });

  it('an inference key on management routes → 403', async () => {
    for (const [method, path] of [
      ['GET', '/keys'],
      ['POST', '/workspaces'],
      ['GET', '/presets'],
      ['GET', '/organization/members'],
    ] as const) {
      const r = await env.t.call(method, path, { key: env.key, body: method === 'POST' ? { name: 'x', slug: 'x' } : undefined });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error.message).toMatch(/management/i);
    }
  });

  it('no key → 401', async () => {
    const r = await chat(env, { model: 'test/alpha' }, { key: null });
    expect(r.status).toBe(401);
  });
});
