/**
 * Stream robustness: raw upstream servers (node:http, one per protocol) replay recorded stream fixtures from the
 * providers' docs (test/fidelity/fixtures, sources in SOURCES.md and on each file's first line) with controlled TCP
 * writes, and every inbound API must still give its client a well-formed stream:
 * - every event split across writes at random byte boundaries (seeded, so failures replay);
 * - several events in one write;
 * - unknown event types inserted (and SSE comments);
 * - a tool-call argument streamed in 1-character deltas, one write each (Gemini sends whole calls: its call event is
 *   written one byte at a time);
 * - the stream stopping in the middle of an event, the connection dying or the body ending cleanly: after content → the
 *   client's stream ends with the API's error event; before any content → the next model is tried (fallback), or,
 *   without one, a JSON error in the API's envelope.
 * Endpoints that fail are tried last for a while (health), so each cut-stream call uses a model of its own.
 * Each client stream is checked with the official SDK (its accumulators included; `@google/genai` for the Gemini API)
 * and by parsing the raw SSE bytes.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import Anthropic, { APIError as AnthropicAPIError } from '@anthropic-ai/sdk';
import { ApiError as GoogleApiError, GoogleGenAI } from '@google/genai';
import { callGemini } from './gemini-client.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import {
  APIS,
  apiFinish,
  callChat,
  callMessages,
  callResponses,
  expectedCost,
  PRICE,
  upstreamObserved,
  WIRES as UPSTREAMS,
  type Api,
  type ClientResult,
  type Json,
  type Observed,
  type TextWire as Upstream,
} from './harness.js';
import { WEATHER } from './requests.js';

// ------------------------------------------------------------------------------------------------ fixtures

type Kind = 'text' | 'tool';
const FILE: Record<Upstream, string> = { openai: 'openai', anthropic: 'anthropic', google: 'google', 'openai-responses': 'responses' };
const fixture = (p: Upstream, k: Kind): string => readFileSync(new URL(`./fixtures/${FILE[p]}-${k}.sse`, import.meta.url), 'utf8');

/** The events of an SSE body, each with its terminating blank line (bytes kept as they are). */
function splitEvents(text: string): string[] {
  const out: string[] = [];
  const re = /\r\n\r\n|\n\n/g;
  let pos = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    out.push(text.slice(pos, m.index + m[0].length));
    pos = m.index + m[0].length;
  }
  if (pos < text.length) out.push(text.slice(pos));
  return out;
}

const eolOf = (text: string) => (text.includes('\r\n') ? '\r\n' : '\n');
const frame = (nl: string, data: Json | string, event?: string) => `${event ? `event: ${event}${nl}` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}${nl}${nl}`;
const dataOf = (ev: string): Json | null => {
  const line = ev.split(/\r?\n/).find((l) => l.startsWith('data:'));
  if (!line) return null;
  try {
    return JSON.parse(line.slice(5).trim()) as Json;
  } catch {
    return null;
  }
};

/** Whether an upstream event carries content (text, a tool call, reasoning), per protocol. */
function isContent(p: Upstream, ev: string): boolean {
  const d = dataOf(ev);
  if (!d) return false;
  switch (p) {
    case 'openai': {
      const delta = d.choices?.[0]?.delta ?? {};
      return Boolean(delta.content) || Array.isArray(delta.tool_calls);
    }
    case 'anthropic':
      return d.type === 'content_block_delta' || (d.type === 'content_block_start' && d.content_block?.type === 'tool_use');
    case 'google':
      return (d.candidates?.[0]?.content?.parts ?? []).some((x: Json) => x.text || x.functionCall);
    case 'openai-responses':
      return /\.delta$/.test(d.type) || (d.type === 'response.output_item.added' && d.item?.type === 'function_call');
  }
}

/** Deterministic PRNG (mulberry32), so that a failing split replays. */
function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

/** Unknown events (and comments) a client of each protocol must skip, in the fixture's line-end style. */
function unknownEvents(p: Upstream, nl: string): string[] {
  switch (p) {
    case 'openai':
      return [`: OPENROUTER PROCESSING${nl}${nl}`, frame(nl, { object: 'chat.completion.future_event', detail: { x: 1 } }, 'future.event')];
    case 'anthropic':
      return [frame(nl, { type: 'future_event', detail: { x: 1 } }, 'future_event'), frame(nl, { type: 'content_block_delta', index: 0, delta: { type: 'future_delta', value: 'x' } }, 'content_block_delta')];
    case 'google':
      return [`: keep-alive${nl}${nl}`, frame(nl, { futureField: { x: 1 } })];
    case 'openai-responses':
      return [frame(nl, { type: 'response.future_event', sequence_number: 999, detail: {} }, 'response.future_event'), frame(nl, { type: 'future.top_level', detail: {} }, 'future.top_level')];
  }
}

/** The tool fixture with the call's arguments re-cut into 1-character deltas; `bytewise` marks events to write byte by byte. */
function oneCharArguments(p: Upstream): { events: string[]; bytewise: Set<number> } {
  const text = fixture(p, 'tool');
  const nl = eolOf(text);
  const out: string[] = [];
  const bytewise = new Set<number>();
  for (const ev of splitEvents(text)) {
    const d = dataOf(ev);
    const name = ev.match(/^event: (.*)$/m)?.[1]?.trim();
    if (p === 'openai' && d?.choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments && !d.choices[0].delta.tool_calls[0].id) {
      const args = d.choices[0].delta.tool_calls[0].function.arguments as string;
      for (const ch of args) {
        const c = structuredClone(d);
        c.choices[0].delta.tool_calls[0].function.arguments = ch;
        out.push(frame(nl, c));
      }
    } else if (p === 'anthropic' && d?.delta?.type === 'input_json_delta' && d.delta.partial_json) {
      for (const ch of d.delta.partial_json as string) out.push(frame(nl, { ...d, delta: { type: 'input_json_delta', partial_json: ch } }, name));
    } else if (p === 'openai-responses' && d?.type === 'response.function_call_arguments.delta') {
      for (const ch of d.delta as string) out.push(frame(nl, { ...d, delta: ch }, name));
    } else {
      if (p === 'google' && d?.candidates?.[0]?.content?.parts?.some((x: Json) => x.functionCall)) bytewise.add(out.length);
      out.push(ev);
    }
  }
  return { events: out, bytewise };
}

type Scenario = 'split' | 'coalesced' | 'unknown' | 'tool-bytes' | 'cut-after-content' | 'end-mid-event' | 'cut-before-content' | 'cut-before-content-fallback';

interface Plan {
  writes: Buffer[];
  cut: boolean;
  /** The whole upstream stream the writes come from (for the expected answer). */
  source: string;
  /** Complete events written before a cut. */
  delivered: string;
}

function planFor(p: Upstream, s: Scenario, seed: number): Plan {
  const r = rng(seed);
  const kind: Kind = s === 'tool-bytes' ? 'tool' : seed % 2 === 0 ? 'text' : 'tool';
  const text = fixture(p, kind);
  const nl = eolOf(text);
  const events = splitEvents(text);
  const buf = (x: string) => Buffer.from(x, 'utf8');
  switch (s) {
    case 'split': {
      const writes: Buffer[] = [];
      for (const ev of events) {
        const b = buf(ev);
        // Random cuts, plus the nasty ones: inside the field name, between the two line ends of the blank line (between
        // CR and LF for CRLF streams), and inside a multi-byte UTF-8 character.
        const wide = b.findIndex((x) => x >= 0x80);
        const fixed = [3, b.length - 1, ...(wide >= 0 ? [wide + 1] : [])];
        const cuts = [...new Set([...fixed, ...Array.from({ length: 1 + r(3) }, () => 1 + r(Math.max(1, b.length - 1)))])]
          .filter((c) => c > 0 && c < b.length)
          .sort((x, y) => x - y);
        let pos = 0;
        for (const c of cuts) {
          writes.push(b.subarray(pos, c));
          pos = c;
        }
        writes.push(b.subarray(pos));
      }
      return { writes: writes.filter((w) => w.length > 0), cut: false, source: text, delivered: text };
    }
    case 'coalesced': {
      const writes: Buffer[] = [];
      for (let i = 0; i < events.length; ) {
        const k = 2 + r(4);
        writes.push(buf(events.slice(i, i + k).join('')));
        i += k;
      }
      return { writes, cut: false, source: text, delivered: text };
    }
    case 'unknown': {
      const [a, b] = unknownEvents(p, nl);
      const mid = Math.floor(events.length / 2);
      // After the first event, in the middle (right after a block opens, for the unknown delta), before the last one.
      const at = p === 'anthropic' && kind === 'text' ? 3 : mid;
      const withUnknown = [...events.slice(0, 1), a, ...events.slice(1, at), b, ...events.slice(at, -1), a, ...events.slice(-1)];
      return { writes: withUnknown.map(buf), cut: false, source: text, delivered: text };
    }
    case 'tool-bytes': {
      const { events: evs, bytewise } = oneCharArguments(p);
      const writes: Buffer[] = [];
      evs.forEach((ev, i) => {
        const b = buf(ev);
        if (bytewise.has(i)) for (let j = 0; j < b.length; j++) writes.push(b.subarray(j, j + 1));
        else writes.push(b);
      });
      return { writes, cut: false, source: evs.join(''), delivered: evs.join('') };
    }
    case 'cut-after-content':
    case 'end-mid-event': {
      // The connection dies (cut), or the body ends cleanly (end), in the middle of an event after content.
      const first = events.findIndex((e) => isContent(p, e));
      const whole = events.slice(0, first + 2);
      const partial = buf(events[first + 2]);
      return { writes: [...whole.map(buf), partial.subarray(0, Math.floor(partial.length / 2))], cut: s === 'cut-after-content', source: text, delivered: whole.join('') };
    }
    case 'cut-before-content':
    case 'cut-before-content-fallback': {
      const first = events.findIndex((e) => isContent(p, e));
      const whole = events.slice(0, first);
      const partial = buf(events[first]);
      return { writes: [...whole.map(buf), partial.subarray(0, Math.floor(partial.length / 2))], cut: true, source: text, delivered: whole.join('') };
    }
  }
}

// ------------------------------------------------------------------------------------------------ raw upstreams

const PATHS: Record<Upstream, RegExp> = {
  openai: /^\/v1\/chat\/completions$/,
  anthropic: /^\/v1\/messages$/,
  google: /^\/v1beta\/models\/[^/:]+:streamGenerateContent\?alt=sse$/,
  'openai-responses': /^\/v1\/responses$/,
};

/** A raw upstream of one protocol: answers every stream request with the current plan's writes, one TCP write each. */
class RawUpstream {
  plan: Plan | null = null;
  requests: Array<{ path: string; body: Json }> = [];
  server!: Server;
  url = '';

  constructor(readonly protocol: Upstream) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
    this.requests.push({ path: req.url ?? '', body });
    if (!PATHS[this.protocol].test(req.url ?? '') || body.stream === false || !this.plan) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { message: `unexpected request ${req.method} ${req.url}` } }));
    }
    const plan = this.plan;
    res.socket?.setNoDelay(true);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
    for (const w of plan.writes) {
      // One write per piece, flushed before the next one.
      await new Promise<void>((resolve) => res.write(w, () => resolve()));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (plan.cut) res.socket?.destroy();
    else res.end();
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// ------------------------------------------------------------------------------------------------ environment

/** Models per protocol: one shared model, and single-use ones for the cut streams (a failed endpoint is tried last). */
const POOL = 56;
const raws = {} as Record<Upstream, RawUpstream>;
let env: ChatEnv;
let openai: OpenAI;
let anthropic: Anthropic;
let genai: GoogleGenAI;
const used: Record<string, number> = {};
const sharedModel = (p: Upstream) => `raw/${FILE[p]}`;
function freshModel(p: Upstream): string {
  const i = (used[p] = (used[p] ?? -1) + 1);
  if (i >= POOL) throw new Error('model pool exhausted');
  return `raw/${FILE[p]}/u${i}`;
}
/** A simulated model to fall back to. */
const FALLBACK = 'test/alpha';

beforeAll(async () => {
  for (const p of UPSTREAMS) {
    raws[p] = new RawUpstream(p);
    await raws[p].start();
  }
  const version: Record<Upstream, string> = { openai: 'v1', anthropic: 'v1', google: 'v1beta', 'openai-responses': 'v1' };
  const pricing = Object.fromEntries(Object.entries(PRICE).map(([k, v]) => [k, v.toFixed(10).replace(/0+$/, '')]));
  const params = ['temperature', 'max_tokens', 'max_completion_tokens', 'tools', 'tool_choice', 'response_format', 'reasoning', 'include_reasoning'];
  const providers = UPSTREAMS.map((p) => ({ slug: `raw-${FILE[p]}`, name: `Raw ${FILE[p]}`, protocol: p, base_url: `${raws[p].url}/${version[p]}`, no_auth: true, data_policy: { training: false, retains_prompts: false, zdr: true } }));
  const ids = (p: Upstream) => [sharedModel(p), ...Array.from({ length: POOL }, (_, i) => `raw/${FILE[p]}/u${i}`)];
  const models = UPSTREAMS.flatMap((p) => ids(p).map((id) => ({ id, name: id, context_length: 100000 })));
  const endpoints = UPSTREAMS.flatMap((p) => ids(p).map((id) => ({ model: id, provider: `raw-${FILE[p]}`, upstream_model: `${FILE[p]}-model`, pricing: { ...pricing }, supported_parameters: [...params] })));
  env = await startChatEnv('sqlite', { catalog: { providers, models, endpoints } });
  openai = new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${env.t.url}/api`, authToken: env.key, apiKey: null, maxRetries: 0 });
  genai = new GoogleGenAI({ apiKey: env.key, httpOptions: { baseUrl: `${env.t.url}/api` } });
});
afterAll(async () => {
  await env?.close();
  for (const p of UPSTREAMS) await raws[p]?.close();
});
beforeEach(() => {
  for (const p of UPSTREAMS) raws[p].requests = [];
  env.sim.resetKnobs();
});

// ------------------------------------------------------------------------------------------------ clients

function requestBody(api: Api, model: string, tools: boolean, extra: Json = {}): Json {
  const prompt = 'What is the weather like in Paris today?';
  switch (api) {
    case 'chat':
      return { model, messages: [{ role: 'user', content: prompt }], ...(tools ? { tools: [{ type: 'function', function: WEATHER }] } : {}), ...extra };
    case 'responses':
      return { model, input: prompt, ...(tools ? { tools: [{ type: 'function', ...WEATHER, strict: false }] } : {}), ...extra };
    case 'messages':
      return { model, max_tokens: 1024, messages: [{ role: 'user', content: prompt }], ...(tools ? { tools: [{ name: WEATHER.name, description: WEATHER.description, input_schema: WEATHER.parameters }] } : {}), ...extra };
    case 'gemini':
      // The REST body (the SDK call gets it as its config, see sdkCall); `extra` carries gateway fields (models).
      return {
        model,
        contents: [{ role: 'user', parts: [{ text: prompt }] }],
        ...(tools ? { tools: [{ functionDeclarations: [{ name: WEATHER.name, description: WEATHER.description, parametersJsonSchema: WEATHER.parameters }] }] } : {}),
        ...extra,
      };
  }
}

/** A Gemini REST body as `@google/genai` parameters: tools in config, gateway fields through httpOptions.extraBody. */
function geminiSdkParams(body: Json): Json {
  const { model, contents, tools, ...extra } = body;
  // Ids of more than two segments go with their slashes URL-encoded (routes/gemini.ts).
  const config: Json = { ...(tools ? { tools } : {}), ...(Object.keys(extra).length > 0 ? { httpOptions: { extraBody: extra } } : {}) };
  return { model: encodeURIComponent(model as string), contents, config };
}

function sdkCall(api: Api, body: Json): Promise<ClientResult> {
  if (api === 'chat') return callChat(openai, body, true);
  if (api === 'responses') return callResponses(openai, body, true);
  if (api === 'gemini') return callGemini(genai, geminiSdkParams(body), true);
  return callMessages(anthropic, body, true);
}

const PATH: Record<Exclude<Api, 'gemini'>, string> = { chat: '/chat/completions', responses: '/responses', messages: '/messages' };

async function rawCall(api: Api, body: Json): Promise<{ status: number; contentType: string; text: string }> {
  let url: string;
  let sent: Json;
  if (api === 'gemini') {
    const { model, ...rest } = body;
    url = `${env.t.url}/api/v1beta/models/${encodeURIComponent(model as string)}:streamGenerateContent?alt=sse`;
    sent = rest;
  } else {
    url = env.t.api + PATH[api];
    sent = { ...body, stream: true };
  }
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(sent),
  });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

interface RawStream {
  frames: Array<{ event: string | null; data: string; json: Json | null }>;
  text: string;
  reasoning: string;
  /** Tool-call arguments, per call, as the stream gave them. */
  args: string[];
  /** The API's error event / chunk, when the stream ended with one. */
  error: Json | null;
}

/**
 * A strict reading of the gateway's SSE bytes: LF-framed events, only `event:` / `data:` / comment lines, JSON data
 * (or the API's `[DONE]`), and the API's event grammar (names equal to `type`, ordering, terminators).
 */
function parseRaw(api: Api, body: string): RawStream {
  const fail = (m: string): never => {
    throw new Error(`${api} raw stream: ${m}\n${body.slice(0, 2000)}`);
  };
  if (!body.endsWith('\n\n')) fail('does not end with a blank line');
  const frames: RawStream['frames'] = [];
  for (const block of body.slice(0, -2).split('\n\n')) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
      else fail(`unexpected line ${JSON.stringify(line)}`);
    }
    if (data.length === 0) {
      if (event !== null) fail('event without data');
      continue; // comment-only block (keep-alive)
    }
    const d = data.join('\n');
    let json: Json | null = null;
    if (d !== '[DONE]') {
      try {
        json = JSON.parse(d) as Json;
      } catch {
        fail(`data is not JSON: ${d.slice(0, 200)}`);
      }
    }
    frames.push({ event, data: d, json });
  }
  const out: RawStream = { frames, text: '', reasoning: '', args: [], error: null };
  const jsonFrames = frames.filter((f) => f.json);
  if (api === 'chat') {
    if (frames[frames.length - 1]?.data !== '[DONE]' || frames.filter((f) => f.data === '[DONE]').length !== 1) fail('[DONE] must come once, last');
    if (frames.some((f) => f.event !== null)) fail('chat chunks carry no event name');
    const id = jsonFrames[0]?.json?.id;
    for (const [i, f] of jsonFrames.entries()) {
      const c = f.json!;
      if (c.object !== 'chat.completion.chunk' || c.id !== id) fail('chunk without the stream id / object');
      if (c.error) {
        if (i !== jsonFrames.length - 1) fail('error chunk is not the last one');
        if (c.choices?.[0]?.finish_reason !== 'error') fail('error chunk without finish_reason "error"');
        out.error = c.error;
      }
      const d = c.choices?.[0]?.delta ?? {};
      if (typeof d.content === 'string') out.text += d.content;
      if (typeof d.reasoning === 'string') out.reasoning += d.reasoning;
      for (const tc of d.tool_calls ?? []) out.args[tc.index] = (out.args[tc.index] ?? '') + (tc.function?.arguments ?? '');
    }
  } else if (api === 'responses') {
    if (frames[frames.length - 1]?.data !== '[DONE]') fail('no [DONE] last');
    jsonFrames.forEach((f, i) => {
      if (f.event !== f.json!.type) fail(`event name ${f.event} ≠ type ${f.json!.type}`);
      if (f.json!.sequence_number !== i) fail(`sequence_number ${f.json!.sequence_number} at ${i}`);
    });
    if (jsonFrames[0]?.event !== 'response.created') fail('does not start with response.created');
    const last = jsonFrames[jsonFrames.length - 1]?.event;
    if (!['response.completed', 'response.incomplete', 'response.failed'].includes(last ?? '')) fail(`ends with ${last}`);
    for (const f of jsonFrames) {
      const e = f.json!;
      if (e.type === 'response.output_text.delta') out.text += e.delta;
      if (e.type === 'response.reasoning_summary_text.delta') out.reasoning += e.delta;
      if (e.type === 'response.function_call_arguments.delta') out.args[e.output_index] = (out.args[e.output_index] ?? '') + e.delta;
      if (e.type === 'error') out.error = e;
    }
    if (out.error && last !== 'response.failed') fail('error event not followed by response.failed');
  } else if (api === 'gemini') {
    // Data-only events, each a GenerateContentResponse (or Google's error object, last); one finishReason, on the last chunk.
    if (frames.some((f) => f.event !== null || !f.json)) fail('an event name or non-JSON data');
    jsonFrames.forEach((f, i) => {
      const c = f.json!;
      if (c.error) {
        if (i !== jsonFrames.length - 1) fail('error chunk is not the last one');
        if (typeof c.error.code !== 'number' || typeof c.error.status !== 'string') fail('error chunk without code and status');
        out.error = c.error;
        return;
      }
      const cand = c.candidates?.[0];
      if (!cand || c.responseId !== jsonFrames[0].json!.responseId) fail('chunk without a candidate or the stream id');
      if (cand.finishReason && i !== jsonFrames.length - 1) fail('finishReason before the last chunk');
      for (const part of cand.content?.parts ?? []) {
        if (part.functionCall) out.args.push(JSON.stringify(part.functionCall.args ?? {}));
        else if (part.thought === true) out.reasoning += part.text ?? '';
        else if (typeof part.text === 'string') out.text += part.text;
      }
    });
    if (!out.error && !jsonFrames[jsonFrames.length - 1]?.json?.candidates?.[0]?.finishReason) fail('no finishReason on the last chunk');
  } else {
    jsonFrames.forEach((f) => f.event !== f.json!.type && fail(`event name ${f.event} ≠ type ${f.json!.type}`));
    if (jsonFrames[0]?.event !== 'message_start') fail('does not start with message_start');
    const last = jsonFrames[jsonFrames.length - 1]?.event;
    if (last !== 'message_stop' && last !== 'error') fail(`ends with ${last}`);
    if (frames.some((f) => !f.json)) fail('non-JSON data');
    for (const f of jsonFrames) {
      const e = f.json!;
      if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') out.text += e.delta.text;
      if (e.type === 'content_block_delta' && e.delta.type === 'thinking_delta') out.reasoning += e.delta.thinking;
      if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') out.args[e.index] = (out.args[e.index] ?? '') + e.delta.partial_json;
      if (e.type === 'error') out.error = e.error;
    }
    out.args = out.args.filter((a) => a !== undefined);
  }
  out.args = out.args.filter((a) => a !== undefined);
  return out;
}

// ------------------------------------------------------------------------------------------------ expectations

const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };

/** The client saw what the replayed upstream stream holds. */
function expectSame(api: Api, p: Upstream, c: ClientResult, want: Observed): void {
  const o = c.observed;
  expect(o.text).toBe(want.text);
  expect(o.reasoning).toBe(want.reasoning);
  // Thinking no upstream signed carries the gateway's own signature on the Messages API (core/reasoning-signature.ts).
  expect(o.signatures.filter((x) => !x.startsWith('gwsig1.'))).toEqual(want.signatures);
  expect(o.calls.map(({ name, args }) => ({ name, args }))).toEqual(want.calls.map(({ name, args }) => ({ name, args })));
  if (p !== 'google') expect(o.calls.map((x) => x.id)).toEqual(want.calls.map((x) => x.id));
  expect(o.finish).toBe(want.finish);
  expect(o.native).toBe(apiFinish(api, want.finish));
  // No usage in the upstream stream: zeros, and no cost (never a made-up $0). Gemini's usage has no cache-write count.
  const usage = want.usage ?? ZERO;
  expect(o.usage).toEqual(api === 'gemini' ? { ...usage, cacheWrite: 0 } : usage);
  if (want.usage) expect(c.cost).toBeCloseTo(expectedCost(want.usage), 12);
  else expect(c.cost).toBeNull();
}

/** Answer text and tool-call argument text carried by the complete events of a partial upstream stream. */
function deliveredContent(p: Upstream, delivered: string): { text: string; reasoning: string; args: string } {
  let text = '';
  let reasoning = '';
  let args = '';
  for (const d of splitEvents(delivered).map(dataOf)) {
    if (!d) continue;
    if (p === 'openai') {
      const delta = d.choices?.[0]?.delta ?? {};
      if (typeof delta.content === 'string') text += delta.content;
      for (const tc of delta.tool_calls ?? []) args += tc.function?.arguments ?? '';
    } else if (p === 'anthropic') {
      if (d.delta?.type === 'text_delta') text += d.delta.text;
      if (d.delta?.type === 'input_json_delta') args += d.delta.partial_json;
    } else if (p === 'google') {
      for (const part of d.candidates?.[0]?.content?.parts ?? []) {
        if (part.functionCall) args += JSON.stringify(part.functionCall.args ?? {});
        else if (part.thought === true) reasoning += part.text ?? '';
        else if (typeof part.text === 'string') text += part.text;
      }
    } else {
      if (d.type === 'response.output_text.delta') text += d.delta;
      if (d.type === 'response.function_call_arguments.delta') args += d.delta;
    }
  }
  return { text, reasoning, args };
}

const observedOf = (p: Upstream, text: string) => upstreamObserved(p, { method: 'POST', path: '', request: {}, status: 200, response: text, raw: Buffer.from(text) });

async function expectSdkError(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected the SDK call to fail');
}

async function runScenario(api: Api, p: Upstream, s: Scenario, seed: number): Promise<void> {
  const up = raws[p];
  const plan = planFor(p, s, seed);
  up.plan = plan;
  const tools = plan.source.includes('get_weather');
  const cut = s.startsWith('cut') || s === 'end-mid-event';
  const model = () => (cut ? freshModel(p) : sharedModel(p));

  if (!cut) {
    const want = observedOf(p, plan.source);
    // The official SDK (and its accumulator) …
    const sdk = await sdkCall(api, requestBody(api, model(), tools));
    expectSame(api, p, sdk, want);
    // … and the raw bytes.
    const raw = await rawCall(api, requestBody(api, model(), tools));
    expect(raw.status).toBe(200);
    expect(raw.contentType).toMatch(/^text\/event-stream/);
    const r = parseRaw(api, raw.text);
    expect(r.error).toBeNull();
    expect(r.text).toBe(want.text);
    expect(r.reasoning).toBe(want.reasoning);
    expect(r.args.map((a) => JSON.parse(a) as unknown)).toEqual(want.calls.map((c) => c.args));
    expect(up.requests.length).toBe(2);
    return;
  }

  if (s === 'cut-after-content' || s === 'end-mid-event') {
    const before = deliveredContent(p, plan.delivered);
    expect(before.text.length + before.reasoning.length + before.args.length).toBeGreaterThan(0);
    // SDK: the stream's error event surfaces as an error: APIError (chat, messages), the ResponseStream's error event.
    const e = await expectSdkError(sdkCall(api, requestBody(api, model(), tools)));
    if (api === 'chat') expect(e).toBeInstanceOf(APIError);
    if (api === 'messages') expect(e).toBeInstanceOf(AnthropicAPIError);
    if (api === 'gemini') expect(e).toBeInstanceOf(GoogleApiError);
    expect(e.message).toMatch(/Provider error during the stream/);
    const raw = await rawCall(api, requestBody(api, model(), tools));
    expect(raw.status).toBe(200);
    const r = parseRaw(api, raw.text);
    expect(r.text).toBe(before.text);
    expect(r.reasoning).toBe(before.reasoning);
    if (api === 'gemini') {
      // Gemini sends whole function calls only: a call cut in its arguments never reaches the client.
      for (const a of r.args) JSON.parse(a);
      expect(before.args.startsWith(r.args.join(''))).toBe(true);
    } else expect(r.args.join('')).toBe(before.args);
    expect(r.error).not.toBeNull();
    if (api === 'messages') expect(r.error).toMatchObject({ type: 'api_error', message: 'Provider error during the stream' });
    if (api === 'chat') expect(r.error).toMatchObject({ code: 502, message: 'Provider error during the stream' });
    if (api === 'responses') expect(r.error).toMatchObject({ code: 'server_error', message: 'Provider error during the stream' });
    if (api === 'gemini') expect(r.error).toMatchObject({ code: 502, status: 'UNAVAILABLE', message: 'Provider error during the stream' });
    return;
  }

  if (s === 'cut-before-content') {
    // No fallback: the whole answer is a JSON error in the API's envelope (nothing was streamed yet).
    const e = await expectSdkError(sdkCall(api, requestBody(api, model(), tools)));
    if (api === 'messages') expect(e).toBeInstanceOf(AnthropicAPIError);
    else if (api === 'gemini') expect(e).toBeInstanceOf(GoogleApiError);
    else expect(e).toBeInstanceOf(APIError);
    expect((e as APIError).status).toBe(502);
    const raw = await rawCall(api, requestBody(api, model(), tools));
    expect(raw.status).toBe(502);
    expect(raw.contentType).toMatch(/^application\/json/);
    const body = JSON.parse(raw.text) as Json;
    if (api === 'chat') expect(body.error).toMatchObject({ code: 502, message: expect.any(String) });
    if (api === 'responses') expect(body).toMatchObject({ error: { code: 502, message: expect.any(String) }, error_type: 'provider_unavailable' });
    if (api === 'messages') expect(body).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.any(String) } });
    if (api === 'gemini') expect(body).toMatchObject({ error: { code: 502, status: 'UNAVAILABLE', message: expect.any(String) } });
    return;
  }

  // cut-before-content-fallback: the next model answers; the client sees only its stream.
  const fallback = (m: string) => (api === 'messages' ? { fallbacks: [{ model: FALLBACK }] } : { models: [m, FALLBACK] });
  const m1 = model();
  const sdk = await sdkCall(api, requestBody(api, m1, false, fallback(m1)));
  expect(sdk.observed.text).toMatch(/^Simulated reply to: What is the weather/);
  expect(sdk.observed.finish).toBe('stop');
  expect(sdk.observed.usage!.output).toBeGreaterThan(0);
  const m2 = model();
  const raw = await rawCall(api, requestBody(api, m2, false, fallback(m2)));
  expect(raw.status).toBe(200);
  const r = parseRaw(api, raw.text);
  expect(r.error).toBeNull();
  expect(r.text).toBe(sdk.observed.text);
  expect(up.requests.length).toBe(2);
  expect(env.sim.stats('sim-a').requests + env.sim.stats('sim-b').requests).toBeGreaterThanOrEqual(2);
}

// ------------------------------------------------------------------------------------------------ the tests

const SCENARIOS: Array<{ s: Scenario; title: string; seeds: number[] }> = [
  { s: 'split', title: 'every event split across writes at random byte boundaries', seeds: [1, 2] },
  { s: 'coalesced', title: 'several events in one write', seeds: [3, 4] },
  { s: 'unknown', title: 'unknown event types and comments inserted', seeds: [6, 7] },
  { s: 'tool-bytes', title: 'a tool-call argument streamed in 1-character pieces', seeds: [8] },
  { s: 'cut-after-content', title: 'cut mid-event after content → the API error event ends a well-formed stream', seeds: [10, 11] },
  { s: 'end-mid-event', title: 'body ends cleanly mid-event after content → the API error event ends a well-formed stream', seeds: [10, 11] },
  { s: 'cut-before-content', title: 'cut mid-event before any content, no fallback → JSON error', seeds: [12] },
  { s: 'cut-before-content-fallback', title: 'cut mid-event before any content → the fallback model answers', seeds: [14] },
];

for (const p of UPSTREAMS) {
  describe(`raw ${p} upstream`, () => {
    for (const api of APIS) {
      describe(`→ ${api} client`, () => {
        for (const { s, title, seeds } of SCENARIOS) {
          for (const seed of seeds) {
            const kind = s === 'tool-bytes' ? 'tool' : seed % 2 === 0 ? 'text' : 'tool';
            it(`${title} (${kind} fixture, seed ${seed})`, () => runScenario(api, p, s, seed));
          }
        }
      });
    }
  });
}
