/**
 * The official `openai` npm SDK against a running gateway: plain and streamed completions, tool calls (both ways and
 * a full tool round trip), keep-alive comments inside a stream, and errors surfacing as `APIError` with the right
 * status and envelope.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { PRICES, startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { ADMIN_KEY } from '../helpers.js';
import { isolatedEnv, upstreamBodies, WEATHER_TOOL, type Json } from './util.js';

let shared: ChatEnv;
let sharedClient: OpenAI;
/** The env of the running test (the shared one, or a fresh one in the error tests). */
let env: ChatEnv;
let client: OpenAI;

beforeAll(async () => {
  // Short keep-alive so that a slow first token shows `: GATEWAY PROCESSING` comments the SDK must skip.
  shared = await startChatEnv('sqlite', { env: { GATEWAY_STREAM_KEEPALIVE_MS: '200' } });
  sharedClient = new OpenAI({ baseURL: shared.t.api, apiKey: shared.key, maxRetries: 0 });
});
afterAll(async () => shared?.close());
beforeEach(() => {
  env = shared;
  client = sharedClient;
  env.sim.resetKnobs();
  env.sim.resetStats();
});

const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];

/** Gateway-only request fields, spread into SDK calls (the SDK types do not know them). */
const extra = (fields: Record<string, unknown>) => fields as object;

async function expectApiError(p: Promise<unknown>): Promise<APIError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(APIError);
    return e as APIError;
  }
  throw new Error('expected an APIError');
}

describe('openai SDK: completions', () => {
  it('non-streaming: gen- id equal to X-Generation-Id, the serving model, usage with cost', async () => {
    // The upstream names its model its own way; the reply names the gateway model that served.
    env.sim.setKnobs('sim-a', { completionTokens: 7, model: 'upstream-internal-name' });
    const { data, response } = await client.chat.completions.create({ model: 'test/alpha', messages }).withResponse();
    expect(data.id).toMatch(/^gen-/);
    expect(response.headers.get('x-generation-id')).toBe(data.id);
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe('test/alpha');
    expect(data.choices[0].message.role).toBe('assistant');
    expect(data.choices[0].message.content).toMatch(/^Simulated reply to:/);
    expect(data.choices[0].finish_reason).toBe('stop');
    // Prompt: "What is the weather in Paris?" = 29 chars → ceil(29/4) + 3 = 11 tokens; 7 completion tokens.
    // Cost at sim-a: 11 × 0.000001 + 7 × 0.000002 = 0.000011 + 0.000014 = 0.000025.
    expect(data.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    const usage = data.usage as Json;
    expect(usage.cost).toBe(0.000025);
    expect(usage.is_byok).toBe(false);
    expect(usage.cost_details).toEqual({ upstream_inference_prompt_cost: 0.000011, upstream_inference_completions_cost: 0.000014, upstream_inference_cost: 0.000025 });
    expect(PRICES.a.prompt).toBe('0.000001'); // the figures above assume these prices
    // The upstream got its own model name, not the gateway's.
    expect(upstreamBodies(env, 'sim-a')[0].model).toBe('alpha-a');
  });

  it('streaming: chunks share the gen- id, content arrives in deltas, usage comes once in a final chunk with no choices', async () => {
    env.sim.setKnobs('sim-a', { completionTokens: 5, model: 'upstream-internal-name' });
    const { data: stream, response } = await client.chat.completions.create({ model: 'test/alpha', messages, stream: true }).withResponse();
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const id = response.headers.get('x-generation-id');
    expect(id).toMatch(/^gen-/);
    expect(chunks.every((c) => c.id === id && c.object === 'chat.completion.chunk' && c.model === 'test/alpha')).toBe(true);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toMatch(/^Simulated reply to:/);
    const withUsage = chunks.filter((c) => c.usage);
    expect(withUsage).toHaveLength(1);
    const last = chunks[chunks.length - 1];
    expect(last).toBe(withUsage[0]);
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 });
    // 11 × 0.000001 + 5 × 0.000002 = 0.000021
    expect((last.usage as Json).cost).toBe(0.000021);
    const finishes = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finishes.map((c) => c.choices[0].finish_reason)).toEqual(['stop']);
    expect(chunks.indexOf(finishes[0])).toBe(chunks.length - 2);
  });

  it('streaming with a slow first token: keep-alive comments are skipped by the SDK', async () => {
    env.sim.setKnobs('sim-a', { ttftMs: 700, completionTokens: 3 });
    // A fetch that keeps a copy of the raw SSE text the SDK parses.
    let raw: Promise<string> = Promise.resolve('');
    const recording = new OpenAI({
      baseURL: env.t.api,
      apiKey: env.key,
      maxRetries: 0,
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        raw = res.clone().text();
        return res;
      },
    });
    const stream = await recording.chat.completions.create({ model: 'test/alpha', messages, stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    expect(await raw).toMatch(/^: GATEWAY PROCESSING\n\n/);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toMatch(/^Simulated reply/);
    expect(chunks[chunks.length - 1].usage?.completion_tokens).toBe(3);
  });

  it('gateway fields pass through the SDK: models[] fallback and gateway_metadata on request', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 503 });
    const res = await client.chat.completions.create(
      { model: 'test/beta', messages, ...extra({ models: ['test/alpha'] }) },
      { headers: { 'X-Gateway-Metadata': 'enabled' } },
    );
    expect(res.model).toBe('test/alpha');
    const meta = (res as Json).gateway_metadata;
    expect(meta.strategy).toBe('fallback');
    expect(meta.attempt).toBe(2);
  });
});

describe('openai SDK: tool calls', () => {
  it('non-streaming: a function call with JSON arguments; the tool-less provider is not used', async () => {
    const res = await client.chat.completions.create({ model: 'test/alpha', messages, tools: [WEATHER_TOOL] });
    const choice = res.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0];
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('not a function call');
    expect(call.function.name).toBe('get_weather');
    const args = JSON.parse(call.function.arguments);
    expect(typeof args.city).toBe('string');
    expect(Number.isInteger(args.days)).toBe(true);
    expect(env.sim.stats('sim-a').requests).toBe(1);
    expect(env.sim.stats('sim-b').requests).toBe(0);
    expect(upstreamBodies(env, 'sim-a')[0].tools).toEqual([WEATHER_TOOL]);
  });

  it('streaming: tool-call deltas assemble into one call with finish_reason tool_calls', async () => {
    const stream = await client.chat.completions.create({ model: 'test/alpha', messages, tools: [WEATHER_TOOL], stream: true });
    let name = '';
    let args = '';
    let id: string | undefined;
    let finish: string | null = null;
    for await (const c of stream) {
      const d = c.choices[0];
      if (!d) continue;
      for (const t of d.delta.tool_calls ?? []) {
        id ??= t.id;
        name += t.function?.name ?? '';
        args += t.function?.arguments ?? '';
      }
      finish = d.finish_reason ?? finish;
    }
    expect(id).toMatch(/^call_/);
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toHaveProperty('city');
    expect(finish).toBe('tool_calls');
  });

  it('a tool round trip: the tool result goes upstream and the model answers with text', async () => {
    const first = await client.chat.completions.create({ model: 'test/alpha', messages, tools: [WEATHER_TOOL] });
    const call = first.choices[0].message.tool_calls![0];
    const second = await client.chat.completions.create({
      model: 'test/alpha',
      tools: [WEATHER_TOOL],
      messages: [...messages, first.choices[0].message as ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 degrees' }],
    });
    expect(second.choices[0].finish_reason).toBe('stop');
    expect(second.choices[0].message.content).toMatch(/^Simulated reply using tool result: sunny, 21 degrees/);
    const up = upstreamBodies(env, 'sim-a')[1];
    expect(up.messages[2]).toEqual({ role: 'tool', tool_call_id: call.id, content: 'sunny, 21 degrees' });
  });
});

describe('openai SDK: errors are APIError with the gateway status', () => {
  // Upstream failures mark endpoints unhealthy for a while: an isolated gateway (see isolatedEnv).
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach });
  beforeEach(() => {
    env = isolated();
    client = new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
  });

  it('unknown model → 404 NotFoundError with the envelope', async () => {
    const e = await expectApiError(client.chat.completions.create({ model: 'test/nope', messages }));
    expect(e.status).toBe(404);
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect((e.error as Json).code).toBe(404);
    expect(e.message).toMatch(/404/);
  });

  it('invalid body → 400 BadRequestError naming the field', async () => {
    const e = await expectApiError(client.chat.completions.create({ model: 'test/alpha', messages, temperature: 3 }));
    expect(e.status).toBe(400);
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect((e.error as Json).message).toMatch(/temperature/);
  });

  it('upstream 429 everywhere → RateLimitError 429 with Retry-After', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 429, retryAfter: 4 });
    const e = await expectApiError(client.chat.completions.create({ model: 'test/beta', messages }));
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.status).toBe(429);
    expect(e.headers?.get('retry-after')).toBe('4');
    expect((e.error as Json).metadata.provider_name).toBe('Sim C');
  });

  it('streaming request, upstream 5xx before any token → APIError 502 (a JSON error, not a stream)', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 500 });
    const e = await expectApiError(client.chat.completions.create({ model: 'test/unpriced', messages, stream: true }));
    expect(e.status).toBe(502);
    expect(e).toBeInstanceOf(OpenAI.InternalServerError);
  });

  it('streaming, upstream fails after the first tokens → the SDK throws the in-stream error (code 502)', async () => {
    env.sim.setKnobs('sim-c', { errorAfterChunks: 3 });
    const stream = await client.chat.completions.create({ model: 'test/beta', messages, stream: true });
    let text = '';
    const e = await expectApiError(
      (async () => {
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
      })(),
    );
    expect(text).toMatch(/^Simulated reply to:/);
    expect((e.error as Json).code).toBe(502);
  });

  it('a management key → 403 PermissionDeniedError', async () => {
    const admin = new OpenAI({ baseURL: env.t.api, apiKey: ADMIN_KEY, maxRetries: 0 });
    const e = await expectApiError(admin.chat.completions.create({ model: 'test/alpha', messages }));
    expect(e).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(e.status).toBe(403);
    expect(env.sim.stats('sim-a').requests).toBe(0);
  });

  it('a wrong key → 401 AuthenticationError', async () => {
    const bad = new OpenAI({ baseURL: env.t.api, apiKey: 'sk-gw-v1-' + '0'.repeat(64), maxRetries: 0 });
    const e = await expectApiError(bad.chat.completions.create({ model: 'test/alpha', messages }));
    expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(e.status).toBe(401);
  });
});
