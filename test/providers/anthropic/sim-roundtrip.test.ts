/**
 * Anthropic adapter against the provider simulator (which validates like Anthropic: anthropic-version, max_tokens,
 * thinking budget vs max_tokens, no temperature with thinking, tool_result ids): IR → HTTP → IR, both ways.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { IrRequest, IrResponse, IrStreamEvent } from '../../../src/core/ir.js';
import { anthropicAdapter } from '../../../src/providers/anthropic/index.js';
import type { UpstreamError } from '../../../src/core/provider-errors.js';
import type { UpstreamContext } from '../../../src/core/adapters.js';
import { createSimulator, type Simulator } from '../../../src/sim/server.js';
import { ctx, irRequest } from './helpers.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await createSimulator({ apiKey: 'sk-ant-sim' });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.resetKnobs();
  sim.resetStats();
});

const simCtx = (extra: Parameters<typeof ctx>[0] = {}): UpstreamContext =>
  ctx({ apiKey: 'sk-ant-sim', ...extra, provider: { baseUrl: `${sim.url}/anthro/v1`, ...extra.provider } });

async function send(req: Partial<IrRequest>, c = simCtx()): Promise<Response> {
  const r = anthropicAdapter.buildRequest(irRequest(req), c);
  return fetch(r.url, { method: 'POST', headers: r.headers, body: r.body });
}

async function call(req: Partial<IrRequest>, c = simCtx()): Promise<IrResponse> {
  const res = await send({ ...req, stream: false }, c);
  const text = await res.text();
  if (!res.ok) throw anthropicAdapter.parseError(res.status, text, Object.fromEntries(res.headers));
  return anthropicAdapter.parseResponse(text);
}

async function stream(req: Partial<IrRequest>, c = simCtx()): Promise<IrStreamEvent[]> {
  const res = await send({ ...req, stream: true }, c);
  if (!res.ok) throw anthropicAdapter.parseError(res.status, await res.text(), Object.fromEntries(res.headers));
  const decoder = anthropicAdapter.createStreamDecoder();
  const out: IrStreamEvent[] = [];
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out.push(...decoder.push(dec.decode(value, { stream: true })));
    }
  } catch {
    // connection cut: end() decides
  }
  out.push(...decoder.end());
  return out;
}

const joined = (events: IrStreamEvent[], type: 'text_delta' | 'reasoning_delta') =>
  events.map((e) => (e.type === type ? e.text : '')).join('');

const WEATHER = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe('adapter ↔ simulator', () => {
  it('plain text, non-streaming and streaming agree; max_tokens defaulted (required upstream)', async () => {
    const r = await call({});
    expect(r.finish_reason).toBe('stop');
    expect(r.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Simulated reply to: Hello/) }]);
    expect((sim.stats('anthro').lastBody as { max_tokens: number }).max_tokens).toBe(4096);
    expect(sim.stats('anthro').lastHeaders?.['x-api-key']).toBe('sk-ant-sim');
    const events = await stream({});
    expect(joined(events, 'text_delta')).toBe((r.content[0] as { text: string }).text);
    expect(events.at(-1)).toEqual({ type: 'usage', usage: r.usage });
  });

  it('normalizes cache usage: IR input includes cache reads and writes', async () => {
    sim.setKnobs('anthro', { cachedTokens: 2, cacheWriteTokens: 1 });
    const system = [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }];
    const raw = await (await send({ system })).text();
    const wire = JSON.parse(raw).usage;
    expect(wire).toMatchObject({ cache_read_input_tokens: 2, cache_creation_input_tokens: 1 });
    const body = sim.stats('anthro').lastBody as { system: unknown };
    expect(body.system).toEqual(system);
    const r = anthropicAdapter.parseResponse(raw);
    expect(r.usage).toEqual({ input: wire.input_tokens + 3, output: wire.output_tokens, cache_read: 2, cache_write: 1, reasoning: 0 });
    const events = await stream({ system });
    expect(events.at(-1)).toEqual({ type: 'usage', usage: r.usage });
  });

  it('thinking with temperature: the adapter drops temperature, the upstream accepts; reasoning and signature come back', async () => {
    const req: Partial<IrRequest> = { reasoning: { effort: 'low' }, temperature: 0.3, max_tokens: 4000 };
    const r = await call(req);
    expect(r.content.map((p) => p.type)).toEqual(['reasoning', 'text']);
    expect(r.content[0]).toMatchObject({ type: 'reasoning', signature: expect.any(String) });
    const events = await stream(req);
    expect(joined(events, 'reasoning_delta')).toBe((r.content[0] as { text: string }).text);
    expect(events.some((e) => e.type === 'reasoning_signature')).toBe(true);
  });

  it('tool round trip: the tool call and its result go back and are accepted', async () => {
    const first = await call({ tools: [WEATHER], messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }] });
    expect(first.finish_reason).toBe('tool_calls');
    const tc = first.content.find((p) => p.type === 'tool_call');
    expect(tc && tc.type === 'tool_call' && JSON.parse(tc.arguments)).toEqual({ city: 'example' });
    const second = await call({
      tools: [WEATHER],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_call_id: (tc as { id: string }).id, content: 'Sunny, 21C' }] },
      ],
    });
    expect(second.finish_reason).toBe('stop');
    expect(second.content[0]).toEqual({ type: 'text', text: expect.stringMatching(/^Simulated reply using tool result: Sunny, 21C/) });
    const events = await stream({ tools: [WEATHER], messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }] });
    const start = events.find((e) => e.type === 'tool_call_start');
    expect(start).toMatchObject({ name: 'get_weather', id: expect.stringMatching(/^toolu_sim/) });
    const args = events.map((e) => (e.type === 'tool_call_delta' ? e.arguments : '')).join('');
    expect(JSON.parse(args)).toEqual({ city: 'example' });
  });

  it('JSON output: emulated with the json_output tool (text back), or native output_config', async () => {
    const rf = { type: 'json_schema' as const, name: 'person', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } };
    const viaTool = await call({ response_format: rf });
    expect(viaTool.finish_reason).toBe('stop');
    expect(viaTool.content).toEqual([{ type: 'text', text: '{"name":"example"}' }]);
    const streamed = await stream({ response_format: rf });
    expect(joined(streamed, 'text_delta')).toBe('{"name":"example"}');
    expect(streamed.some((e) => e.type === 'tool_call_start')).toBe(false);
    expect(streamed.find((e) => e.type === 'finish')).toMatchObject({ finish_reason: 'stop' });
    const native = await call({ response_format: rf }, simCtx({ endpoint: { supported_parameters: ['structured_outputs'] } }));
    expect(native.content).toEqual([{ type: 'text', text: '{"name":"example"}' }]);
  });

  it('errors map to gateway statuses, including in-stream errors and cut streams', async () => {
    sim.setKnobs('anthro', { errorStatus: 529 });
    await expect(call({})).rejects.toMatchObject({ status: 529, type: 'provider_overloaded' });
    sim.setKnobs('anthro', { errorStatus: 429, retryAfter: 7 });
    await expect(call({})).rejects.toMatchObject({ status: 429, retryAfter: 7 });
    sim.setKnobs('anthro', { errorStatus: null, retryAfter: null, errorAfterChunks: 2 });
    const events = await stream({});
    expect(events.at(-1)).toMatchObject({ type: 'error', status: 529, error_type: 'provider_overloaded' });
    sim.setKnobs('anthro', { errorAfterChunks: null, disconnectAfterChunks: 2 });
    await expect(stream({})).rejects.toMatchObject({ status: 502 });
    sim.setKnobs('anthro', { disconnectAfterChunks: null });
    const bad = await call({}, simCtx({ apiKey: 'sk-ant-wrong' })).catch((e: UpstreamError) => e);
    expect(bad).toMatchObject({ status: 502, type: 'authentication', providerCode: 401 });
  });
});
