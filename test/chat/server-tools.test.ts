/**
 * Server tools on POST /chat/completions (docs/server-tools.md): gateway:web_search over a (simulated) SearXNG and
 * gateway:datetime, run by the gateway in a loop around the model; usage summed with server_tool_use_details; stop
 * conditions and the call budget; the client's own tools; streaming; errors.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { callBudget, datetimeResult, shouldStop } from '../../src/core/server-tools.js';
import { answerChunks, ServerToolService } from '../../src/services/server-tools.js';
import { simSearchResults } from '../../src/sim/search.js';
import { generation } from '../speech/util.js';
import { chat, isolatedEnv, parseSse, streamChat, upstreamBodies, WEATHER_TOOL, type ClockedEnv, type Json } from './util.js';

const MODEL = 'test/beta'; // one endpoint: sim-c

describe('server tools', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, {
    // Web fetch on, private addresses allowed: the simulator's pages are on 127.0.0.1.
    env: (simUrl) => ({ GATEWAY_WEB_SEARCH_URL: `${simUrl}/sim-search`, GATEWAY_STREAM_KEEPALIVE_MS: '100', GATEWAY_WEB_FETCH: 'true', GATEWAY_WEB_FETCH_ALLOW_PRIVATE: 'true' }),
  });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });
  const turns = () => upstreamBodies(env, 'sim-c');

  it('gateway:web_search through the OpenAI SDK: the model calls it, the gateway searches, the model answers from the results', async () => {
    const client = new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'What is new?' }], tools: [{ type: 'gateway:web_search', parameters: { max_results: 2 } } as never] })
      .withResponse();
    expect(data.choices[0].message.content).toMatch(/^Simulated reply using tool result:/);
    expect(data.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(data.choices[0].finish_reason).toBe('stop');
    // Two model turns: the first shown web_search as a function tool, the second given its results.
    const [first, second] = turns();
    expect(turns()).toHaveLength(2);
    expect(first.tools).toEqual([expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'web_search' }) })]);
    expect(second.messages.slice(-2)).toEqual([
      expect.objectContaining({ role: 'assistant', content: null, tool_calls: [expect.objectContaining({ type: 'function', function: { name: 'web_search', arguments: '{"query":"example"}' } })] }),
      { role: 'tool', tool_call_id: expect.any(String), content: JSON.stringify({ query: 'example', results: simSearchResults('example').slice(0, 2).map((r) => ({ title: r.title, url: r.url, snippet: r.content })) }) },
    ]);
    expect(env.sim.stats('sim-search').requests).toBe(1);
    // Usage: both turns, summed, priced; the answer's id is the last turn's generation.
    const usage = data.usage as unknown as Json;
    expect(usage.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1, web_search_requests: 1 });
    expect(response.headers.get('x-generation-id')).toBe(data.id);
    const last = await generation(env, data.id);
    expect(last).toMatchObject({ api_type: 'completions', status: 200 });
    expect(usage.prompt_tokens).toBeGreaterThan(last.tokens_prompt);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    expect(usage.cost).toBeGreaterThan(last.total_cost);
  });

  it('gateway_metadata lists every turn’s generation; their records add up to the answer’s usage', async () => {
    const r = await chat(env, { model: MODEL, tools: [{ type: 'gateway:web_search' }] }, { headers: { 'x-gateway-metadata': 'enabled' } });
    expect(r.status).toBe(200);
    const { steps, generations } = r.body.gateway_metadata.server_tools;
    expect(steps).toBe(2);
    expect(generations).toHaveLength(2);
    expect(generations[1]).toBe(r.body.id);
    const records = await Promise.all(generations.map((id: string) => generation(env, id)));
    expect(records.reduce((s: number, g: Json) => s + g.tokens_prompt, 0)).toBe(r.body.usage.prompt_tokens);
    expect(records.reduce((s: number, g: Json) => s + g.tokens_completion, 0)).toBe(r.body.usage.completion_tokens);
    expect(records.reduce((s: number, g: Json) => s + g.total_cost, 0)).toBeCloseTo(r.body.usage.cost, 12);
  });

  it('the legacy openrouter: prefix and OpenAI’s web_search_preview shorthand mean the same tool', async () => {
    for (const type of ['openrouter:web_search', 'web_search_preview', 'web_search']) {
      env.sim.resetStats();
      const r = await chat(env, { model: MODEL, tools: [{ type }] });
      expect(r.status, type).toBe(200);
      expect(r.body.usage.server_tool_use_details.web_search_requests, type).toBe(1);
    }
  });

  it('gateway:datetime: the model gets the time, or the tool’s error for a bad time zone', async () => {
    const r = await chat(env, { model: MODEL, tools: [{ type: 'gateway:datetime' }] });
    expect(r.status).toBe(200);
    const tool = turns()[1].messages.at(-1);
    // The simulator fills the timezone argument with "example".
    expect(JSON.parse(tool.content)).toEqual({ error: 'Unknown time zone "example"; use an IANA name such as Europe/Paris' });
    expect(r.body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1, web_search_requests: 0 });
    expect(datetimeResult(Date.UTC(2026, 10, 23, 12, 0, 0), 'Europe/Paris')).toEqual({
      iso: '2026-11-23T12:00:00.000Z',
      timezone: 'Europe/Paris',
      local: expect.stringMatching(/November 23, 2026.*1:00:00 PM/),
      unix: Date.UTC(2026, 10, 23, 12) / 1000,
    });
    expect(datetimeResult(0, undefined)).toMatchObject({ timezone: 'UTC', iso: '1970-01-01T00:00:00.000Z' });
  });

  it('gateway:web_fetch: the model reads a page as text (the simulator asks for the URL in the prompt)', async () => {
    const url = `${env.sim.url}/sim-web/pages/redirect`;
    const r = await chat(env, { model: MODEL, messages: [{ role: 'user', content: `Summarize ${url} please` }], tools: [{ type: 'gateway:web_fetch', parameters: { max_chars: 1000 } }] });
    expect(r.status).toBe(200);
    const call = turns()[1].messages.at(-2).tool_calls[0];
    expect(JSON.parse(call.function.arguments)).toEqual({ url });
    const result = JSON.parse(turns()[1].messages.at(-1).content);
    expect(result).toMatchObject({ url: `${env.sim.url}/sim-web/pages/html`, status: 200, content_type: 'text/html', title: 'Sim page', truncated: false });
    expect(result.content).toContain('Hello from the simulator');
    expect(r.body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1, web_search_requests: 0 });
    // A page the tool cannot read is its error, for the model.
    await chat(env, { model: MODEL, messages: [{ role: 'user', content: `Read ${env.sim.url}/sim-web/pages/binary` }], tools: [{ type: 'gateway:web_fetch' }] });
    expect(JSON.parse(turns().at(-1).messages.at(-1).content)).toEqual({ error: 'Web fetch failed: the page is image/png, not text' });
  });

  it('stop_server_tools_when: after the condition holds, one last turn runs without the server tools', async () => {
    env.sim.setKnobs('sim-c', { toolCall: true }); // the model would call a tool on every turn it is offered one
    const r = await chat(env, { model: MODEL, tools: [{ type: 'gateway:web_search' }], stop_server_tools_when: [{ type: 'step_count_is', step_count: 1 }] });
    expect(r.status).toBe(200);
    expect(turns()).toHaveLength(2);
    expect(turns()[1].tools).toBeUndefined();
    expect(turns()[1].tool_choice).toBeUndefined();
    expect(turns().every((b) => b.stop_server_tools_when === undefined)).toBe(true);
    expect(r.body.choices[0].message.content).toMatch(/^Simulated reply/);
    expect(r.body.usage.server_tool_use_details).toMatchObject({ tool_calls_executed: 1 });
  });

  it('without conditions, max_tool_calls bounds the calls (at most 30)', async () => {
    env.sim.setKnobs('sim-c', { toolCall: true });
    const r = await chat(env, { model: MODEL, tools: [{ type: 'gateway:web_search' }], max_tool_calls: 2 });
    expect(r.status).toBe(200);
    expect(turns()).toHaveLength(3);
    expect(r.body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 2, tool_calls_executed: 2, web_search_requests: 2 });
    const state = { steps: 30, executed: 0, tokens: 0, cost: 0, calledTools: [], finishReason: null };
    expect(shouldStop({ ...state, executed: 30 }, undefined, 100)).toBe(true);
    expect(shouldStop({ ...state, executed: 29 }, undefined, undefined)).toBe(false);
    expect(shouldStop({ ...state, cost: 0.5 }, [{ type: 'max_cost', max_cost_in_dollars: 0.5 }], undefined)).toBe(true);
    expect(shouldStop({ ...state, tokens: 99 }, [{ type: 'max_tokens_used', max_tokens: 100 }], undefined)).toBe(false);
    expect(shouldStop({ ...state, calledTools: ['web_search'] }, [{ type: 'has_tool_call', tool_name: 'web_search' }], undefined)).toBe(true);
    expect(shouldStop({ ...state, finishReason: 'tool_calls' }, [{ type: 'finish_reason_is', reason: 'stop' }], undefined)).toBe(false);
  });

  it('a call to one of the client’s own tools ends the loop: the client gets it, nothing is searched', async () => {
    const r = await chat(env, { model: MODEL, tools: [WEATHER_TOOL, { type: 'gateway:web_search' }] });
    expect(r.status).toBe(200);
    expect(r.body.choices[0].finish_reason).toBe('tool_calls');
    expect(r.body.choices[0].message.tool_calls.map((c: Json) => c.function.name)).toEqual(['get_weather']);
    expect(turns()).toHaveLength(1);
    expect(turns()[0].tools.map((t: Json) => t.function.name)).toEqual(['get_weather', 'web_search']);
    expect(env.sim.stats('sim-search').requests).toBe(0);
    expect(r.body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 0, tool_calls_executed: 0, web_search_requests: 0 });
  });

  it('tool_choice naming the server tool forces it on the first turn only', async () => {
    const r = await chat(env, { model: MODEL, tools: [{ type: 'gateway:web_search' }], tool_choice: { type: 'gateway:web_search' } });
    expect(r.status).toBe(200);
    expect(turns()[0].tool_choice).toEqual({ type: 'function', function: { name: 'web_search' } });
    expect(turns()[1].tool_choice).toBe('auto');
    expect(turns()).toHaveLength(2);
  });

  it('stream: keep-alive while the loop runs, then the answer as chunks with usage, and [DONE]', async () => {
    env.sim.setKnobs('sim-search', { latencyMs: 400 }); // a slow search: the stream is kept alive meanwhile
    const r = await streamChat(env, { model: MODEL, tools: [{ type: 'gateway:web_search' }] });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(r.keepalives).toBeGreaterThanOrEqual(2);
    expect(r.done).toBe(true);
    // The 200 went out with the first keep-alive, before the answer's generation existed: the chunks name it.
    expect(r.headers.get('x-generation-id')).toBeNull();
    const id = r.chunks[0].id;
    expect(id).toMatch(/^gen-/);
    expect(r.chunks.every((c) => c.id === id && c.object === 'chat.completion.chunk')).toBe(true);
    expect(r.chunks[0].choices[0].delta.content).toMatch(/^Simulated reply using tool result:/);
    expect(r.chunks[1].choices[0].finish_reason).toBe('stop');
    const last = r.chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage.server_tool_use_details.web_search_requests).toBe(1);
  });

  it('Messages API (Claude Code’s web search tool) through the Anthropic SDK: the loop runs, the answer is a Message', async () => {
    const anthropic = new Anthropic({ baseURL: `${env.t.url}/api`, authToken: env.key, apiKey: null, maxRetries: 0 });
    const tool = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 } as never;
    const msg = await anthropic.messages.create({ model: MODEL, max_tokens: 200, messages: [{ role: 'user', content: 'Any news?' }], tools: [tool] });
    expect(msg.type).toBe('message');
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.content).toEqual([expect.objectContaining({ type: 'text', text: expect.stringMatching(/^Simulated reply using tool result:/) })]);
    expect(msg.usage.server_tool_use).toEqual({ web_search_requests: 1 });
    expect((msg.usage as unknown as Json).server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1, web_search_requests: 1 });
    expect(msg.id).toMatch(/^gen-/);
    expect(turns()).toHaveLength(2);
    expect(turns()[0].tools.map((t: Json) => t.function.name)).toEqual(['web_search']);
    // Streamed: the same answer as Anthropic's event stream.
    const stream = anthropic.messages.stream({ model: MODEL, max_tokens: 200, messages: [{ role: 'user', content: 'Any news?' }], tools: [tool] });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^Simulated reply using tool result:/) });
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.server_tool_use).toEqual({ web_search_requests: 1 });
  });

  it('max_uses of Anthropic’s web search tool bounds the searches', async () => {
    env.sim.setKnobs('sim-c', { toolCall: true });
    const r = await env.t.call('POST', '/messages', { key: env.key, body: { model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }] } });
    expect(r.status).toBe(200);
    expect(r.body.usage.server_tool_use).toEqual({ web_search_requests: 2 });
    expect(turns()).toHaveLength(3);
  });

  it('Responses API through the OpenAI SDK: web_search_preview runs the loop; streamed too', async () => {
    const client = new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
    const res = await client.responses.create({ model: MODEL, input: 'Any news?', tools: [{ type: 'web_search_preview' }] });
    expect(res.output_text).toMatch(/^Simulated reply using tool result:/);
    expect((res.usage as unknown as Json).server_tool_use_details).toMatchObject({ web_search_requests: 1 });
    expect(turns()).toHaveLength(2);
    let text = '';
    const stream = await client.responses.create({ model: MODEL, input: 'Any news?', tools: [{ type: 'gateway:datetime' } as never], stream: true });
    let usage: Json | undefined;
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') usage = ev.response.usage as unknown as Json;
    }
    expect(text).toMatch(/^Simulated reply using tool result:/);
    expect(usage?.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1, web_search_requests: 0 });
  });

  it('max_tool_calls of a Responses request without server tools still reaches an OpenAI Responses upstream (its own parameter)', async () => {
    const r = await env.t.call('POST', '/responses', { key: env.key, body: { model: 'test/responses', input: 'hi', max_tool_calls: 2 } });
    expect(r.status).toBe(200);
    expect((upstreamBodies(env, 'sim-responses').at(-1) as Json).max_tool_calls).toBe(2);
  });

  it('the budget holds inside a turn: calls beyond it are answered as refused, not run; with conditions, 30 still bounds', async () => {
    // A model that asks for three searches at once (the simulator makes one call per turn, so a stand-in answers).
    const bodies: Json[] = [];
    const answer = (toolCalls: Json[] | null) => ({
      id: `gen-${bodies.length}`,
      body: { id: `gen-${bodies.length}`, choices: [{ index: 0, message: { role: 'assistant', content: toolCalls ? null : 'done', ...(toolCalls ? { tool_calls: toolCalls } : {}) }, finish_reason: toolCalls ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, cost: 0.001 } },
    });
    const call3 = [1, 2, 3].map((n) => ({ id: `c${n}`, type: 'function', function: { name: 'web_search', arguments: `{"query":"q${n}"}` } }));
    const chatStub = {
      prepare: async (_api: string, body: Json) => (bodies.push(body), { release: () => undefined }),
      complete: async () => answer(bodies.length === 1 ? call3 : null),
    };
    let searches = 0;
    const svc = new ServerToolService({ chat: chatStub as never, search: { search: async () => (searches++, []) } as never, fetcher: null, keepaliveMs: 1000 });
    const tools = [{ name: 'web_search' as const, parameters: {} }];
    const out = await svc.run({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'gateway:web_search' }], max_tool_calls: 2 }, tools, { cancel: { aborted: false, listen: () => undefined, unlisten: () => undefined } } as never);
    expect(searches).toBe(2);
    expect(out.details).toEqual({ tool_calls_requested: 3, tool_calls_executed: 2, web_search_requests: 2 });
    const results = (bodies[1].messages as Json[]).filter((m) => m.role === 'tool');
    expect(results.map((m) => m.tool_call_id)).toEqual(['c1', 'c2', 'c3']);
    expect(JSON.parse(results[2].content)).toEqual({ error: 'The server tool call budget of this request is spent' });
    // The budget is spent: the last turn runs without the server tools.
    expect(bodies[1].tools).toBeUndefined();
    expect(out.body.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 2, cost: 0.002 });
    const state = { steps: 1, executed: 30, tokens: 0, cost: null, calledTools: [], finishReason: 'tool_calls' };
    expect(shouldStop(state, [{ type: 'finish_reason_is', reason: 'stop' }], undefined)).toBe(true);
    expect(shouldStop({ ...state, executed: 29 }, [{ type: 'step_count_is', step_count: 100_000 }], undefined)).toBe(false);
    expect(callBudget([{ type: 'step_count_is', step_count: 5 }], 3)).toBe(30);
    expect(callBudget(undefined, 3)).toBe(3);
    expect(callBudget(undefined, 99)).toBe(30);
  });

  it('a search engine that fails answers the model with the error; the request still succeeds', async () => {
    env.sim.setKnobs('sim-search', { errorStatus: 500 });
    const r = await chat(env, { model: MODEL, tools: [{ type: 'gateway:web_search' }] });
    expect(r.status).toBe(200);
    expect(JSON.parse(turns()[1].messages.at(-1).content)).toEqual({ error: 'Web search failed: the search engine answered 500' });
  });

  it('a model turn that fails fails the request like a chat completion (502), streamed or not', async () => {
    env.sim.setKnobs('sim-c', { errorStatus: 500 });
    const r = await chat(env, { model: MODEL, tools: [{ type: 'gateway:web_search' }] });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe(502);
    env.advance(31_000); // past the failed endpoint's cool-down (else 503: every endpoint failed recently)
    const s = await streamChat(env, { model: MODEL, tools: [{ type: 'gateway:web_search' }] });
    expect(s.status).toBe(502);
  });

  it('400 for a server tool this gateway does not run, and for a client function that takes a server tool’s name', async () => {
    const r = await chat(env, { model: MODEL, tools: [{ type: 'gateway:fusion' }] });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 400, metadata: { field: 'tools[0].type' }, message: expect.stringContaining('gateway:fusion') });
    const over = await chat(env, { model: MODEL, tools: [{ type: 'gateway:datetime' }], max_tool_calls: 31 });
    expect(over.status).toBe(400);
    expect(over.body.error.metadata.field).toBe('max_tool_calls');
    const clash = await chat(env, { model: MODEL, tools: [{ type: 'function', function: { name: 'web_search', parameters: { type: 'object' } } }, { type: 'gateway:web_search' }] });
    expect(clash.status).toBe(400);
    expect(clash.body.error.metadata.field).toBe('tools');
    expect(turns()).toHaveLength(0);
  });
});

describe('server tools: a loop done before the first keep-alive', () => {
  // The keep-alive period is set far beyond any loop here, however loaded the machine: none falls due while the loop
  // runs, so the 200 waits for the answer (with 100 ms, as above, a loaded machine may send one first).
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { env: () => ({ GATEWAY_STREAM_KEEPALIVE_MS: '60000' }) });

  it('stream: no keep-alive was needed, so the head names the generation; the official SDK reads it like any stream', async () => {
    const env = isolated();
    const r = await streamChat(env, { model: MODEL, tools: [{ type: 'gateway:datetime' }] });
    expect(r.status).toBe(200);
    expect(r.keepalives).toBe(0);
    expect(r.done).toBe(true);
    expect(r.chunks[0].choices[0].delta.content).toMatch(/^Simulated reply using tool result:/);
    expect(r.headers.get('x-generation-id')).toBe(r.chunks[0].id);
    const client = new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
    let text = '';
    const { data: stream, response } = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true, tools: [{ type: 'gateway:datetime' } as never] }).withResponse();
    let id2 = '';
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      id2 = c.id;
    }
    expect(text).toMatch(/^Simulated reply using tool result:/);
    expect(response.headers.get('x-generation-id')).toBe(id2);
  });
});

describe('server tools without a search engine', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach });

  it('gateway:web_search and gateway:web_fetch are 400s naming their settings; gateway:datetime still runs', async () => {
    const env = isolated();
    const r = await chat(env, { model: MODEL, tools: [{ type: 'gateway:web_search' }] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/GATEWAY_WEB_SEARCH_URL/);
    const f = await chat(env, { model: MODEL, tools: [{ type: 'gateway:datetime' }, { type: 'gateway:web_fetch' }] });
    expect(f.status).toBe(400);
    expect(f.body.error).toMatchObject({ metadata: { field: 'tools[1].type' }, message: expect.stringMatching(/GATEWAY_WEB_FETCH=true/) });
    expect((await chat(env, { model: MODEL, tools: [{ type: 'gateway:datetime' }] })).status).toBe(200);
  });

  it('without a search engine, a provider’s own web search tool on its own API is left to the provider (passed straight through)', async () => {
    const env = isolated();
    const tool = { type: 'web_search_20250305', name: 'web_search', max_uses: 2 };
    const m = await env.t.call('POST', '/messages', { key: env.key, body: { model: 'test/claude', max_tokens: 50, messages: [{ role: 'user', content: 'news?' }], tools: [tool] } });
    expect(m.status).toBe(200);
    expect((upstreamBodies(env, 'sim-anthropic').at(-1) as Json).tools).toEqual([tool]);
    const r = await env.t.call('POST', '/responses', { key: env.key, body: { model: 'test/responses', input: 'news?', tools: [{ type: 'web_search_preview' }] } });
    expect(r.status).toBe(200);
    expect((upstreamBodies(env, 'sim-responses').at(-1) as Json).tools).toEqual([{ type: 'web_search_preview' }]);
    // The gateway's own prefix still asks for the gateway's tool: a 400 naming the setting.
    const own = await env.t.call('POST', '/messages', { key: env.key, body: { model: 'test/claude', max_tokens: 50, messages: [{ role: 'user', content: 'news?' }], tools: [{ type: 'gateway:web_search' }] } });
    expect(own.status).toBe(400);
  });
});

describe('answer chunks', () => {
  it('a chat completion as a stream: content (and the client’s tool calls, indexed), finish, usage with metadata, [DONE]', () => {
    const answer = {
      id: 'gen-1',
      created: 5,
      model: 'm/x',
      provider: 'P',
      system_fingerprint: null,
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      gateway_metadata: { attempt: 1 },
    };
    const sse = parseSse(answerChunks(answer));
    expect(sse.done).toBe(true);
    expect(sse.chunks).toEqual([
      { id: 'gen-1', object: 'chat.completion.chunk', created: 5, model: 'm/x', provider: 'P', system_fingerprint: null, choices: [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: null }] },
      { id: 'gen-1', object: 'chat.completion.chunk', created: 5, model: 'm/x', provider: 'P', system_fingerprint: null, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { id: 'gen-1', object: 'chat.completion.chunk', created: 5, model: 'm/x', provider: 'P', system_fingerprint: null, choices: [], usage: answer.usage, gateway_metadata: { attempt: 1 } },
    ]);
  });
});
