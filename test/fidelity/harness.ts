/**
 * Fidelity harness: the gateway in front of the provider simulator, with a recording tap between the two so that a
 * test sees exactly what the upstream produced (bytes included: ids, signatures, usage) next to what the official SDK
 * client made of the gateway's answer.
 *
 *   SDK client ──► gateway ──► tap (records each upstream exchange) ──► simulator (`/<sim provider>/…`, knobs)
 *
 * Upstream answers are read here with parsers of our own, written from each provider's public documentation (not
 * the gateway's adapters), and reduced to a protocol-neutral `Observed` value; so are the SDK results of the four
 * inbound APIs (the Gemini one in gemini-client.ts). Tests compare the two.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import OpenAI from 'openai';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { generateKeyPairSync } from 'node:crypto';
import { trustServiceAccount } from '../../src/sim/index.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { geminiFinish } from './gemini-client.js';

export type Json = Record<string, any>;
export type Api = 'chat' | 'responses' | 'messages' | 'gemini';
/** The text (SSE or JSON) upstream wire formats. */
export type TextWire = 'openai' | 'anthropic' | 'google' | 'openai-responses';
/** Every upstream wire format (what the answers and requests look like): Bedrock's Converse is binary when streamed. */
export type Wire = TextWire | 'bedrock';
/** The upstream protocols: every wire, and the clouds that speak one of them on their own URLs and auth. */
export type Upstream = Wire | 'azure-openai' | 'azure-openai-responses' | 'vertex' | 'vertex-anthropic';
export const APIS: Api[] = ['chat', 'responses', 'messages', 'gemini'];
export const WIRES: TextWire[] = ['openai', 'anthropic', 'google', 'openai-responses'];
export const UPSTREAMS: Upstream[] = [...WIRES, 'azure-openai', 'azure-openai-responses', 'bedrock', 'vertex', 'vertex-anthropic'];

/** The service account of the Vertex AI upstreams: its key file (the provider key), trusted by the simulator. */
const VERTEX_KEYS = generateKeyPairSync('rsa', { modulusLength: 2048 });
const VERTEX_EMAIL = 'fidelity@sim-project.iam.gserviceaccount.com';
trustServiceAccount(VERTEX_EMAIL, VERTEX_KEYS.publicKey.export({ type: 'spki', format: 'pem' }) as string);
const VERTEX_SA = JSON.stringify({ type: 'service_account', project_id: 'sim-project', client_email: VERTEX_EMAIL, private_key_id: 'k1', private_key: VERTEX_KEYS.privateKey.export({ type: 'pkcs8', format: 'pem' }) });
/** The wire format a protocol speaks. */
export function wireOf(up: Upstream): Wire {
  return up === 'azure-openai' ? 'openai' : up === 'azure-openai-responses' ? 'openai-responses' : up === 'vertex' ? 'google' : up === 'vertex-anthropic' ? 'anthropic' : up;
}

/** Prices (USD per token) of the fidelity endpoints: one set for all, so that costs are easy to check. */
export const PRICE = { prompt: 0.000002, completion: 0.00001, input_cache_read: 0.0000002, input_cache_write: 0.0000025 };

/** Gateway model, simulated provider (its path prefix on the simulator, and its knobs) and base-URL suffix per protocol. */
export const ROUTE: Record<Upstream, { model: string; sim: string; slug: string; version: string; upstream?: string; key?: string; cloud?: Record<string, string>; tokenUrl?: boolean }> = {
  openai: { model: 'fid/openai', sim: 'sim-a', slug: 'fid-openai', version: 'v1' },
  anthropic: { model: 'fid/anthropic', sim: 'sim-anthropic', slug: 'fid-anthropic', version: 'v1' },
  google: { model: 'fid/google', sim: 'sim-google', slug: 'fid-google', version: 'v1beta' },
  'openai-responses': { model: 'fid/responses', sim: 'sim-responses', slug: 'fid-responses', version: 'v1' },
  // Azure OpenAI: the resource endpoint is the base URL (deployment paths and api-version added by the adapter).
  'azure-openai': { model: 'fid/azure', sim: 'sim-azure', slug: 'fid-azure', version: '' },
  'azure-openai-responses': { model: 'fid/azure-responses', sim: 'sim-azure-responses', slug: 'fid-azure-responses', version: '' },
  // Amazon Bedrock Converse: SigV4-signed with a simulated key pair; a model id with `:` (escaped in the signed path).
  bedrock: { model: 'fid/bedrock', sim: 'sim-bedrock', slug: 'fid-bedrock', version: '', upstream: 'anthropic.claude-sim-v1:0', key: 'AKIDSIMFIDELITY:simsecret/AKIDSIMFIDELITY', cloud: { region: 'us-east-1' } },
  // Google Vertex AI: a service account's OAuth token (exchanged at the simulator's token endpoint, not through the tap).
  vertex: { model: 'fid/vertex', sim: 'sim-vertex', slug: 'fid-vertex', version: '', upstream: 'gemini-sim', key: VERTEX_SA, cloud: { location: 'us-east5' }, tokenUrl: true },
  'vertex-anthropic': { model: 'fid/vertex-anthropic', sim: 'sim-vertex-anthropic', slug: 'fid-vertex-anthropic', version: '', upstream: 'claude-sim@20250929', key: VERTEX_SA, cloud: { location: 'us-east5' }, tokenUrl: true },
};

// ------------------------------------------------------------------------------------------------ the tap

export interface Exchange {
  method: string;
  /** Path on the simulator, e.g. `/sim-a/v1/chat/completions`. */
  path: string;
  request: Json;
  status: number;
  /** The upstream's answer, as sent (UTF-8 text; `raw` has the bytes, for binary streams). */
  response: string;
  raw: Buffer;
}

/** A recording reverse proxy in front of the simulator. */
export class Tap {
  target = '';
  exchanges: Exchange[] = [];
  private constructor(
    readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Tap> {
    let tap: Tap | null = null;
    const server = createServer((req, res) => {
      const body: Buffer[] = [];
      req.on('data', (c: Buffer) => body.push(c));
      req.on('end', () => {
        const t = tap!;
        const text = Buffer.concat(body).toString('utf8');
        // The Host header stays the gateway's: it is signed (SigV4), as a transparent proxy must leave it.
        const headers = { ...req.headers };
        const up = httpRequest(t.target + (req.url ?? '/'), { method: req.method, headers }, (ur) => {
          const h = { ...ur.headers };
          for (const k of ['content-length', 'transfer-encoding', 'connection', 'keep-alive']) delete h[k];
          res.writeHead(ur.statusCode ?? 502, h);
          const parts: Buffer[] = [];
          ur.on('data', (c: Buffer) => {
            parts.push(c);
            res.write(c);
          });
          ur.on('end', () => {
            let request: Json = {};
            try {
              request = JSON.parse(text) as Json;
            } catch {
              /* not JSON */
            }
            const raw = Buffer.concat(parts);
            t.exchanges.push({ method: req.method ?? 'GET', path: req.url ?? '/', request, status: ur.statusCode ?? 0, response: raw.toString('utf8'), raw });
            res.end();
          });
          ur.on('error', () => res.destroy());
        });
        up.on('error', () => res.destroy());
        up.end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    tap = new Tap(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return tap;
  }

  /** The one exchange recorded since the last `clear()`. */
  only(): Exchange {
    if (this.exchanges.length !== 1) throw new Error(`expected one upstream exchange, got ${this.exchanges.length}`);
    return this.exchanges[0];
  }

  clear(): void {
    this.exchanges = [];
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// ------------------------------------------------------------------------------------------------ environment

export interface FidelityEnv {
  env: ChatEnv;
  tap: Tap;
  openai: OpenAI;
  anthropic: Anthropic;
  genai: GoogleGenAI;
  close(): Promise<void>;
}

const ZDR = { training: false, retains_prompts: false, zdr: true };
const PARAMS = [
  'temperature', 'top_p', 'top_k', 'max_tokens', 'max_completion_tokens', 'stop', 'seed', 'tools', 'tool_choice', 'parallel_tool_calls',
  'response_format', 'structured_outputs', 'reasoning', 'reasoning_effort', 'include_reasoning', 'frequency_penalty', 'presence_penalty',
];
const PRICING = Object.fromEntries(Object.entries(PRICE).map(([k, v]) => [k, v.toFixed(10).replace(/0+$/, '')]));

/** The gateway (SQLite), the simulator, the tap, and one official client per SDK. */
export async function startFidelityEnv(): Promise<FidelityEnv> {
  const tap = await Tap.start();
  const providers = (simUrl: string) =>
    Object.values(ROUTE).map((r, i) => ({
      slug: r.slug,
      name: `Fidelity ${r.slug.slice(4)}`,
      protocol: UPSTREAMS[i],
      base_url: r.version ? `${tap.url}/${r.sim}/${r.version}` : `${tap.url}/${r.sim}`,
      // The clouds require a credential (the simulator checks Azure's api-key header, SigV4, OAuth tokens).
      ...(r.version ? { no_auth: true } : { api_key: r.key ?? `${r.slug}-key` }),
      ...(r.cloud || r.tokenUrl ? { cloud: { ...r.cloud, ...(r.tokenUrl ? { token_url: `${simUrl}/${r.sim}/token` } : {}) } } : {}),
      data_policy: { ...ZDR },
    }));
  const models = Object.values(ROUTE).map((r) => ({ id: r.model, name: r.model, context_length: 200000, input_modalities: ['text', 'image', 'file'] }));
  const endpoints = Object.values(ROUTE).map((r) => ({ model: r.model, provider: r.slug, upstream_model: r.upstream ?? `${r.sim}-model`, pricing: { ...PRICING }, supported_parameters: [...PARAMS] }));
  const env = await startChatEnv('sqlite', { catalog: (simUrl) => ({ providers: providers(simUrl), models, endpoints }) });
  tap.target = env.sim.url;
  const openai = new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
  // The gateway takes its keys as bearer tokens: the Anthropic SDK's `authToken`.
  const anthropic = new Anthropic({ baseURL: `${env.t.url}/api`, authToken: env.key, apiKey: null, maxRetries: 0 });
  // The Gemini API sits at /api/v1beta: the SDK adds the version to its base URL; the key goes as x-goog-api-key.
  const genai = new GoogleGenAI({ apiKey: env.key, httpOptions: { baseUrl: `${env.t.url}/api` } });
  return {
    env,
    tap,
    openai,
    anthropic,
    genai,
    close: async () => {
      await env.close();
      await tap.close();
    },
  };
}

// ------------------------------------------------------------------------------------------------ observations

export interface Usage {
  /** Prompt tokens, cache reads and writes included. */
  input: number;
  /** Completion tokens, reasoning included. */
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
}

export type Finish = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface Call {
  id: string | null;
  name: string;
  args: unknown;
}

/** What one side (the upstream, or the SDK client) saw of an answer, in protocol-neutral terms. */
export interface Observed {
  text: string;
  reasoning: string;
  /** Reasoning signatures, in order (empty ones left out). */
  signatures: string[];
  /** Encrypted / redacted reasoning blobs, in order. */
  encrypted: string[];
  calls: Call[];
  finish: Finish;
  /** The protocol's own finish value (`stop`, `end_turn`, `STOP`, `completed`, …). */
  native: string | null;
  usage: Usage | null;
}

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const parseArgs = (s: string): unknown => {
  if (s.trim() === '') return {};
  return JSON.parse(s) as unknown;
};

/** SSE events of a whole body (any line endings). */
export function sseEvents(text: string): EventSourceMessage[] {
  const out: EventSourceMessage[] = [];
  const p = createParser({ onEvent: (e) => out.push(e) });
  p.feed(text);
  p.feed('\n\n');
  return out;
}

const isSse = (text: string) => /^(data|event|:)/.test(text.trimStart());

// ---- upstream answers, per protocol (documented wire formats) ----

/** OpenAI chat completions: https://platform.openai.com/docs/api-reference/chat/object and …/chat-streaming. */
function openaiUsage(u: Json | null | undefined): Usage | null {
  if (!u) return null;
  return {
    input: n(u.prompt_tokens),
    output: n(u.completion_tokens),
    cacheRead: n(u.prompt_tokens_details?.cached_tokens),
    cacheWrite: n(u.prompt_tokens_details?.cache_write_tokens),
    reasoning: n(u.completion_tokens_details?.reasoning_tokens),
  };
}

const openaiFinish = (f: string | null, calls: boolean): Finish =>
  f === 'stop' ? 'stop' : f === 'tool_calls' || f === 'function_call' ? 'tool_calls' : f === 'length' ? 'length' : f === 'content_filter' ? 'content_filter' : calls ? 'tool_calls' : 'other';

function fromOpenAI(text: string): Observed {
  const o: Observed = { text: '', reasoning: '', signatures: [], encrypted: [], calls: [], finish: 'other', native: null, usage: null };
  if (!isSse(text)) {
    const j = JSON.parse(text) as Json;
    const m = j.choices[0].message as Json;
    o.text = m.content ?? '';
    o.reasoning = m.reasoning_content ?? m.reasoning ?? '';
    for (const tc of m.tool_calls ?? []) o.calls.push({ id: tc.id, name: tc.function.name, args: parseArgs(tc.function.arguments) });
    o.native = j.choices[0].finish_reason;
    o.usage = openaiUsage(j.usage);
  } else {
    const calls = new Map<number, { id: string | null; name: string; args: string }>();
    for (const ev of sseEvents(text)) {
      if (ev.data === '[DONE]') break;
      const j = JSON.parse(ev.data) as Json;
      if (j.usage) o.usage = openaiUsage(j.usage);
      for (const c of j.choices ?? []) {
        const d = (c.delta ?? {}) as Json;
        if (typeof d.content === 'string') o.text += d.content;
        if (typeof d.reasoning_content === 'string') o.reasoning += d.reasoning_content;
        for (const tc of d.tool_calls ?? []) {
          const cur = calls.get(tc.index) ?? { id: null, name: '', args: '' };
          if (tc.id) cur.id = tc.id;
          if (tc.function?.name) cur.name = tc.function.name;
          if (typeof tc.function?.arguments === 'string') cur.args += tc.function.arguments;
          calls.set(tc.index, cur);
        }
        if (c.finish_reason) o.native = c.finish_reason;
      }
    }
    for (const c of calls.values()) o.calls.push({ id: c.id, name: c.name, args: parseArgs(c.args) });
  }
  o.finish = openaiFinish(o.native, o.calls.length > 0);
  return o;
}

/** Anthropic Messages: https://docs.anthropic.com/en/api/messages and …/messages-streaming. `input_tokens` excludes the cache. */
function anthropicUsage(u: Json): Usage {
  const read = n(u.cache_read_input_tokens);
  const write = n(u.cache_creation_input_tokens);
  return { input: n(u.input_tokens) + read + write, output: n(u.output_tokens), cacheRead: read, cacheWrite: write, reasoning: 0 };
}

const anthropicFinish = (s: string | null): Finish =>
  s === 'end_turn' || s === 'stop_sequence' ? 'stop' : s === 'tool_use' ? 'tool_calls' : s === 'max_tokens' ? 'length' : s === 'refusal' ? 'content_filter' : 'other';

function anthropicBlocks(o: Observed, blocks: Json[]): void {
  for (const b of blocks) {
    if (b.type === 'text') o.text += b.text;
    else if (b.type === 'thinking') {
      o.reasoning += b.thinking;
      if (b.signature) o.signatures.push(b.signature);
    } else if (b.type === 'redacted_thinking') o.encrypted.push(b.data);
    else if (b.type === 'tool_use') o.calls.push({ id: b.id, name: b.name, args: b.input });
  }
}

function fromAnthropic(text: string): Observed {
  const o: Observed = { text: '', reasoning: '', signatures: [], encrypted: [], calls: [], finish: 'other', native: null, usage: null };
  if (!isSse(text)) {
    const j = JSON.parse(text) as Json;
    anthropicBlocks(o, j.content);
    o.native = j.stop_reason;
    o.usage = anthropicUsage(j.usage);
  } else {
    const blocks: Json[] = [];
    const json: string[] = [];
    let usage: Json = {};
    for (const ev of sseEvents(text)) {
      const j = JSON.parse(ev.data) as Json;
      switch (j.type) {
        case 'message_start':
          usage = { ...j.message.usage };
          break;
        case 'content_block_start':
          blocks[j.index] = { ...j.content_block };
          json[j.index] = '';
          break;
        case 'content_block_delta': {
          const b = blocks[j.index];
          const d = j.delta as Json;
          if (d.type === 'text_delta') b.text += d.text;
          else if (d.type === 'thinking_delta') b.thinking += d.thinking;
          else if (d.type === 'signature_delta') b.signature = d.signature;
          else if (d.type === 'input_json_delta') json[j.index] += d.partial_json;
          break;
        }
        case 'content_block_stop':
          if (blocks[j.index].type === 'tool_use') blocks[j.index].input = parseArgs(json[j.index]);
          break;
        case 'message_delta':
          o.native = j.delta.stop_reason;
          // Cumulative counts: later values replace earlier ones.
          for (const [k, v] of Object.entries(j.usage ?? {})) if (v !== null) usage[k] = v;
          break;
      }
    }
    anthropicBlocks(o, blocks);
    o.usage = anthropicUsage(usage);
  }
  o.finish = anthropicFinish(o.native);
  return o;
}

/** Gemini generateContent: https://ai.google.dev/api/generate-content (usage: thoughts are counted apart from candidates). */
function geminiUsage(u: Json | undefined): Usage | null {
  if (!u) return null;
  const thoughts = n(u.thoughtsTokenCount);
  return { input: n(u.promptTokenCount) + n(u.toolUsePromptTokenCount), output: n(u.candidatesTokenCount) + thoughts, cacheRead: n(u.cachedContentTokenCount), cacheWrite: 0, reasoning: thoughts };
}

function geminiParts(o: Observed, parts: Json[]): void {
  for (const p of parts) {
    if (p.thought === true) o.reasoning += p.text ?? '';
    else if (p.functionCall) o.calls.push({ id: p.functionCall.id ?? null, name: p.functionCall.name, args: p.functionCall.args ?? {} });
    else if (typeof p.text === 'string') o.text += p.text;
    if (p.thoughtSignature) o.signatures.push(p.thoughtSignature);
  }
}

function fromGoogle(text: string): Observed {
  const o: Observed = { text: '', reasoning: '', signatures: [], encrypted: [], calls: [], finish: 'other', native: null, usage: null };
  const chunks: Json[] = isSse(text) ? sseEvents(text).map((e) => JSON.parse(e.data) as Json) : [JSON.parse(text) as Json];
  for (const c of chunks) {
    const cand = c.candidates?.[0];
    if (cand?.content?.parts) geminiParts(o, cand.content.parts);
    if (cand?.finishReason) o.native = cand.finishReason;
    if (c.usageMetadata) o.usage = geminiUsage(c.usageMetadata);
  }
  o.finish = o.native === 'STOP' ? (o.calls.length > 0 ? 'tool_calls' : 'stop') : o.native === 'MAX_TOKENS' ? 'length' : o.native === 'SAFETY' ? 'content_filter' : 'other';
  return o;
}

/** OpenAI Responses: https://platform.openai.com/docs/api-reference/responses/object and …/responses-streaming. */
function responsesUsage(u: Json | null | undefined): Usage | null {
  if (!u) return null;
  return {
    input: n(u.input_tokens),
    output: n(u.output_tokens),
    cacheRead: n(u.input_tokens_details?.cached_tokens),
    cacheWrite: n(u.input_tokens_details?.cache_write_tokens),
    reasoning: n(u.output_tokens_details?.reasoning_tokens),
  };
}

/** A Response object (upstream or client: the same documented shape). */
export function fromResponseObject(r: Json): Observed {
  const o: Observed = { text: '', reasoning: '', signatures: [], encrypted: [], calls: [], finish: 'other', native: r.status ?? null, usage: responsesUsage(r.usage) };
  for (const item of r.output ?? []) {
    if (item.type === 'message') {
      for (const c of item.content ?? []) if (c.type === 'output_text') o.text += c.text;
    } else if (item.type === 'reasoning') {
      for (const s of item.summary ?? []) o.reasoning += s.text;
      for (const c of item.content ?? []) if (c.type === 'reasoning_text') o.reasoning += c.text;
      if (item.signature) o.signatures.push(item.signature);
      if (item.encrypted_content) o.encrypted.push(item.encrypted_content);
    } else if (item.type === 'function_call') o.calls.push({ id: item.call_id, name: item.name, args: parseArgs(item.arguments) });
  }
  const reason = r.incomplete_details?.reason;
  o.finish =
    r.status === 'completed' ? (o.calls.length > 0 ? 'tool_calls' : 'stop') : r.status === 'incomplete' ? (reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'content_filter' : 'other') : 'other';
  return o;
}

function fromResponses(text: string): Observed {
  if (!isSse(text)) return fromResponseObject(JSON.parse(text) as Json);
  const terminal = sseEvents(text)
    .map((e) => JSON.parse(e.data) as Json)
    .find((e) => e.type === 'response.completed' || e.type === 'response.incomplete');
  if (!terminal) throw new Error('upstream Responses stream without a terminal event');
  return fromResponseObject(terminal.response);
}

/**
 * AWS event-stream messages (https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html#streaming-event-stream):
 * a 12-byte prelude (total length, headers length, CRC), headers (name length, name, type 7 = string: length, value),
 * the payload, a CRC. Returns each message's string headers and JSON payload.
 */
export function eventStreamMessages(raw: Buffer): Array<{ headers: Record<string, string>; payload: Json }> {
  const out: Array<{ headers: Record<string, string>; payload: Json }> = [];
  let at = 0;
  while (at + 12 <= raw.length) {
    const total = raw.readUInt32BE(at);
    const headersLength = raw.readUInt32BE(at + 4);
    const headers: Record<string, string> = {};
    let h = at + 12;
    const end = h + headersLength;
    while (h < end) {
      const nameLength = raw.readUInt8(h);
      const name = raw.subarray(h + 1, h + 1 + nameLength).toString('utf8');
      h += 1 + nameLength;
      const type = raw.readUInt8(h);
      if (type !== 7) throw new Error(`event-stream header ${name} of type ${type}`);
      const len = raw.readUInt16BE(h + 1);
      headers[name] = raw.subarray(h + 3, h + 3 + len).toString('utf8');
      h += 3 + len;
    }
    const payload = raw.subarray(end, at + total - 4).toString('utf8');
    out.push({ headers, payload: payload ? (JSON.parse(payload) as Json) : {} });
    at += total;
  }
  return out;
}

/** Bedrock Converse: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html and …ConverseStream. */
function converseUsage(u: Json | undefined): Usage | null {
  if (!u) return null;
  const read = n(u.cacheReadInputTokens);
  const write = n(u.cacheWriteInputTokens);
  return { input: n(u.inputTokens) + read + write, output: n(u.outputTokens), cacheRead: read, cacheWrite: write, reasoning: 0 };
}

function fromBedrock(ex: Exchange): Observed {
  const o: Observed = { text: '', reasoning: '', signatures: [], encrypted: [], calls: [], finish: 'other', native: null, usage: null };
  const blocks: Json[] = [];
  if (ex.raw.length > 0 && ex.raw[0] !== 0x7b) {
    const args = new Map<number, string>();
    for (const m of eventStreamMessages(ex.raw)) {
      if (m.headers[':message-type'] !== 'event') throw new Error(`event-stream ${m.headers[':message-type']}: ${JSON.stringify(m.payload)}`);
      const p = m.payload;
      const i = p.contentBlockIndex as number;
      switch (m.headers[':event-type']) {
        case 'contentBlockStart':
          if (p.start?.toolUse) blocks[i] = { toolUse: { ...p.start.toolUse } };
          args.set(i, '');
          break;
        case 'contentBlockDelta': {
          const d = p.delta as Json;
          if (typeof d.text === 'string') blocks[i] = { text: (blocks[i]?.text ?? '') + d.text };
          else if (d.toolUse) args.set(i, (args.get(i) ?? '') + d.toolUse.input);
          else if (d.reasoningContent) {
            const r = (blocks[i] ??= { reasoningContent: { reasoningText: { text: '' } } }).reasoningContent.reasoningText as Json;
            if (typeof d.reasoningContent.text === 'string') r.text += d.reasoningContent.text;
            if (d.reasoningContent.signature) r.signature = d.reasoningContent.signature;
          }
          break;
        }
        case 'contentBlockStop':
          if (blocks[i]?.toolUse) blocks[i].toolUse.input = parseArgs(args.get(i) ?? '');
          break;
        case 'messageStop':
          o.native = p.stopReason;
          break;
        case 'metadata':
          o.usage = converseUsage(p.usage);
          break;
      }
    }
  } else {
    const j = JSON.parse(ex.response) as Json;
    blocks.push(...(j.output.message.content as Json[]));
    o.native = j.stopReason;
    o.usage = converseUsage(j.usage);
  }
  for (const b of blocks) {
    if (!b) continue;
    if (typeof b.text === 'string') o.text += b.text;
    else if (b.toolUse) o.calls.push({ id: b.toolUse.toolUseId, name: b.toolUse.name, args: b.toolUse.input });
    else if (b.reasoningContent?.reasoningText) {
      o.reasoning += b.reasoningContent.reasoningText.text;
      if (b.reasoningContent.reasoningText.signature) o.signatures.push(b.reasoningContent.reasoningText.signature);
    }
  }
  o.finish = anthropicFinish(o.native);
  return o;
}

/** What the upstream produced in one recorded exchange. */
export function upstreamObserved(protocol: Upstream, ex: Exchange): Observed {
  if (ex.status !== 200) throw new Error(`upstream answered ${ex.status}: ${ex.response.slice(0, 300)}`);
  switch (wireOf(protocol)) {
    case 'openai':
      return fromOpenAI(ex.response);
    case 'anthropic':
      return fromAnthropic(ex.response);
    case 'google':
      return fromGoogle(ex.response);
    case 'openai-responses':
      return fromResponses(ex.response);
    case 'bedrock':
      return fromBedrock(ex);
  }
}

// ---- client results, per inbound API (SDK objects) ----

export interface ClientResult {
  observed: Observed;
  /** The SDK's final object (ChatCompletion, Response, Message). */
  body: Json;
  /** `usage.cost` as the client sees it. */
  cost: number | null;
}

function chatObserved(c: Json, extra: { reasoning?: string; details?: Json[] } = {}): Observed {
  const choice = c.choices[0] as Json;
  const m = choice.message as Json;
  const details: Json[] = extra.details ?? m.reasoning_details ?? [];
  const calls: Call[] = (m.tool_calls ?? []).map((tc: Json) => ({ id: tc.id, name: tc.function.name, args: parseArgs(tc.function.arguments) }));
  const f = choice.finish_reason as string;
  return {
    text: m.content ?? '',
    reasoning: extra.reasoning ?? m.reasoning ?? '',
    signatures: details.filter((d) => d.type === 'reasoning.text' && d.signature).map((d) => d.signature as string),
    encrypted: details.filter((d) => d.type === 'reasoning.encrypted').map((d) => d.data as string),
    calls,
    finish: openaiFinish(f, false),
    native: f,
    usage: c.usage ? openaiUsage(c.usage) : null,
  };
}

function messagesObserved(m: Json): Observed {
  const o: Observed = { text: '', reasoning: '', signatures: [], encrypted: [], calls: [], finish: anthropicFinish(m.stop_reason), native: m.stop_reason, usage: anthropicUsage(m.usage) };
  anthropicBlocks(o, m.content);
  return o;
}

/** Usage with reasoning tokens as the Messages skin reports them (`output_tokens_details.thinking_tokens`). */
function messagesUsage(m: Json): Usage {
  return { ...anthropicUsage(m.usage), reasoning: n(m.usage.output_tokens_details?.thinking_tokens) };
}

export async function callChat(client: OpenAI, body: Json, stream: boolean): Promise<ClientResult> {
  if (!stream) {
    const c = (await client.chat.completions.create({ ...body, stream: false } as never)) as unknown as Json;
    return { observed: chatObserved(c), body: c, cost: c.usage?.cost ?? null };
  }
  const s = await client.chat.completions.create({ ...body, stream: true } as never);
  // The SDK's own accumulator (it throws on a malformed chunk sequence: missing ids, names, finish_reason, …).
  const runner = ChatCompletionStream.fromReadableStream((s as unknown as { toReadableStream(): ReadableStream }).toReadableStream());
  const chunks: Json[] = [];
  runner.on('chunk', (c) => chunks.push(c as unknown as Json));
  const final = (await runner.finalChatCompletion()) as unknown as Json;
  // Reasoning and usage from the chunks themselves (extension fields the accumulator does not keep).
  let reasoning = '';
  let text = '';
  const details: Json[] = [];
  let usage: Json | null = null;
  for (const c of chunks) {
    if (c.error) throw new Error(`stream error chunk: ${JSON.stringify(c.error)}`);
    if (c.usage) usage = c.usage;
    const d = c.choices?.[0]?.delta as Json | undefined;
    if (!d) continue;
    if (typeof d.reasoning === 'string') reasoning += d.reasoning;
    if (typeof d.content === 'string') text += d.content;
    for (const det of d.reasoning_details ?? []) details.push(det);
  }
  if (!usage) throw new Error('chat stream without usage');
  if (chunks.filter((c) => c.usage).length !== 1) throw new Error('usage must come once, in the final chunk');
  // What a client keeps of streamed reasoning: the text, and the details merged by their `index` (OpenRouter's rule).
  const merged = mergeDetails(details);
  const message = { ...final.choices[0].message, reasoning: reasoning || null, reasoning_details: merged.length > 0 ? merged : undefined };
  const answer = { ...final, choices: [{ ...final.choices[0], message }], usage };
  const o = chatObserved(answer, { reasoning, details: merged });
  if (text !== o.text) throw new Error(`chunk text ${JSON.stringify(text)} differs from the SDK's accumulated ${JSON.stringify(o.text)}`);
  return { observed: o, body: answer, cost: usage.cost ?? null };
}

/** Streamed `reasoning_details` entries merged per `index`: texts concatenated, signature and data kept. */
export function mergeDetails(details: Json[]): Json[] {
  const out = new Map<number, Json>();
  for (const d of details) {
    const i = typeof d.index === 'number' ? d.index : 0;
    const cur = out.get(i);
    if (!cur) out.set(i, { ...d });
    else {
      if (typeof d.text === 'string') cur.text = (cur.text ?? '') + d.text;
      if (typeof d.summary === 'string') cur.summary = (cur.summary ?? '') + d.summary;
      if (d.signature) cur.signature = d.signature;
      if (d.data) cur.data = d.data;
    }
  }
  return [...out.values()];
}

export async function callResponses(client: OpenAI, body: Json, stream: boolean): Promise<ClientResult> {
  if (!stream) {
    const r = (await client.responses.create({ ...body, stream: false } as never)) as unknown as Json;
    if (r.output_text !== fromResponseObject(r).text) throw new Error('output_text differs from the output items');
    return { observed: fromResponseObject(r), body: r, cost: r.usage?.cost ?? null };
  }
  const s = await client.responses.create({ ...body, stream: true } as never);
  const runner = ResponseStream.fromReadableStream((s as unknown as { toReadableStream(): ReadableStream }).toReadableStream());
  const events: Json[] = [];
  runner.on('event', (e) => events.push(e as unknown as Json));
  const final = (await runner.finalResponse()) as unknown as Json;
  checkResponsesEvents(events, final);
  return { observed: fromResponseObject(final), body: final, cost: final.usage?.cost ?? null };
}

/** The documented event sequence: created, in_progress, items (added → deltas → done), one terminal event. */
export function checkResponsesEvents(events: Json[], final: Json): void {
  const fail = (m: string) => {
    throw new Error(`Responses stream: ${m}\n${events.map((e) => e.type).join(' ')}`);
  };
  events.forEach((e, i) => e.sequence_number !== i && fail(`sequence_number ${e.sequence_number} at position ${i}`));
  if (events[0]?.type !== 'response.created') fail('does not start with response.created');
  const last = events[events.length - 1];
  if (!['response.completed', 'response.incomplete', 'response.failed'].includes(last?.type)) fail('no terminal event last');
  const added = new Map<number, Json>();
  const text = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'response.output_item.added') added.set(e.output_index, e.item);
    if (/\.delta$/.test(e.type)) {
      if (!added.has(e.output_index)) fail(`${e.type} before its output_item.added`);
      const key = `${e.output_index}:${e.type}:${e.content_index ?? e.summary_index ?? 0}`;
      text.set(key, (text.get(key) ?? '') + e.delta);
    }
    if (e.type === 'response.output_item.done') {
      if (!added.has(e.output_index)) fail('output_item.done without output_item.added');
      const item = e.item as Json;
      const want = final.output[e.output_index] as Json;
      if (item.type !== want?.type) fail(`item ${e.output_index} is ${item.type} in its done event, ${want?.type} in the final response`);
    }
  }
  // Deltas add up to the final items.
  for (const [key, got] of text) {
    const [oi, type, ci] = key.split(':');
    const item = final.output[Number(oi)] as Json;
    let want: string | undefined;
    if (type === 'response.output_text.delta') want = item.content?.[Number(ci)]?.text;
    else if (type === 'response.function_call_arguments.delta') want = item.arguments;
    else if (type === 'response.reasoning_summary_text.delta') want = item.summary?.[Number(ci)]?.text;
    else continue;
    if (got !== want) fail(`${type} deltas of item ${oi} add up to ${JSON.stringify(got)}, final has ${JSON.stringify(want)}`);
  }
}

export async function callMessages(client: Anthropic, body: Json, stream: boolean): Promise<ClientResult> {
  if (!stream) {
    const m = (await client.messages.create({ ...body, stream: false } as never)) as unknown as Json;
    const o = messagesObserved(m);
    o.usage = messagesUsage(m);
    return { observed: o, body: m, cost: m.usage?.cost ?? null };
  }
  const s = client.messages.stream(body as never);
  const events: Json[] = [];
  s.on('streamEvent', (e) => events.push(e as unknown as Json));
  const m = (await s.finalMessage()) as unknown as Json;
  checkMessagesEvents(events);
  const o = messagesObserved(m);
  o.usage = messagesUsage(m);
  // The final message_delta carries the cost (the SDK keeps only the counters).
  const delta = events.filter((e) => e.type === 'message_delta').pop();
  return { observed: o, body: m, cost: delta?.usage?.cost ?? null };
}

/** The documented event flow: message_start, blocks in order (start, deltas, stop), message_delta, message_stop. */
export function checkMessagesEvents(events: Json[]): void {
  const fail = (m: string) => {
    throw new Error(`Messages stream: ${m}\n${events.map((e) => e.type + (e.index !== undefined ? e.index : '')).join(' ')}`);
  };
  if (events[0]?.type !== 'message_start') fail('does not start with message_start');
  if (events[events.length - 1]?.type !== 'message_stop') fail('does not end with message_stop');
  if (events.filter((e) => e.type === 'message_delta').length !== 1) fail('not exactly one message_delta');
  let open: number | null = null;
  let next = 0;
  for (const e of events) {
    if (e.type === 'content_block_start') {
      if (open !== null) fail(`block ${e.index} starts while ${open} is open`);
      if (e.index !== next) fail(`block index ${e.index}, expected ${next}`);
      open = e.index;
      next++;
    } else if (e.type === 'content_block_delta') {
      if (e.index !== open) fail(`delta for block ${e.index} while ${open} is open`);
    } else if (e.type === 'content_block_stop') {
      if (e.index !== open) fail(`stop for block ${e.index} while ${open} is open`);
      open = null;
    } else if (e.type === 'message_delta' && open !== null) fail('message_delta inside a block');
  }
}

// ------------------------------------------------------------------------------------------------ expectations

/** Expected cost of an answer at PRICE (reasoning at the completion price). */
export function expectedCost(u: Usage): number {
  return (u.input - u.cacheRead - u.cacheWrite) * PRICE.prompt + u.cacheRead * PRICE.input_cache_read + u.cacheWrite * PRICE.input_cache_write + u.output * PRICE.completion;
}

/** The finish value each inbound API must show for a protocol-neutral finish. */
export function apiFinish(api: Api, f: Finish): string {
  if (api === 'chat') return f;
  if (api === 'gemini') return geminiFinish(f);
  if (api === 'messages') return { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens', content_filter: 'refusal', other: 'end_turn' }[f];
  return { stop: 'completed', tool_calls: 'completed', length: 'incomplete', content_filter: 'incomplete', other: 'failed' }[f];
}
