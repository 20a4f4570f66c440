/**
 * POST /messages/count_tokens (Anthropic SDK `messages.countTokens`, Claude Code's `/v1/messages/count_tokens?beta=true`):
 * exact counts from Anthropic and Gemini endpoints (the latter equal to what generateContent then reports), a 404 —
 * never a made-up number — for models without a counting API, fallbacks, errors in Anthropic's envelope, and no record,
 * spend or rate-limit use.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { createInferenceKey } from '../helpers.js';
import { isolatedEnv, type ClockedEnv, type Json } from './util.js';
import { promptTokens } from '../../src/sim/anthropic.js';
import { shippedCatalog } from '../../src/services/shipped-catalog.js';
import { buildCatalog } from '../../src/services/catalog.js';

const extra = (simUrl: string) => ({
  providers: [
    { slug: 'sim-anthropic2', name: 'Sim Anthropic 2', protocol: 'anthropic', base_url: `${simUrl}/sim-anthropic2/v1`, no_auth: true, data_policy: { training: false, retains_prompts: false, zdr: true } },
    // An OpenAI chat-protocol provider that also serves OpenAI's /responses/input_tokens (as the shipped `openai` does).
    { slug: 'sim-oai', name: 'Sim OpenAI', protocol: 'openai', base_url: `${simUrl}/sim-oai/v1`, no_auth: true, token_counting: 'openai-responses' },
  ],
  models: [
    { id: 'test/claude-two', name: 'Claude on two providers', context_length: 200000 },
    { id: 'test/gpt', name: 'GPT on a counting OpenAI provider', context_length: 200000 },
  ],
  endpoints: [
    { model: 'test/gpt', provider: 'sim-oai', upstream_model: 'gpt-sim', pricing: { prompt: '0.000001', completion: '0.000002' } },
    { model: 'test/claude-two', provider: 'sim-anthropic', upstream_model: 'claude-sim', pricing: { prompt: '0.000003', completion: '0.000015' } },
    { model: 'test/claude-two', provider: 'sim-anthropic2', upstream_model: 'claude-sim-2', pricing: { prompt: '0.000004', completion: '0.000015' } },
  ],
});

describe('POST /messages/count_tokens', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { extra });
  let env: ClockedEnv;
  let client: Anthropic;
  beforeEach(() => {
    env = isolated();
    client = new Anthropic({ baseURL: `${env.t.url}/api`, authToken: env.key, apiKey: null, maxRetries: 0 });
  });
  const messages = [{ role: 'user' as const, content: 'What is the weather in Paris today?' }];
  const tools = [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } }];
  const raw = (body: unknown, opts: { key?: string | null; query?: string } = {}) =>
    fetch(`${env.t.api}/messages/count_tokens${opts.query ?? ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(opts.key === null ? {} : { authorization: `Bearer ${opts.key ?? env.key}` }) },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, headers: r.headers, body: (await r.json()) as Json }));

  it('Anthropic SDK countTokens: the provider’s exact count, asked with the upstream model id and only counting fields', async () => {
    const res = await client.messages.countTokens({ model: 'test/claude', system: 'Be brief.', messages, tools });
    const upstream = env.sim.requests.filter((r) => r.provider === 'sim-anthropic' && r.path === '/v1/messages/count_tokens');
    expect(upstream).toHaveLength(1);
    expect(upstream[0].body).toEqual({ model: 'claude-sim', system: 'Be brief.', messages, tools });
    expect(res.input_tokens).toBe(promptTokens(upstream[0].body as Record<string, unknown>));
    expect(res.input_tokens).toBeGreaterThan(10);
  });

  it('Claude Code’s form: /messages/count_tokens?beta=true with anthropic-beta, passed on', async () => {
    const res = await client.beta.messages.countTokens({ model: 'test/claude', messages, betas: ['token-counting-2024-11-01'] });
    expect(res.input_tokens).toBeGreaterThan(0);
    const last = env.sim.requests.filter((r) => r.provider === 'sim-anthropic').at(-1)!;
    expect(last.headers['anthropic-beta']).toContain('token-counting-2024-11-01');
    expect((await raw({ model: 'test/claude', messages }, { query: '?beta=true' })).status).toBe(200);
  });

  it('Gemini: countTokens gives what generateContent then reports as the prompt’s tokens', async () => {
    const body = { model: 'test/gemini', system: 'Be brief.', messages, tools };
    const counted = await client.messages.countTokens(body);
    const served = await client.messages.create({ ...body, max_tokens: 50 });
    expect(counted.input_tokens).toBe(served.usage.input_tokens);
    const upstream = env.sim.requests.find((r) => r.provider === 'sim-google' && /:countTokens$/.test(r.path))!;
    expect(upstream.path).toBe('/v1beta/models/gemini-sim:countTokens');
    expect((upstream.body as { generateContentRequest: { model: string } }).generateContentRequest.model).toBe('models/gemini-sim');
  });

  it('OpenAI Responses endpoints: /responses/input_tokens gives what the Responses API then reports; only its fields are sent', async () => {
    const body = { model: 'test/responses', system: 'Be brief.', messages, tools };
    const counted = await client.messages.countTokens(body);
    const served = await client.messages.create({ ...body, max_tokens: 50 });
    expect(counted.input_tokens).toBe(served.usage.input_tokens);
    const upstream = env.sim.requests.find((r) => r.provider === 'sim-responses' && r.path === '/v1/responses/input_tokens')!;
    expect(Object.keys(upstream.body as Json).sort()).toEqual(['input', 'instructions', 'model', 'tools']);
    expect((upstream.body as Json).model).toBe('resp-sim');
  });

  it('an OpenAI chat-protocol provider with token_counting: openai-responses counts through /responses/input_tokens', async () => {
    const res = await client.messages.countTokens({ model: 'test/gpt', messages });
    expect(res.input_tokens).toBeGreaterThan(0);
    const upstream = env.sim.requests.filter((r) => r.provider === 'sim-oai');
    expect(upstream.map((r) => r.path)).toEqual(['/v1/responses/input_tokens']);
    expect(() => buildCatalog({ providers: [{ slug: 'x', protocol: 'openai', base_url: 'http://x', token_counting: 'tiktoken' }] }, { providers: [], models: [], endpoints: [] })).toThrow(
      /providers\[0\]\.token_counting must be openai-responses/,
    );
    expect(shippedCatalog().providers.find((p) => p.slug === 'openai')?.tokenCounting).toBe('openai-responses');
  });

  it('a model whose providers have no counting API → 404 in Anthropic’s envelope, nothing sent', async () => {
    const err = await client.messages.countTokens({ model: 'test/alpha', messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(404);
    expect((err as APIError).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(((err as APIError).error as { error: { message: string } }).error.message).toMatch(/no token-counting API/);
    expect(env.sim.stats('sim-a').requests).toBe(0);
  });

  it('unknown model → 404', async () => {
    expect((await raw({ model: 'nobody/knows', messages })).status).toBe(404);
  });

  it('an upstream failure falls back to the next counting endpoint; all failing → the last one’s status', async () => {
    env.sim.setKnobs('sim-anthropic', { errorStatus: 500 });
    const r = await raw({ model: 'test/claude-two', messages, provider: { order: ['sim-anthropic', 'sim-anthropic2'] } });
    expect(r.status).toBe(200);
    expect(env.sim.requests.filter((x) => x.provider === 'sim-anthropic2').at(-1)!.body).toMatchObject({ model: 'claude-sim-2' });
    env.sim.setKnobs('sim-anthropic2', { errorStatus: 529 });
    const failed = await raw({ model: 'test/claude-two', messages, provider: { order: ['sim-anthropic', 'sim-anthropic2'] } });
    expect(failed.status).toBe(529);
    expect(failed.body).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  });

  it('an upstream 429 → 429 with Retry-After', async () => {
    env.sim.setKnobs('sim-anthropic', { errorStatus: 429, retryAfter: 5 });
    const r = await raw({ model: 'test/claude', messages });
    expect(r.status).toBe(429);
    expect(r.body.error.type).toBe('rate_limit_error');
  });

  it('the provider refusing the request (400) is not retried elsewhere', async () => {
    const r = await raw({ model: 'test/claude-two', messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/non-empty/);
    expect(env.sim.stats('sim-anthropic').requests + env.sim.stats('sim-anthropic2').requests).toBe(1);
  });

  it.each([
    ['no messages', { model: 'test/claude' }, 'messages'],
    ['empty messages', { model: 'test/claude', messages: [] }, 'messages'],
    ['no model', { messages }, 'model'],
    ['a bad role', { model: 'test/claude', messages: [{ role: 'system', content: 'x' }] }, 'role'],
  ])('%s → 400 invalid_request_error naming the field', async (_label, body, field) => {
    const r = await raw(body);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(r.body.error.message).toContain(field);
  });

  it('no key → 401; a management key → 403 (Anthropic’s envelope)', async () => {
    const r = await raw({ model: 'test/claude', messages }, { key: null });
    expect(r.status).toBe(401);
    expect(r.body.error.type).toBe('authentication_error');
    expect((await raw({ model: 'test/claude', messages }, { key: env.t.adminKey })).status).toBe(403);
  });

  it('is in the OpenAPI document', async () => {
    const doc = await env.t.call('GET', '/openapi.json', { key: null });
    expect(Object.keys(doc.body.paths['/messages/count_tokens'].post.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404', '429', '502', '529']));
  });

  it('free: no generation record, and not counted against the key’s rate limit', async () => {
    const { key } = await createInferenceKey(env.t, { name: 'counting', rate_limit: { requests: 2, interval: '1m' } });
    for (let i = 0; i < 5; i++) {
      const r = await raw({ model: 'test/claude', messages }, { key });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-generation-id')).toBeNull();
    }
    // The key's two requests of the minute are still there for generation.
    const c = new Anthropic({ baseURL: `${env.t.url}/api`, authToken: key, apiKey: null, maxRetries: 0 });
    await c.messages.create({ model: 'test/claude', messages, max_tokens: 20 });
    await c.messages.create({ model: 'test/claude', messages, max_tokens: 20 });
    const third = await c.messages.create({ model: 'test/claude', messages, max_tokens: 20 }).catch((e: unknown) => e);
    expect((third as APIError).status).toBe(429);
  });
});
