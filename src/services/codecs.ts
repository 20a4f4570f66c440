/**
 * How one upstream attempt is encoded and decoded, whatever the pair of client API and upstream protocol:
 * - the fast path, chat completions in and an OpenAI-protocol upstream: the client body passes through (gateway
 *   fields removed, unsupported parameters dropped, unknown fields kept) and chunks are relayed with ids, model and
 *   usage rewritten;
 * - every other pair goes through the internal representation: inbound adapter → IR → upstream adapter, and back.
 *   When client and upstream speak the same protocol (messages → Anthropic, responses → OpenAI Responses), the
 *   request body still passes through untouched except for what routing changes.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { SseEventBound } from '../providers/registry.js';
import type { EndpointDef, Protocol } from '../core/catalog-types.js';
import { carriesOutput, normalizeChoices } from '../core/chat-shape.js';
import type { IrPart, IrRequest, IrResponse, IrStreamEvent, IrUsage } from '../core/ir.js';
import { GATEWAY_FIELDS, MODEL_PARAMS, openaiBody } from '../core/params.js';
import { partsLength, rawMessages, spliceRaw, withRawMessages } from '../core/raw-json.js';
import type { TokenUsage } from '../core/pricing.js';
import { isGatewaySignature } from '../core/reasoning-signature.js';
import { chatInbound } from '../inbound/chat.js';
import { geminiInbound } from '../inbound/gemini.js';
import { messagesInbound } from '../inbound/messages.js';
import { responsesInbound } from '../inbound/responses.js';
import { UpstreamError } from '../core/provider-errors.js';
import { chatAdapter, openaiChatWire, type OpenAIUsage } from '../providers/registry.js';
import { IrStreamGuard, type CompiledFilter } from '../core/content-filters/index.js';
import type { AnyPipelineEntry as PipelineEntry } from '../core/plugins.js';
import type { StreamHealer } from './plugins/healing.js';
import type { AnswerMeta, InboundAdapter, UpstreamAdapter, UpstreamContext, UpstreamHttpRequest } from '../core/adapters.js';

export type InboundApi = 'chat' | 'responses' | 'messages' | 'gemini';

export const INBOUND: Record<InboundApi, InboundAdapter> = { chat: chatInbound, responses: responsesInbound, messages: messagesInbound, gemini: geminiInbound };
/** The OpenAI chat wire of the fast path (providers/registry.ts). */
const { url: chatUrl, headers: chatHeaders, parseError: openaiError, streamError, tokenUsage, checkResponse: checkChatResponse, checkChunk: checkChatChunk } = openaiChatWire;

/** A parsed non-streaming answer, rendered for the client once cost and metadata are known. */
export interface ParsedAnswer {
  usage: TokenUsage | null;
  finish: string | null;
  native: string | null;
  upstreamId: string | null;
  render(meta: AnswerMeta): Record<string, unknown>;
}

/** One relayed stream: upstream text in, client bytes out. Throws UpstreamError on upstream errors. */
export interface StreamSession {
  /**
   * Client bytes for the next upstream text. An upstream error is thrown — unless output was produced earlier in the
   * same text: then that output is returned and the error is left in `failure` for the caller to raise after writing.
   */
  push(text: string | Uint8Array): string;
  /** The upstream stream is binary (AWS event stream): `push` takes the raw bytes of each read. */
  readonly binary: boolean;
  readonly failure: UpstreamError | null;
  /**
   * Output tokens produced so far as counted from the relayed deltas (UTF-8 characters / 4, at least one per output
   * event): what a stream cut before the upstream's usage is billed for (docs/spend.md, "Cut streams").
   */
  readonly producedTokens: number;
  /** True once content (a token, a tool call, reasoning) has been produced for the client. */
  readonly contentStarted: boolean;
  /** The upstream body ended: the last client bytes; throws when the upstream stream was incomplete. */
  end(): string;
  finishOut(meta: AnswerMeta): string;
  errorOut(status: number, message: string, errorType: string, meta: AnswerMeta): string;
  usage(): TokenUsage | null;
  readonly finish: string | null;
  readonly native: string | null;
  readonly upstreamId: string | null;
  /** Content guardrails on the output (streams opened with filters): the filter that blocked it, once one did. */
  readonly blocked?: CompiledFilter | null;
  /** Content guardrails on the output: what the filters did, as `gateway_metadata.pipeline` entries. */
  outputPipeline?(): PipelineEntry[];
}

/** An attempt's upstream request: the body as bytes where the codec built them so (the same-protocol chat path). */
export type AttemptRequest = Omit<UpstreamHttpRequest, 'body'> & { body: string | Buffer | Buffer[] };

export interface AttemptCodec {
  request(ctx: UpstreamContext, stream: boolean): { req: AttemptRequest; dropped: string[] };
  /** The upstream protocol's last step before sending (signing, OAuth tokens); absent when `request` is final. */
  authorize?(req: AttemptRequest, ctx: UpstreamContext): Promise<AttemptRequest>;
  parseError(status: number, text: string, headers: Record<string, string | string[] | undefined>): UpstreamError;
  parse(text: string): ParsedAnswer;
  openStream(meta: AnswerMeta): StreamSession;
}

// ---- usage --------------------------------------------------------------------------------------

export function irToTokens(u: IrUsage | null): TokenUsage | null {
  if (!u) return null;
  return { promptTokens: u.input, completionTokens: u.output, cachedReadTokens: u.cache_read, cacheWriteTokens: u.cache_write, reasoningTokens: u.reasoning };
}

/** The OpenAI-style `usage` object of chat answers: the upstream's fields, normalized counts, cost. */
export function chatUsageView(u: TokenUsage | null, raw: OpenAIUsage | null, meta: AnswerMeta): Record<string, unknown> {
  const t = u ?? { promptTokens: 0, completionTokens: 0 };
  // Copied key by key: object spreads followed by overwrites cost several times more on this path.
  const out = copyOf(raw);
  out.prompt_tokens = t.promptTokens;
  out.completion_tokens = t.completionTokens;
  out.total_tokens = t.promptTokens + t.completionTokens;
  const prompt = copyOf(raw?.prompt_tokens_details);
  prompt.cached_tokens = t.cachedReadTokens ?? 0;
  prompt.cache_write_tokens = t.cacheWriteTokens ?? 0;
  out.prompt_tokens_details = prompt;
  const completion = copyOf(raw?.completion_tokens_details);
  completion.reasoning_tokens = t.reasoningTokens ?? 0;
  out.completion_tokens_details = completion;
  out.cost = meta.cost;
  out.is_byok = meta.is_byok === true;
  out.cost_details = meta.cost_details;
  return out;
}

/** A shallow copy of an object (anything else: a new empty object). */
function copyOf(x: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (x !== null && typeof x === 'object' && !Array.isArray(x)) for (const k in x as Record<string, unknown>) out[k] = (x as Record<string, unknown>)[k];
  return out;
}

// ---- the fast path: chat completions to an OpenAI-protocol upstream ------------------------------

/**
 * OpenAI-compatible reasoning servers (DeepSeek, vLLM, …) return reasoning text as `reasoning_content`; the chat API
 * carries it as `reasoning` (as on the translated path). The upstream field is kept, `reasoning` is added beside it.
 */
function mirrorReasoning(choices: unknown, key: 'message' | 'delta'): boolean {
  if (!Array.isArray(choices)) return false;
  let changed = false;
  for (const c of choices as Array<Record<string, unknown> | null>) {
    const m = c?.[key] as Record<string, unknown> | null | undefined;
    if (m && typeof m.reasoning_content === 'string' && (m.reasoning === undefined || m.reasoning === null)) {
      m.reasoning = m.reasoning_content;
      changed = true;
    }
  }
  return changed;
}

/** The fields every OpenAI chunk starts with, as OpenAI and most compatible servers serialize them. */
function chunkPrefix(id: string, created: number, model: string, provider?: string): string {
  return `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},${provider === undefined ? '' : `"provider":${JSON.stringify(provider)},`}`;
}

/** A JSON string token, exactly as RFC 8259 defines it (`+` instead of `*` in NONEMPTY: at least one character). */
const JSON_STRING = '"(?:[^"\\\\\\u0000-\\u001f]|\\\\(?:["\\\\/bfnrt]|u[0-9a-fA-F]{4}))*"';
const NONEMPTY_JSON_STRING = JSON_STRING.replace(/\*"$/, '+"');
/** Top-level fields a plain content chunk may carry besides its choice, with values that change nothing here. */
const INERT_FIELD = `"(?:system_fingerprint|service_tier)":(?:null|${JSON_STRING})`;
/**
 * How OpenAI ends every chunk but the last when usage is asked for (`stream_options.include_usage`, which the gateway
 * always asks for). The gateway's chunks carry no `usage` until the final one — as the hosted API's, whose SDK
 * refuses a `usage: null` — so a plain chunk ending so is relayed without it.
 */
const USAGE_NULL_TAIL = ',"usage":null}';
/** Deltas that carry output and nothing to normalize: non-empty text, or a piece of one tool call's arguments. */
const PLAIN_DELTA = `\\{"content":${NONEMPTY_JSON_STRING}\\}|\\{"tool_calls":\\[\\{"index":(?:0|[1-9][0-9]{0,3}),"function":\\{"arguments":${JSON_STRING}\\}\\}\\]\\}`;
/**
 * The rest of an ordinary content chunk after the upstream's usual prefix: one choice whose delta is a non-empty
 * `content` string (or a tool call's next arguments), no finish reason, and only inert fields besides. Such a chunk
 * needs nothing from its parse — no error, usage, finish reason, reasoning or provider field is possible, and the
 * pattern admits valid JSON only — so it is relayed with its prefix rewritten without `JSON.parse` (~0.1 µs instead
 * of ~1.5 µs per event). Anything else takes the parsing path. Sticky: matched from `lastIndex` (the prefix length)
 * to the end.
 */
const PLAIN_CONTENT_REST = new RegExp(
  `(?:(?:${INERT_FIELD}),)*"choices":\\[\\{"index":0,"delta":(?:${PLAIN_DELTA})(?:,"logprobs":null)?,"finish_reason":null\\}\\](?:,(?:${INERT_FIELD}))*(?:,"usage":null)?\\}$`,
  'y',
);

/** `s.startsWith(prefix)`, several times faster on this V8 for a long prefix (~0.05 instead of ~0.35 µs at 100 characters). */
function hasPrefix(s: string, prefix: string): boolean {
  return s.length >= prefix.length && s.slice(0, prefix.length) === prefix;
}

/** What follows the upstream prefix in a plain content chunk, as the client gets it (without a final `usage: null`). */
export function plainChunkRest(data: string, upstreamPrefix: string): string {
  // endsWith is cheap for a short suffix (~40 ns here; unlike startsWith with a long prefix, see hasPrefix).
  return data.endsWith(USAGE_NULL_TAIL) ? `${data.slice(upstreamPrefix.length, data.length - USAGE_NULL_TAIL.length)}}` : data.slice(upstreamPrefix.length);
}

/** Whether `data` is the upstream prefix followed by a plain content chunk (see PLAIN_CONTENT_REST). */
export function isPlainContentChunk(data: string, upstreamPrefix: string): boolean {
  if (!hasPrefix(data, upstreamPrefix)) return false;
  PLAIN_CONTENT_REST.lastIndex = upstreamPrefix.length;
  return PLAIN_CONTENT_REST.test(data);
}

/**
 * The same-protocol upstream body as bytes: the client's `messages` spliced in as received when the body is the one
 * the JSON parser checked (the large part, neither re-serialized, re-encoded nor copied: undici writes the parts in
 * turn, with their total as the content-length; core/raw-json.ts), the rest serialized; else the whole body
 * serialized, encoded once here (undici would encode a string itself).
 */
function upstreamBody(body: Record<string, unknown>, out: Record<string, unknown>, headers: Record<string, string>): { body: Buffer | Buffer[]; headers: Record<string, string> } {
  const raw = out.messages === body.messages ? rawMessages(body) : null;
  if (!raw) return { body: Buffer.from(JSON.stringify(out)), headers };
  const { messages: _m, ...fields } = out;
  const parts = withRawMessages(fields, raw);
  return { body: parts, headers: { ...headers, 'content-length': String(parts.reduce((n, b) => n + b.length, 0)) } };
}

function openaiPassthrough(body: Record<string, unknown>, endpoint: EndpointDef): AttemptCodec {
  return {
    request(ctx, stream) {
      const { body: out, dropped } = openaiBody(body, endpoint, stream);
      return { req: { url: chatUrl(ctx.provider), ...upstreamBody(body, out, chatHeaders(ctx.provider, ctx.apiKey, stream)) }, dropped };
    },
    parseError: openaiError,
    parse(text) {
      let json: Record<string, unknown>;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new UpstreamError(502, 'Provider returned an invalid (non-JSON) response', 'provider_unavailable', 200, text.slice(0, 512));
      }
      if (!json || !Array.isArray(json.choices)) {
        if ((json as { error?: unknown })?.error) throw streamError(json as { error?: { message?: string } });
        throw new UpstreamError(502, 'Provider returned an invalid response (no choices)', 'provider_unavailable', 200, json);
      }
      checkChatResponse(json);
      mirrorReasoning(json.choices, 'message');
      const native = (json.choices as Array<{ finish_reason?: string }>)[0]?.finish_reason ?? null;
      const finish = normalizeChoices(json.choices);
      const raw = (json.usage as OpenAIUsage | undefined) ?? null;
      const usage = tokenUsage(raw);
      return {
        usage,
        finish,
        native,
        upstreamId: typeof json.id === 'string' ? json.id : null,
        render(meta) {
          // The parsed upstream answer is ours: fields are set in place (unknown upstream fields stay as they are).
          json.id = meta.id;
          json.object = 'chat.completion';
          json.model = meta.model;
          json.provider = meta.provider;
          json.system_fingerprint ??= null;
          json.usage = chatUsageView(usage, raw, meta);
          if (meta.gateway_metadata) json.gateway_metadata = meta.gateway_metadata;
          return json;
        },
      };
    },
    openStream(meta) {
      const events: EventSourceMessage[] = [];
      const parser = createParser({ onEvent: (ev) => events.push(ev) });
      const bound = new SseEventBound();
      let done = false;
      let raw: OpenAIUsage | null = null;
      // Chunks without output (the opening role-only one) are held until output flows: a failure before then may
      // still fall back to another endpoint without the client having seen anything.
      let held = '';
      const base = { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, provider: meta.provider };
      // Most chunks only need their id, created and model replaced and the provider added: when an event starts with
      // exactly the upstream's usual prefix, the client line is our prefix and the rest of the event, unserialized.
      const ourPrefix = chunkPrefix(meta.id, meta.created, meta.model, meta.provider);
      let upstreamPrefix: string | null = null;
      const s = {
        binary: false,
        contentStarted: false,
        failure: null as UpstreamError | null,
        producedTokens: 0,
        finish: null as string | null,
        native: null as string | null,
        upstreamId: null as string | null,
        push(input: string | Uint8Array): string {
          const text = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
          parser.feed(text);
          // One write per upstream read: every event decoded from it, in order.
          let out = '';
          try {
            bound.fed(text.length, events.length);
            for (const ev of events) {
              if (done) break;
              if (ev.data === '[DONE]') {
                done = true;
                break;
              }
              if (upstreamPrefix !== null && isPlainContentChunk(ev.data, upstreamPrefix)) {
                s.contentStarted = true;
                s.producedTokens += deltaTokens(plainDeltaChars(ev.data, upstreamPrefix.length));
                out += `${held}data: ${ourPrefix}${plainChunkRest(ev.data, upstreamPrefix)}\n\n`;
                held = '';
                continue;
              }
              let json: Record<string, unknown>;
              try {
                json = JSON.parse(ev.data) as Record<string, unknown>;
              } catch {
                throw new UpstreamError(502, 'Provider sent an invalid stream event', 'provider_unavailable', 200, ev.data.slice(0, 512));
              }
              if (json.error) throw streamError(json as { error?: { message?: string } });
              checkChatChunk(json);
              // Usage (or OpenAI's `usage: null` on every other chunk) goes only on the gateway's final chunk.
              const withUsage = json.usage !== undefined;
              if (withUsage) {
                if (json.usage) raw = json.usage as OpenAIUsage;
                delete json.usage;
              }
              if (typeof json.id === 'string') s.upstreamId = json.id;
              const choices = json.choices;
              if (!Array.isArray(choices) || choices.length === 0) continue; // usage-only chunk: folded into the final one
              const fin = (choices as Array<{ finish_reason?: string | null }>).find((c) => c.finish_reason)?.finish_reason;
              if (fin) s.native = fin;
              const mirrored = mirrorReasoning(choices, 'delta');
              const output = carriesOutput(choices);
              if (output) s.producedTokens += deltaTokens(deltaChars(choices));
              const norm = normalizeChoices(choices);
              if (norm) s.finish = norm;
              if (upstreamPrefix === null && typeof json.id === 'string' && typeof json.created === 'number' && typeof json.model === 'string') {
                upstreamPrefix = chunkPrefix(json.id, json.created, json.model);
              }
              const verbatim = norm === null && !mirrored && !withUsage && json.provider === undefined && upstreamPrefix !== null && hasPrefix(ev.data, upstreamPrefix);
              const line = verbatim ? `data: ${ourPrefix}${ev.data.slice(upstreamPrefix!.length)}\n\n` : `data: ${JSON.stringify(Object.assign(json, base))}\n\n`;
              if (!s.contentStarted && !output) {
                held += line;
                continue;
              }
              s.contentStarted = true;
              out += held + line;
              held = '';
            }
          } catch (err) {
            if (out === '') throw err;
            s.failure = err as UpstreamError;
          } finally {
            events.length = 0;
          }
          return out;
        },
        end(): string {
          if (!done) throw new UpstreamError(502, 'Provider stream ended before completion', 'provider_unavailable', 200, null);
          return '';
        },
        finishOut(m: AnswerMeta): string {
          const tail: Record<string, unknown> = { ...base, choices: [], usage: chatUsageView(tokenUsage(raw), raw, m) };
          if (m.gateway_metadata) tail.gateway_metadata = m.gateway_metadata;
          const out = `${held}data: ${JSON.stringify(tail)}\n\ndata: [DONE]\n\n`;
          held = '';
          return out;
        },
        errorOut(status: number, message: string, errorType: string, m: AnswerMeta): string {
          const chunk: Record<string, unknown> = {
            ...base,
            error: { code: status, message, metadata: { error_type: errorType } },
            choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error' }],
          };
          if (m.gateway_metadata) chunk.gateway_metadata = m.gateway_metadata;
          return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
        },
        usage: () => tokenUsage(raw),
      };
      return s;
    },
  };
}

// ---- every other pair: through the IR -----------------------------------------------------------

/** IR fields and the `supported_parameters` names that allow them. */
const IR_PARAMS: Array<[Exclude<keyof IrRequest, 'model'>, string[]]> = [
  ['temperature', ['temperature']],
  ['top_p', ['top_p']],
  ['top_k', ['top_k']],
  ['frequency_penalty', ['frequency_penalty']],
  ['presence_penalty', ['presence_penalty']],
  ['seed', ['seed']],
  ['stop', ['stop']],
  ['response_format', ['response_format', 'structured_outputs']],
  ['tools', ['tools']],
  ['tool_choice', ['tool_choice', 'tools']],
  ['parallel_tool_calls', ['parallel_tool_calls', 'tools']],
  ['reasoning', ['reasoning', 'reasoning_effort', 'include_reasoning']],
  // Image output (docs/images.md): only to endpoints that list `modalities` (image-output models).
  ['modalities', ['modalities']],
];

/** The model parameters an IR request sets, by catalog name (for routing's `require_parameters`). */
export function irParams(ir: Omit<IrRequest, 'model'>): string[] {
  const out: string[] = [];
  for (const [field, names] of IR_PARAMS) if (ir[field] !== undefined && ir[field] !== null) out.push(names[0]);
  if (ir.max_tokens !== undefined) out.push('max_tokens');
  return out;
}

/** The IR for one endpoint: its model id, and the parameters it does not support removed. */
export function irForEndpoint(ir: Omit<IrRequest, 'model'>, endpoint: EndpointDef, stream: boolean): { ir: IrRequest; dropped: string[] } {
  const out: IrRequest = { ...ir, model: endpoint.upstreamModel, stream };
  const dropped: string[] = [];
  for (const [field, names] of IR_PARAMS) {
    if (out[field] === undefined) continue;
    if (!names.some((n) => endpoint.supported_parameters.includes(n))) {
      delete out[field];
      dropped.push(names[0]);
    }
  }
  return { ir: out, dropped: [...new Set(dropped)] };
}

const REASONING_EVENTS = new Set(['reasoning_delta', 'reasoning_signature', 'redacted_reasoning']);
const CONTENT_EVENTS = new Set(['text_delta', 'reasoning_delta', 'reasoning_signature', 'redacted_reasoning', 'refusal_delta', 'tool_call_start', 'tool_call_delta', 'image']);

function withoutReasoning(res: IrResponse): IrResponse {
  return { ...res, content: res.content.filter((p: IrPart) => p.type !== 'reasoning' && p.type !== 'redacted_reasoning') };
}

/** The client body, passed through to an upstream that speaks the same protocol (`raw`: its large field as received). */
function passthroughBody(body: Record<string, unknown>, endpoint: EndpointDef, stream: boolean, extraDrop: string[], raw = false): string | Buffer[] {
  const out: Record<string, unknown> = {};
  for (const k in body) {
    if (GATEWAY_FIELDS.has(k) && k !== 'messages' && k !== 'stream') continue;
    if (extraDrop.includes(k)) continue;
    if (MODEL_PARAMS.has(k) && !endpoint.supported_parameters.includes(k) && k !== 'max_tokens') continue;
    out[k] = body[k];
  }
  out.model = endpoint.upstreamModel;
  out.stream = stream;
  if (Array.isArray(out.messages)) out.messages = withoutGatewayThinking(out.messages);
  return raw ? spliceRaw(body, out, out.messages !== undefined ? 'messages' : 'input') : JSON.stringify(out);
}

/**
 * Anthropic messages without the thinking blocks the gateway signed (core/reasoning-signature.ts): Anthropic verifies
 * its own signatures only, and accepts earlier turns without their thinking. The same array when there is none.
 */
export function withoutGatewayThinking(messages: unknown[]): unknown[] {
  const signed = (b: unknown) => typeof b === 'object' && b !== null && (b as { type?: unknown }).type === 'thinking' && isGatewaySignature((b as { signature?: unknown }).signature);
  const has = (m: unknown) => typeof m === 'object' && m !== null && Array.isArray((m as { content?: unknown }).content) && ((m as { content: unknown[] }).content).some(signed);
  if (!messages.some(has)) return messages;
  return messages.map((m) => (has(m) ? { ...(m as object), content: (m as { content: unknown[] }).content.filter((b) => !signed(b)) } : m));
}

function irCodec(api: InboundApi, body: Record<string, unknown>, ir: Omit<IrRequest, 'model'>, endpoint: EndpointDef, upstream: UpstreamAdapter, filters: CompiledFilter[] | null, healing: (() => StreamHealer) | null): AttemptCodec {
  const inbound = INBOUND[api];
  const exclude = ir.reasoning?.exclude === true;
  const request = api === 'responses' ? body : undefined;
  // Same protocol on both sides: the body passes through (Anthropic needs max_tokens, so only when the client sent it).
  const passthrough = (api === 'messages' && upstream.protocol === 'anthropic' && typeof body.max_tokens === 'number') || (api === 'responses' && upstream.protocol === 'openai-responses');
  return {
    request(ctx, stream) {
      const { ir: forEndpoint, dropped } = irForEndpoint(ir, endpoint, stream);
      // Passing through, the IR's messages are not serialized only to be replaced: the request's URL and headers do not
      // depend on them (issue 18: a 1 MB conversation was serialized twice).
      const req: AttemptRequest = upstream.buildRequest(passthrough ? { ...forEndpoint, messages: [] } : forEndpoint, ctx);
      if (passthrough) {
        // The client's `messages` (`input`) bytes as received when the body is the parsed one (core/raw-json.ts); a
        // signed request (authorize) keeps a string body.
        const sent = passthroughBody(body, endpoint, stream, api === 'messages' ? ['fallbacks', 'models'] : ['models'], upstream.authorize === undefined);
        req.body = sent;
        if (typeof sent !== 'string') req.headers = { ...req.headers, 'content-length': String(partsLength(sent)) };
      }
      // What the IR could not carry reaches a same-protocol upstream only (X-Gateway-Dropped-Fields lists it otherwise).
      else if (ir.dropped_fields) dropped.push(...ir.dropped_fields);
      return { req, dropped };
    },
    // The adapters' requests (`request` above) have string bodies: what reaches authorize is one of them.
    ...(upstream.authorize ? { authorize: (req: AttemptRequest, ctx: UpstreamContext) => upstream.authorize!(req as UpstreamHttpRequest, ctx) } : {}),
    parseError: (status, text, headers) => upstream.parseError(status, text, headers),
    parse(text) {
      let res = upstream.parseResponse(text);
      if (exclude) res = withoutReasoning(res);
      return {
        usage: irToTokens(res.usage),
        finish: res.finish_reason,
        native: res.native_finish_reason,
        upstreamId: res.id,
        render: (meta) => (api === 'responses' ? responsesInbound.fromIr(res, meta, request) : inbound.fromIr(res, meta)),
      };
    },
    openStream(meta) {
      const decoder = upstream.createStreamDecoder();
      const encoder = api === 'responses' ? responsesInbound.createStreamEncoder(meta, request) : inbound.createStreamEncoder(meta);
      let usage: IrUsage | null = null;
      let pending: IrStreamEvent[] = [];
      // Content guardrails on the output (core/content-filters/ir-stream.ts): deltas redacted as they pass.
      const guard = filters ? new IrStreamGuard(filters) : null;
      // response-healing (services/plugins/healing.ts): after the guardrails, on what the client receives.
      const healer = healing ? healing() : null;
      const s = {
        binary: decoder.pushBytes !== undefined,
        get blocked() {
          return guard?.blocked ?? null;
        },
        outputPipeline: () => [...(guard?.pipeline() ?? []), ...(healer?.pipeline() ?? [])],
        contentStarted: false,
        failure: null as UpstreamError | null,
        producedTokens: 0,
        finish: null as string | null,
        native: null as string | null,
        upstreamId: null as string | null,
        /** Output produced upstream, counted before the guardrails hold back or drop any (what a cut stream bills). */
        count(events: IrStreamEvent[]): IrStreamEvent[] {
          for (const ev of events) if (CONTENT_EVENTS.has(ev.type)) s.producedTokens += deltaTokens(irDeltaChars(ev));
          return events;
        },
        handle(events: IrStreamEvent[]): string {
          let out = '';
          for (const ev of events) {
            switch (ev.type) {
              case 'error': {
                const err = new UpstreamError(ev.status, ev.message, ev.error_type as UpstreamError['type'], null, ev.raw ?? null);
                if (out === '') throw err;
                s.failure = err;
                return out;
              }
              case 'usage':
                usage = ev.usage;
                continue; // reported once, by finishOut
              case 'start':
                s.upstreamId = ev.id;
                break;
              case 'finish':
                s.finish = ev.finish_reason;
                s.native = ev.native_finish_reason;
                break;
            }
            if (exclude && REASONING_EVENTS.has(ev.type)) continue;
            if (!s.contentStarted) {
              // Nothing goes to the client before content: a failure until then may still fall back.
              pending.push(ev);
              if (!CONTENT_EVENTS.has(ev.type)) continue;
              s.contentStarted = true;
              out += encoder.start();
              for (const p of pending) out += encoder.event(p);
              pending = [];
              continue;
            }
            out += encoder.event(ev);
          }
          return out;
        },
        push(input: string | Uint8Array): string {
          let events: IrStreamEvent[];
          try {
            events = typeof input === 'string' ? decoder.push(input) : decoder.pushBytes!(input);
          } catch (err) {
            throw err instanceof UpstreamError ? err : new UpstreamError(502, 'Provider sent an invalid stream', 'provider_unavailable', 200, String(err));
          }
          const out = guard ? guard.events(s.count(events)) : s.count(events);
          return s.handle(healer && !guard?.blocked ? healer.events(out) : out);
        },
        end(): string {
          const events = s.count(decoder.end());
          const out = guard ? [...guard.events(events), ...guard.end()] : events;
          return s.handle(healer && !guard?.blocked ? [...healer.events(out), ...healer.end()] : out);
        },
        finishOut(m: AnswerMeta): string {
          let out = '';
          if (!s.contentStarted) {
            out += encoder.start();
            for (const p of pending) out += encoder.event(p);
            pending = [];
          }
          return out + encoder.finish(usage, m);
        },
        errorOut(status: number, message: string, errorType: string, m: AnswerMeta): string {
          return encoder.error(status, message, errorType, m);
        },
        usage: () => irToTokens(usage),
      };
      return s;
    },
  };
}

// ---- output counted (cut streams) ------------------------------------------------------------------

/** Characters of a plain content chunk's delta (PLAIN_CONTENT_REST matched): from `"delta":` to the logprobs or finish reason. */
function plainDeltaChars(data: string, from: number): number {
  const start = data.indexOf('"delta":{', from);
  const fin = data.lastIndexOf(',"finish_reason":null');
  const logprobs = data.lastIndexOf(',"logprobs":null', fin);
  const end = logprobs > start ? logprobs : fin;
  // `"delta":{"content":"` and `"}` around the text (a tool call's framing counts a few characters more).
  return start < 0 || end < start ? 0 : end - start - 22;
}

/** Tokens of a delta of `chars` characters: a quarter, at least one (an output event carries at least one token). */
const deltaTokens = (chars: number) => Math.max(1, Math.ceil(chars / 4));

/** Characters of output in OpenAI chunk choices: content, reasoning, refusal, tool-call arguments. */
function deltaChars(choices: unknown[]): number {
  let n = 0;
  for (const c of choices as Array<{ delta?: Record<string, unknown> | null }>) {
    const d = c?.delta;
    if (!d) continue;
    for (const k of ['content', 'reasoning', 'reasoning_content', 'refusal']) if (typeof d[k] === 'string') n += (d[k] as string).length;
    if (Array.isArray(d.tool_calls)) for (const t of d.tool_calls as Array<{ function?: { name?: unknown; arguments?: unknown } }>) n += String(t?.function?.arguments ?? '').length + String(t?.function?.name ?? '').length;
  }
  return n;
}

/** Characters of output in an IR stream event. */
function irDeltaChars(ev: IrStreamEvent): number {
  const e = ev as { text?: unknown; arguments?: unknown; name?: unknown; delta?: unknown };
  return [e.text, e.arguments, e.name, e.delta].reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 0), 0);
}

/** The codec for one attempt. `ir` is required unless the pair is chat → OpenAI protocol. */
/** The `X-Gateway-Dropped-Fields` header of an answer: what the serving attempt dropped (docs/chat.md), if anything. */
export function droppedFieldsHeader(dropped: string[] | undefined): Record<string, string> {
  return dropped && dropped.length > 0 ? { 'x-gateway-dropped-fields': dropped.join(', ').replace(/[^\x20-\x7e]/g, '?').slice(0, 4000) } : {};
}

/**
 * `outputFilters`: content guardrails on a streamed reply — the stream then goes through the IR (also chat → OpenAI
 * protocol), where text deltas are redacted as they pass. `outputHealing`: the response-healing plugin on a streamed
 * reply (services/plugins/healing.ts), in the IR as well.
 */
export function codecFor(api: InboundApi, body: Record<string, unknown>, ir: Omit<IrRequest, 'model'> | null, endpoint: EndpointDef, protocol: Protocol, outputFilters: CompiledFilter[] | null = null, outputHealing: (() => StreamHealer) | null = null): AttemptCodec {
  if (api === 'chat' && protocol === 'openai' && !outputFilters && !outputHealing) return openaiPassthrough(body, endpoint);
  if (!ir) throw new Error('IR request missing for a translated attempt');
  return irCodec(api, body, ir, endpoint, chatAdapter(protocol), outputFilters, outputHealing);
}
