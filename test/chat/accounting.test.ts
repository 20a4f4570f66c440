/**
 * Cost arithmetic against hand-computed figures (prices from PRICES in test/chat-helpers.ts, in USD per token), for
 * plain, cached and reasoning tokens, streamed and not; unknown prices; and the figures kept in generation records
 * and key usage.
 *
 * Token counts are the simulator's: a message of N characters is ceil(N / 4) + 3 prompt tokens, so PROMPT_100
 * (388 characters) is exactly 100 prompt tokens; `completionTokens` sets the visible output tokens, and
 * `reasoningTokens` are added on top (completion_tokens = visible + reasoning, OpenAI's convention); `cachedTokens`
 * are part of prompt_tokens.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PRICES, startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { chat, PROMPT_100, streamChat, type Json } from './util.js';

/** test/delta: sim-a with a reasoning price of its own and a per-request fee. */
const DELTA = {
  models: [{ id: 'test/delta', name: 'Test Delta', context_length: 32000 }],
  endpoints: [
    {
      model: 'test/delta',
      provider: 'sim-a',
      upstream_model: 'delta-a',
      pricing: { prompt: '0.000001', completion: '0.000002', internal_reasoning: '0.000005', input_cache_read: '0.0000001', request: '0.0001' },
    },
  ],
};

let env: ChatEnv;
const costs: number[] = [];
const messages = [{ role: 'user', content: PROMPT_100 }];

beforeAll(async () => {
  env = await startChatEnv('sqlite', { catalog: DELTA });
});
afterAll(async () => env?.close());
beforeEach(() => {
  env.sim.resetKnobs();
  env.sim.resetStats();
});

/** Non-streamed and streamed usage for the same request; both must agree. */
async function bothWays(body: Record<string, unknown>): Promise<Json[]> {
  const plain = await chat(env, { messages, ...body }, { headers: { 'X-Gateway-Metadata': 'enabled' } });
  expect(plain.status).toBe(200);
  const streamed = await streamChat(env, { messages, ...body });
  expect(streamed.status).toBe(200);
  const streamUsage = streamed.chunks[streamed.chunks.length - 1].usage;
  expect(streamUsage).toEqual(plain.body.usage);
  for (const u of [plain.body.usage, streamUsage]) if (typeof u.cost === 'number') costs.push(u.cost);
  return [plain.body, plain.body.usage];
}

describe('cost arithmetic', () => {
  it('plain tokens at sim-a prices', async () => {
    env.sim.setKnobs('sim-a', { completionTokens: 50 });
    const [, usage] = await bothWays({ model: 'test/alpha' });
    // prompt:     100 × 0.000001 = 0.0001
    // completion:  50 × 0.000002 = 0.0001
    // total                       = 0.0002
    expect(usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, cost: 0.0002, is_byok: false });
    expect(usage.cost_details).toEqual({ upstream_inference_prompt_cost: 0.0001, upstream_inference_completions_cost: 0.0001, upstream_inference_cost: 0.0002 });
    expect(PRICES.a).toEqual({ prompt: '0.000001', completion: '0.000002', input_cache_read: '0.0000001' });
  });

  it('cached tokens at input_cache_read, reasoning tokens at the completion rate, each token billed once', async () => {
    env.sim.setKnobs('sim-a', { completionTokens: 50, cachedTokens: 40, reasoningTokens: 10 });
    const [, usage] = await bothWays({ model: 'test/alpha' });
    // prompt_tokens 100 of which 40 cached; completion_tokens 60 of which 10 reasoning.
    // uncached prompt:  60 × 0.000001  = 0.00006
    // cached prompt:    40 × 0.0000001 = 0.000004     → prompt cost 0.000064
    // completion:       50 × 0.000002  = 0.0001
    // reasoning:        10 × 0.000002  = 0.00002      → completion cost 0.00012 (no internal_reasoning price)
    // total                              0.000184
    expect(usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 60, total_tokens: 160 });
    expect(usage.prompt_tokens_details.cached_tokens).toBe(40);
    expect(usage.completion_tokens_details.reasoning_tokens).toBe(10);
    expect(usage.cost).toBe(0.000184);
    expect(usage.cost_details).toEqual({ upstream_inference_prompt_cost: 0.000064, upstream_inference_completions_cost: 0.00012, upstream_inference_cost: 0.000184 });
  });

  it('reasoning at its own internal_reasoning price, plus a per-request fee', async () => {
    env.sim.setKnobs('sim-a', { completionTokens: 50, cachedTokens: 40, reasoningTokens: 10 });
    const [, usage] = await bothWays({ model: 'test/delta' });
    // uncached prompt:  60 × 0.000001  = 0.00006
    // cached prompt:    40 × 0.0000001 = 0.000004     → prompt cost 0.000064
    // completion:       50 × 0.000002  = 0.0001
    // reasoning:        10 × 0.000005  = 0.00005      → completion cost 0.00015
    // request fee:       1 × 0.0001    = 0.0001
    // total                              0.000314
    expect(usage.cost).toBe(0.000314);
    expect(usage.cost_details).toEqual({ upstream_inference_prompt_cost: 0.000064, upstream_inference_completions_cost: 0.00015, upstream_inference_cost: 0.000314 });
  });

  it('a provider without a cache-read price bills cached tokens at the prompt rate (sim-b)', async () => {
    env.sim.setKnobs('sim-b', { completionTokens: 50, cachedTokens: 40 });
    const [body, usage] = await bothWays({ model: 'test/alpha', provider: { order: ['sim-b'] } });
    expect(body.provider).toBe('Sim B');
    // prompt:     100 × 0.000003 = 0.0003  (40 cached, same rate)
    // completion:  50 × 0.000004 = 0.0002
    // total                       = 0.0005
    expect(usage.prompt_tokens_details.cached_tokens).toBe(40);
    expect(usage.cost).toBe(0.0005);
    expect(usage.cost_details).toEqual({ upstream_inference_prompt_cost: 0.0003, upstream_inference_completions_cost: 0.0002, upstream_inference_cost: 0.0005 });
  });

  it('test/beta at sim-c prices', async () => {
    env.sim.setKnobs('sim-c', { completionTokens: 50 });
    const [, usage] = await bothWays({ model: 'test/beta' });
    // prompt:     100 × 0.0000005 = 0.00005
    // completion:  50 × 0.000001  = 0.00005
    // total                        = 0.0001
    expect(usage.cost).toBe(0.0001);
    expect(PRICES.c).toEqual({ prompt: '0.0000005', completion: '0.000001' });
  });

  it('an unknown price: cost null (never $0), flagged in gateway_metadata and in the record', async () => {
    const [body, usage] = await bothWays({ model: 'test/unpriced' });
    expect(usage.prompt_tokens).toBe(100);
    expect(usage.cost).toBeNull();
    expect(usage.cost_details).toEqual({ upstream_inference_prompt_cost: null, upstream_inference_completions_cost: null, upstream_inference_cost: null });
    expect(body.gateway_metadata.pricing).toBe('unknown');
    const g = await env.t.call('GET', `/generation?id=${body.id}`, { key: env.key });
    // The record's total is a number as the hosted API's (0: nothing billed), flagged instead of silent.
    expect(g.body.data).toMatchObject({ total_cost: 0, usage: 0, upstream_inference_cost: null, pricing: 'unknown' });
    expect(g.body.data.tokens_prompt).toBe(100);
    // Priced replies carry no such flag.
    const priced = await chat(env, { model: 'test/alpha' }, { headers: { 'X-Gateway-Metadata': 'enabled' } });
    expect(priced.body.gateway_metadata.pricing).toBeUndefined();
    costs.push(priced.body.usage.cost);
  });
});

describe('records and key usage', () => {
  it('the generation record keeps the tokens and the cost of the reply', async () => {
    env.sim.setKnobs('sim-a', { completionTokens: 50, cachedTokens: 40, reasoningTokens: 10 });
    const r = await chat(env, { model: 'test/alpha', messages });
    costs.push(r.body.usage.cost);
    const g = await env.t.call('GET', `/generation?id=${r.body.id}`, { key: env.key });
    expect(g.status).toBe(200);
    expect(g.body.data).toMatchObject({
      id: r.body.id,
      model: 'test/alpha',
      provider_name: 'sim-a',
      tokens_prompt: 100,
      tokens_completion: 60,
      native_tokens_cached: 40,
      native_tokens_reasoning: 10,
      total_cost: 0.000184,
      upstream_inference_cost: 0.000184,
      is_byok: false,
      finish_reason: 'stop',
    });
  });

  it("the key's usage is the sum of what its requests cost", async () => {
    await env.t.gw.svc.recorder.flush();
    const k = await env.t.call('GET', `/keys/${env.keyHash}`);
    expect(k.status).toBe(200);
    const sum = costs.reduce((s, c) => s + c, 0);
    expect(costs.length).toBeGreaterThanOrEqual(10);
    expect(k.body.data.usage).toBeCloseTo(sum, 12);
    expect(k.body.data.usage_daily).toBeCloseTo(sum, 12);
  });
});
