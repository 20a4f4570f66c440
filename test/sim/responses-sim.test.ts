/**
 * Provider simulator, OpenAI Responses API: wire format through the official SDK (`client.responses.create`),
 * knobs and faults through raw HTTP, and the gateway's Responses upstream adapter against it. Local only.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import type { IrStreamEvent } from '../../src/core/ir.js';
import { openaiResponsesAdapter } from '../../src/providers/openai-responses/index.js';
import { createSimulator, type Simulator } from '../../src/sim/server.js';
import { assemble, ctx as adapterCtx } from '../providers/openai/util.js';

let sim: Simulator;

beforeAll(async () => {
  sim = await createSimulator();
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.resetKnobs();
  sim.resetStats();
});

const client = (provider = '') => new OpenAI({ baseURL: `${sim.url}${provider ? '/' + provider : ''}/v1`, apiKey: 'x', maxRetries: 0 });

const PROMPT = 'Hello there, what is the weather like in Paris today?';

const WEATHER_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  strict: true,
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'days', 'unit'],
    additionalProperties: false,
  },
};

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(sim.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

async function readAll(res: Response): Promise<{ text: string; error?: unknown }> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text };
      text += dec.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

/** `{event, data}` of an SSE text. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const sseEvents = (text: string): Array<{ event: string; data: any }> =>
  text
    .split('\n\n')
    .filter((b) => b.includes('data: '))
    .map((b) => {
      const lines = b.split('\n');
      return { event: lines.find((l) => l.startsWith('event: '))?.slice(7) ?? '', data: JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) };
    });

describe('Responses wire format (SDK)', () => {
  it('non-streaming: full response object, output_text, usage', async () => {
    const r = await client().responses.create({ model: 'gpt-sim', input: PROMPT, instructions: 'Be brief.' });
    expect(r.id).toMatch(/^resp_sim/);
    expect(r.object).toBe('response');
    expect(r.status).toBe('completed');
    expect(r.model).toBe('gpt-sim');
    expect(r.instructions).toBe('Be brief.');
    expect(r.incomplete_details).toBeNull();
    expect(r.error).toBeNull();
    expect(r.output).toHaveLength(1);
    const msg = r.output[0];
    expect(msg).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(r.output_text).toMatch(/^Simulated reply to: Hello there, what is the weather/);
    // instructions "Be brief." (9 chars) → 3 + 3; input 53 chars → 14 + 3.
    expect(r.usage).toEqual({ input_tokens: 23, input_tokens_details: { cached_tokens: 0 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 35 });
    expect(sim.stats('default').requests).toBe(1);
  });

  it('the same reply text as the chat completions simulator for the same prompt', async () => {
    const chat = await client().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: PROMPT }] });
    const resp = await client().responses.create({ model: 'm', input: [{ role: 'user', content: PROMPT }] });
    expect(resp.output_text).toBe(chat.choices[0].message.content);
  });

  it('streaming: documented event sequence, increasing sequence numbers, deltas equal the final text', async () => {
    const full = await client().responses.create({ model: 'gpt-sim', input: PROMPT });
    const stream = await client().responses.create({ model: 'gpt-sim', input: PROMPT, stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const ev of stream) events.push(ev);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(types.filter((t) => t === 'response.output_text.delta')).toHaveLength(12);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    expect(text).toBe(full.output_text);
    const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(done.response.status).toBe('completed');
    expect(done.response.usage).toEqual(full.usage);
    expect((done.response.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0]).toMatchObject({ type: 'output_text', text });
  });

  it('SDK stream helper: finalResponse() rebuilds the output', async () => {
    const final = await client().responses.stream({ model: 'gpt-sim', input: PROMPT }).finalResponse();
    expect(final.output_text).toMatch(/^Simulated reply to:/);
    expect(final.status).toBe('completed');
  });

  it('function call: arguments follow the schema, streamed in pieces; tool_choice none; reply after function_call_output', async () => {
    const r = await client().responses.create({ model: 'gpt-sim', input: PROMPT, tools: [WEATHER_TOOL] });
    const call = r.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(call.call_id).toMatch(/^call_sim/);
    expect(JSON.parse(call.arguments)).toEqual({ city: 'example', days: 1, unit: 'celsius' });

    const stream = await client().responses.create({ model: 'gpt-sim', input: PROMPT, tools: [WEATHER_TOOL], stream: true });
    let args = '';
    const types: string[] = [];
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.function_call_arguments.delta') args += ev.delta;
    }
    expect(args).toBe(call.arguments);
    expect(types.filter((t) => t === 'response.function_call_arguments.delta').length).toBeGreaterThan(3);
    expect(types).toContain('response.function_call_arguments.done');

    const none = await client().responses.create({ model: 'gpt-sim', input: PROMPT, tools: [WEATHER_TOOL], tool_choice: 'none' });
    expect(none.output[0].type).toBe('message');
    const after = await client().responses.create({
      model: 'gpt-sim',
      tools: [WEATHER_TOOL],
      input: [
        { role: 'user', content: PROMPT },
        { type: 'function_call', call_id: call.call_id, name: 'get_weather', arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: 'Sunny and 18C' },
      ],
    });
    expect(after.output_text).toMatch(/^Simulated reply using tool result: Sunny and 18C/);
    const forced = await client().responses.create({ model: 'gpt-sim', input: PROMPT, tools: [WEATHER_TOOL], tool_choice: { type: 'function', name: 'get_weather' } });
    expect(forced.output[0].type).toBe('function_call');
  });

  it('namespace and custom tools, also inside additional_tools items: namespaced calls, custom_tool_call with an input string', async () => {
    const ns = { type: 'namespace', name: 'functions', description: '', tools: [{ type: 'custom', name: 'exec', description: 'Run code' }, WEATHER_TOOL] };
    // Codex's shape: the tools in an `additional_tools` input item, `tools` empty; the toolName knob picks `exec`.
    sim.setKnobs('ns', { toolName: 'functions__exec' });
    const body = { model: 'gpt-sim', tools: [], input: [{ type: 'additional_tools', role: 'developer', tools: [ns] }, { role: 'user', content: PROMPT }] };
    const plain = (await (await post('/ns/v1/responses', body)).json()) as any;
    expect(plain.output[0]).toMatchObject({ type: 'custom_tool_call', name: 'exec', namespace: 'functions', input: '"simulated input"', status: 'completed' });
    expect(plain.output[0].call_id).toMatch(/^call_sim/);
    const events = sseEvents((await readAll(await post('/ns/v1/responses', { ...body, stream: true }))).text);
    const types = events.map((e) => e.event);
    expect(types).toContain('response.custom_tool_call_input.delta');
    expect(events.filter((e) => e.event === 'response.custom_tool_call_input.delta').map((e) => e.data.delta).join('')).toBe('"simulated input"');
    expect(events.find((e) => e.event === 'response.custom_tool_call_input.done')?.data.input).toBe('"simulated input"');
    expect(events.find((e) => e.event === 'response.output_item.done')?.data.item).toMatchObject({ type: 'custom_tool_call', namespace: 'functions', input: '"simulated input"' });
    // A namespaced function tool (by its bare name); after its output, a reply.
    sim.setKnobs('ns', { toolName: 'get_weather' });
    const fn = (await (await post('/ns/v1/responses', { model: 'gpt-sim', tools: [ns], input: PROMPT })).json()) as any;
    expect(fn.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', namespace: 'functions' });
    expect(JSON.parse(fn.output[0].arguments)).toEqual({ city: 'example', days: 1, unit: 'celsius' });
    const after = (await (
      await post('/ns/v1/responses', {
        model: 'gpt-sim',
        tools: [ns],
        input: [{ role: 'user', content: PROMPT }, { type: 'custom_tool_call', call_id: 'c1', name: 'exec', namespace: 'functions', input: 'x' }, { type: 'custom_tool_call_output', call_id: 'c1', output: 'done' }],
      })
    ).json()) as any;
    expect(after.output[0].type).toBe('message');
  });

  it('reasoning: summary when reasoning.summary is set, encrypted content when included, reasoning tokens knob', async () => {
    sim.setKnobs('default', { reasoningTokens: 40, cachedTokens: 8 });
    const r = await client().responses.create({
      model: 'o-sim',
      input: PROMPT,
      reasoning: { effort: 'medium', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      store: false,
    });
    const rs = r.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(rs.type).toBe('reasoning');
    expect(rs.summary).toHaveLength(1);
    expect(rs.summary[0].text).toMatch(/^\*\*Considering the request\*\*\n\nThe user wrote: Hello there, what is the weather/);
    expect(rs.encrypted_content).toMatch(/^gAAAA/);
    expect(r.output[1].type).toBe('message');
    expect(r.usage).toMatchObject({ input_tokens_details: { cached_tokens: 8 }, output_tokens: 52, output_tokens_details: { reasoning_tokens: 40 } });
    expect(r.reasoning).toEqual({ effort: 'medium', summary: 'auto' });

    const noSummary = await client().responses.create({ model: 'o-sim', input: PROMPT, reasoning: { effort: 'low' } });
    expect(noSummary.output[0]).toEqual({ id: expect.stringMatching(/^rs_sim/), type: 'reasoning', summary: [] });

    const stream = await client().responses.create({ model: 'o-sim', input: PROMPT, reasoning: { effort: 'medium', summary: 'detailed' }, stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const ev of stream) events.push(ev);
    const types = events.map((e) => e.type);
    expect(types.slice(2, 5)).toEqual(['response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta']);
    expect(types).toContain('response.reasoning_summary_part.done');
    const summary = events.flatMap((e) => (e.type === 'response.reasoning_summary_text.delta' ? [e.delta] : [])).join('');
    expect(summary).toBe(rs.summary[0].text);
    expect(events.filter((e) => e.type === 'response.output_item.added').map((e) => (e as OpenAI.Responses.ResponseOutputItemAddedEvent).output_index)).toEqual([0, 1]);
  });

  it('max_output_tokens truncates: status incomplete (also streamed as response.incomplete)', async () => {
    const r = await client().responses.create({ model: 'gpt-sim', input: PROMPT, max_output_tokens: 5 });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.usage?.output_tokens).toBe(5);
    expect(r.output_text.split(' ')).toHaveLength(5);
    const stream = await client().responses.create({ model: 'gpt-sim', input: PROMPT, max_output_tokens: 5, stream: true });
    let last: OpenAI.Responses.ResponseStreamEvent | undefined;
    for await (const ev of stream) last = ev;
    expect(last?.type).toBe('response.incomplete');
  });

  it('text.format json_schema and json_object produce JSON', async () => {
    const r = await client().responses.create({
      model: 'gpt-sim',
      input: PROMPT,
      text: { format: { type: 'json_schema', name: 'w', strict: true, schema: { type: 'object', properties: { city: { type: 'string' }, ok: { type: 'boolean' } }, required: ['city', 'ok'], additionalProperties: false } } },
    });
    expect(JSON.parse(r.output_text)).toEqual({ city: 'example', ok: true });
    const o = await client().responses.create({ model: 'gpt-sim', input: PROMPT, text: { format: { type: 'json_object' } } });
    expect(JSON.parse(o.output_text).reply).toMatch(/^Simulated reply to:/);
  });

  it('content / completionTokens / model knobs, per-provider paths', async () => {
    sim.setKnobs('acme', { content: 'Fixed answer here.', model: 'acme-model' });
    const r = await client('acme').responses.create({ model: 'x', input: 'hi' });
    expect(r.output_text).toBe('Fixed answer here.');
    expect(r.model).toBe('acme-model');
    expect(r.usage?.output_tokens).toBe(3);
    sim.setKnobs('other', { completionTokens: 4 });
    expect((await client('other').responses.create({ model: 'x', input: 'hi' })).usage?.output_tokens).toBe(4);
    expect(sim.stats('acme').requests).toBe(1);
    expect(sim.requests.at(-1)).toMatchObject({ provider: 'other', path: '/v1/responses' });
  });
});

describe('Responses errors and faults', () => {
  it('errorStatus knob → APIError with the OpenAI envelope; 429 carries retry-after', async () => {
    sim.setKnobs('default', { errorStatus: 429, retryAfter: 7 });
    try {
      await client().responses.create({ model: 'gpt-sim', input: 'hi' });
      throw new Error('expected an error');
    } catch (e) {
      expect(e).toBeInstanceOf(APIError);
      const err = e as APIError;
      expect(err.status).toBe(429);
      expect(err.headers?.get('retry-after')).toBe('7');
      expect(err.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    }
    expect(sim.stats('default').failures).toBe(1);
  });

  it('validation: missing input, bad max_output_tokens, unknown model (models knob)', async () => {
    const a = await post('/v1/responses', { model: 'm' });
    expect(a.status).toBe(400);
    expect(await a.json()).toEqual({ error: { message: "Missing required parameter: 'input'.", type: 'invalid_request_error', param: 'input', code: 'missing_required_parameter' } });
    expect((await post('/v1/responses', { model: 'm', input: 'x', max_output_tokens: 0 })).status).toBe(400);
    expect((await post('/v1/responses', '{nope')).status).toBe(400);
    sim.setKnobs('default', { models: ['known'] });
    const nf = await post('/v1/responses', { model: 'unknown', input: 'x' });
    expect(nf.status).toBe(404);
    expect(((await nf.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
  });

  it('errorAfterChunks: an `error` event after N content events ends the stream', async () => {
    const res = await post('/v1/responses', { model: 'm', input: PROMPT, stream: true }, { 'x-sim-error-after-chunks': '3' });
    expect(res.status).toBe(200);
    const events = sseEvents((await readAll(res)).text);
    expect(events.filter((e) => e.event === 'response.output_text.delta')).toHaveLength(3);
    expect(events.at(-1)).toEqual({ event: 'error', data: { type: 'error', code: 'server_error', message: expect.any(String), param: null } });
    // Non-streaming: a 500.
    expect((await post('/v1/responses', { model: 'm', input: PROMPT }, { 'x-sim-error-after-chunks': '3' })).status).toBe(500);
  });

  it('disconnectAfterChunks cuts the stream without response.completed; malformed breaks a chunk', async () => {
    const res = await post('/v1/responses', { model: 'm', input: PROMPT, stream: true }, { 'x-sim-disconnect-after-chunks': '2' });
    const { text } = await readAll(res);
    expect(text).not.toContain('response.completed');
    expect(text.match(/response\.output_text\.delta/g)!.length).toBeLessThanOrEqual(4);
    const bad = await post('/v1/responses', { model: 'm', input: PROMPT }, { 'x-sim-malformed': 'json' });
    expect(bad.status).toBe(200);
    const badText = await bad.text();
    expect(() => JSON.parse(badText)).toThrow();
    expect(() => openaiResponsesAdapter.parseResponse(badText)).toThrowError(/non-JSON/);
  });

  it('chunk pacing applies to content events', async () => {
    const t0 = Date.now();
    const res = await post('/v1/responses', { model: 'm', input: PROMPT, stream: true }, { 'x-sim-chunk-gap-ms': '20', 'x-sim-completion-tokens': '6' });
    await readAll(res);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
  });
});

describe('gateway Responses upstream adapter against the simulator', () => {
  const call = async (stream: boolean, extra: Record<string, unknown> = {}) => {
    const c = adapterCtx({ protocol: 'openai-responses', baseUrl: `${sim.url}/v1` });
    const req = openaiResponsesAdapter.buildRequest(
      {
        model: 'o-sim',
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [{ role: 'user', content: [{ type: 'text', text: PROMPT }] }],
        tools: [{ name: 'get_weather', parameters: WEATHER_TOOL.parameters }],
        reasoning: { effort: 'medium', summary: 'auto' },
        stream,
        ...extra,
      },
      c,
    );
    return fetch(req.url, { method: 'POST', headers: req.headers, body: req.body });
  };

  it('non-stream and stream decode to the same IR parts (reasoning summary, encrypted content, tool call)', async () => {
    sim.setKnobs('default', { reasoningTokens: 16, cachedTokens: 10, cacheWriteTokens: 5 });
    const full = openaiResponsesAdapter.parseResponse(await (await call(false)).text());
    expect(full.usage).toMatchObject({ cache_read: 10, cache_write: 5, reasoning: 16 });
    expect(full.content.map((p) => p.type)).toEqual(['reasoning', 'redacted_reasoning', 'tool_call']);
    expect(full.finish_reason).toBe('tool_calls');
    expect(full.usage?.reasoning).toBe(16);
    const body = sim.stats('default').lastBody as Record<string, unknown>;
    expect(body).toMatchObject({ store: false, include: ['reasoning.encrypted_content'], instructions: 'Be brief.' });

    const res = await call(true);
    const dec = openaiResponsesAdapter.createStreamDecoder();
    const events: IrStreamEvent[] = [];
    const reader = res.body!.getReader();
    const td = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      events.push(...dec.push(td.decode(value, { stream: true })));
    }
    events.push(...dec.end());
    const parts = assemble(events);
    // Same except ids (per request) and the summary marker (streams carry none).
    expect(parts.map((p) => p.type)).toEqual(['reasoning', 'redacted_reasoning', 'tool_call']);
    expect((parts[0] as { text: string }).text).toBe((full.content[0] as { text: string }).text);
    expect((parts[2] as { arguments: string }).arguments).toBe((full.content[2] as { arguments: string }).arguments);
    expect(events.find((e) => e.type === 'finish')).toEqual({ type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'completed' });
  });

  it('a cut stream makes the decoder throw; an error status maps through parseError', async () => {
    sim.setKnobs('default', { disconnectAfterChunks: 2 });
    const res = await call(true);
    const dec = openaiResponsesAdapter.createStreamDecoder();
    const { text } = await readAll(res);
    dec.push(text);
    expect(() => dec.end()).toThrowError(/ended before completion/);
    sim.setKnobs('default', { disconnectAfterChunks: null, errorStatus: 429 });
    const r = await call(false);
    const err = openaiResponsesAdapter.parseError(r.status, await r.text(), Object.fromEntries(r.headers));
    expect([err.status, err.type, err.retryAfter]).toEqual([429, 'rate_limit_exceeded', 1]);
  });
});
