/**
 * OpenAI Chat Completions as an upstream protocol, through the IR: IR request → `POST {baseUrl}/chat/completions`
 * body, chat completion → IR response, SSE chunks → IR stream events. Works for OpenAI and for every
 * OpenAI-compatible server (vLLM, Together, Groq, DeepSeek, OpenRouter-style hubs, the simulator).
 *
 * Mapping choices (documented because they lose or add information):
 * - System parts become ONE `system` message (or `developer`, see ChatBodyOptions): a string when there is a single
 *   part, an array of text parts otherwise.
 * - `cache_control` marks are dropped unless ChatBodyOptions.cacheControl is set (OpenAI caches implicitly and
 *   strict OpenAI-compatible servers reject unknown part fields).
 * - Reasoning kept in the history is sent OpenRouter-style on the assistant message: `reasoning` (the text) and
 *   `reasoning_details[]` (`reasoning.text` with its signature, `reasoning.summary`, `reasoning.encrypted` for
 *   redacted reasoning), so hubs that forward it to Anthropic/Gemini keep the signatures. Plain OpenAI ignores it.
 * - A user message holding tool results becomes `role:"tool"` messages (in order) followed by a user message for the
 *   remaining parts. Images inside a tool result (chat has no images in tool messages) go into that user message.
 *   `is_error` has no chat equivalent and is dropped.
 * - `max_tokens` is sent as `max_completion_tokens`, or as `max_tokens` when the endpoint lists only that name.
 * - `reasoning.effort` becomes `reasoning_effort` (`max` → `xhigh`; `enabled:false` → `none`; `enabled:true` alone → `medium`).
 * - Streams always ask for `stream_options.include_usage`.
 * - `modalities` is sent as is; generated images (`message.images` / `delta.images` data URLs, the hosted router's
 *   shape) come back as IR image parts / events.
 */
import { SseParser } from '../sse.js';
import { checkChatChunk, checkChatResponse } from './schemas.js';
import { systemTexts } from '../../core/system-turns.js';
import { normalizeFinishReason } from '../../core/chat-shape.js';
import type {
  IrFinishReason,
  IrImage,
  IrMessage,
  IrPart,
  IrRequest,
  IrResponse,
  IrStreamEvent,
  IrText,
  IrToolResult,
  IrUsage,
} from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import type { StreamDecoder, UpstreamAdapter, UpstreamContext } from '../../core/adapters.js';
import { chatHeaders, chatUrl, openaiError, streamError, tokenUsage, type OpenAIUsage } from './chat.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

// ------------------------------------------------------------------------------------------------ shared helpers

/** OpenAI usage → IR usage (prompt includes cached tokens, completion includes reasoning), or null. */
export function irUsageFromOpenAI(u: unknown): IrUsage | null {
  const t = tokenUsage(isObj(u) ? (u as OpenAIUsage) : null);
  if (!t) return null;
  return {
    input: t.promptTokens,
    output: t.completionTokens,
    cache_read: t.cachedReadTokens ?? 0,
    cache_write: t.cacheWriteTokens ?? 0,
    reasoning: t.reasoningTokens ?? 0,
  };
}

/** A finish reason as the IR's (normalized; unknown values become `stop`). */
export function irFinish(native: unknown, hasToolCalls: boolean): IrFinishReason {
  const n = normalizeFinishReason(native);
  if (n === null) return hasToolCalls ? 'tool_calls' : 'stop';
  return n as IrFinishReason;
}

/** An image part as a URL (`data:` URL for inline data). */
export function imageUrl(img: IrImage): string {
  if (img.url) return img.url;
  return `data:${img.media_type ?? 'image/png'};base64,${img.data ?? ''}`;
}

/**
 * `max` is not an OpenAI effort; `xhigh` is the closest. `enabled: true` alone (OpenRouter's "enable reasoning with the
 * default parameters", Anthropic's `thinking: enabled`) is OpenAI's default effort, `medium`: without it an OpenAI
 * upstream would not be asked to reason at all.
 */
export function openaiEffort(req: IrRequest): string | undefined {
  const r = req.reasoning;
  if (!r) return undefined;
  if (r.effort) return r.effort === 'max' ? 'xhigh' : r.effort;
  if (r.enabled === false) return 'none';
  if (r.enabled === true) return 'medium';
  return undefined;
}

/** A 502 for an answer that is not a valid response. */
export function invalidResponse(message: string, raw: unknown): UpstreamError {
  return new UpstreamError(502, message, 'provider_unavailable', 200, raw);
}

/** A 2xx body parsed as a JSON object; a 502 (`invalidResponse`) for a body that is not JSON or not an object. */
export function parseJsonObject(text: string): Obj {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalidResponse('Provider returned an invalid (non-JSON) response', text.slice(0, 512));
  }
  if (!isObj(json)) throw invalidResponse('Provider returned an invalid response', json);
  return json;
}

/** A token count an upstream reported: a non-negative integer, else null. */
export function tokenCount(v: unknown): number | null {
  return Number.isInteger(v) && (v as number) >= 0 ? (v as number) : null;
}

/** The data of one stream event parsed as JSON; a 502 (`invalidResponse`) for data that is not JSON. */
export function parseStreamData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw invalidResponse('Provider sent an invalid stream event', data.slice(0, 512));
  }
}

// ------------------------------------------------------------------------------------------------ IR → chat body

export interface ChatBodyOptions {
  /** Role of the system message; `developer` for reasoning models that want it. Default `system`. */
  systemRole?: 'system' | 'developer';
  /** Keep `cache_control` marks on content parts and tools (for hubs that forward them). Default false. */
  cacheControl?: boolean;
  /** Send the output limit as `max_tokens` instead of `max_completion_tokens`. Default false. */
  legacyMaxTokens?: boolean;
  /** Send `reasoning` / `reasoning_details` on assistant messages. Default true. */
  reasoningHistory?: boolean;
}

function textPart(p: IrText, cc: boolean): Obj {
  return cc && p.cache_control ? { type: 'text', text: p.text, cache_control: p.cache_control } : { type: 'text', text: p.text };
}

function imagePart(p: IrImage, cc: boolean): Obj {
  const image_url: Obj = { url: imageUrl(p) };
  if (p.detail) image_url.detail = p.detail;
  const out: Obj = { type: 'image_url', image_url };
  if (cc && p.cache_control) out.cache_control = p.cache_control;
  return out;
}

/** Text parts as a chat `content`: a plain string when nothing else needs the array form. */
function textContent(parts: IrText[], cc: boolean): string | Obj[] {
  if (parts.length === 1 && !(cc && parts[0].cache_control)) return parts[0].text;
  return parts.map((p) => textPart(p, cc));
}

function userContent(parts: Array<IrText | IrImage>, cc: boolean): string | Obj[] {
  if (parts.every((p) => p.type === 'text')) return textContent(parts as IrText[], cc);
  return parts.map((p) => (p.type === 'text' ? textPart(p, cc) : imagePart(p, cc)));
}

function toolMessage(p: IrToolResult, cc: boolean): { tool: Obj; images: IrImage[] } {
  let content: string | Obj[];
  const images: IrImage[] = [];
  if (typeof p.content === 'string') content = cc && p.cache_control ? [{ type: 'text', text: p.content, cache_control: p.cache_control }] : p.content;
  else {
    const texts: IrText[] = [];
    for (const c of p.content) (c.type === 'text' ? texts : images).push(c as never);
    content = texts.length === 0 ? '' : textContent(texts, cc);
  }
  return { tool: { role: 'tool', tool_call_id: p.tool_call_id, content }, images };
}

/** OpenRouter-style `reasoning_details` of the reasoning parts of a message. */
export function reasoningDetails(parts: IrPart[]): Obj[] {
  const out: Obj[] = [];
  for (const p of parts) {
    if (p.type === 'reasoning') {
      const index = out.length;
      if (p.summary) out.push({ type: 'reasoning.summary', summary: p.text, index });
      else out.push({ type: 'reasoning.text', text: p.text, ...(p.signature !== undefined ? { signature: p.signature } : {}), index });
    } else if (p.type === 'redacted_reasoning') out.push({ type: 'reasoning.encrypted', data: p.data, index: out.length });
  }
  return out;
}

function userMessages(m: IrMessage, cc: boolean): Obj[] {
  const out: Obj[] = [];
  let pending: Array<IrText | IrImage> = [];
  const flush = () => {
    if (pending.length === 0) return;
    const msg: Obj = { role: 'user', content: userContent(pending, cc) };
    if (m.name) msg.name = m.name;
    out.push(msg);
    pending = [];
  };
  for (const p of m.content) {
    if (p.type === 'tool_result') {
      flush();
      const { tool, images } = toolMessage(p, cc);
      out.push(tool);
      pending.push(...images);
    } else if (p.type === 'text' || p.type === 'image') pending.push(p);
    // Other part types have no meaning on the user side of a chat and are skipped.
  }
  flush();
  if (m.content.length === 0) out.push(m.name ? { role: 'user', content: '', name: m.name } : { role: 'user', content: '' });
  return out;
}

function assistantMessage(m: IrMessage, cc: boolean, reasoningHistory: boolean): Obj {
  const texts: IrText[] = [];
  const refusals: string[] = [];
  const toolCalls: Obj[] = [];
  for (const p of m.content) {
    if (p.type === 'text') texts.push(p);
    else if (p.type === 'refusal') refusals.push(p.text);
    else if (p.type === 'tool_call') toolCalls.push({ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments } });
  }
  const msg: Obj = { role: 'assistant', content: texts.length === 0 ? null : cc && texts.some((t) => t.cache_control) ? textContent(texts, cc) : texts.map((t) => t.text).join('') };
  if (m.name) msg.name = m.name;
  if (refusals.length > 0) msg.refusal = refusals.join('');
  if (toolCalls.length > 0) msg.tool_calls = toolCalls;
  if (reasoningHistory) {
    const details = reasoningDetails(m.content);
    if (details.length > 0) {
      const text = m.content.flatMap((p) => (p.type === 'reasoning' ? [p.text] : [])).join('');
      if (text) msg.reasoning = text;
      msg.reasoning_details = details;
    }
  }
  if (msg.content === null && toolCalls.length === 0 && refusals.length === 0) msg.content = '';
  return msg;
}

/** The chat completions body of an IR request. */
export function buildChatBody(req: IrRequest, opts: ChatBodyOptions = {}): Obj {
  const cc = opts.cacheControl === true;
  const messages: Obj[] = [];
  if (req.system.length > 0) messages.push({ role: opts.systemRole ?? 'system', content: textContent(req.system, cc) });
  for (const m of req.messages) {
    if (m.role === 'user') messages.push(...userMessages(m, cc));
    else if (m.role === 'system') {
      // A mid-conversation system turn: a system (or developer) message in place.
      const texts = systemTexts(m);
      if (texts.length > 0) messages.push({ role: opts.systemRole ?? 'system', content: textContent(texts, cc) });
    } else messages.push(assistantMessage(m, cc, opts.reasoningHistory !== false));
  }
  const body: Obj = { model: req.model, messages };
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((t) => {
      const fn: Obj = { name: t.name };
      if (t.description !== undefined) fn.description = t.description;
      fn.parameters = t.parameters;
      if (t.strict !== undefined) fn.strict = t.strict;
      const tool: Obj = { type: 'function', function: fn };
      if (cc && t.cache_control) tool.cache_control = t.cache_control;
      return tool;
    });
  }
  if (req.tool_choice) {
    body.tool_choice = req.tool_choice.type === 'tool' ? { type: 'function', function: { name: req.tool_choice.name } } : req.tool_choice.type;
  }
  if (req.parallel_tool_calls !== undefined) body.parallel_tool_calls = req.parallel_tool_calls;
  if (req.max_tokens !== undefined) body[opts.legacyMaxTokens ? 'max_tokens' : 'max_completion_tokens'] = req.max_tokens;
  for (const k of ['temperature', 'top_p', 'top_k', 'frequency_penalty', 'presence_penalty', 'seed'] as const) {
    if (req[k] !== undefined) body[k] = req[k];
  }
  if (req.stop && req.stop.length > 0) body.stop = req.stop;
  const rf = req.response_format;
  if (rf) {
    if (rf.type === 'json_schema') {
      const js: Obj = { name: rf.name, schema: rf.schema };
      if (rf.strict !== undefined) js.strict = rf.strict;
      if (rf.description !== undefined) js.description = rf.description;
      body.response_format = { type: 'json_schema', json_schema: js };
    } else body.response_format = { type: rf.type };
  }
  const effort = openaiEffort(req);
  if (effort) body.reasoning_effort = effort;
  if (req.user !== undefined) body.user = req.user;
  if (req.modalities) body.modalities = req.modalities;
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

// ------------------------------------------------------------------------------------------------ chat answer → IR

/** IR parts of `reasoning_details` entries (OpenRouter format). */
function partsOfDetails(details: unknown[]): IrPart[] {
  const out: IrPart[] = [];
  for (const d of details) {
    if (!isObj(d)) continue;
    if (d.type === 'reasoning.text') {
      const part: IrPart = { type: 'reasoning', text: str(d.text) ?? '' };
      if (typeof d.signature === 'string') part.signature = d.signature;
      out.push(part);
    } else if (d.type === 'reasoning.summary') out.push({ type: 'reasoning', text: str(d.summary) ?? '', summary: true });
    else if (d.type === 'reasoning.encrypted' && typeof d.data === 'string') out.push({ type: 'redacted_reasoning', data: d.data });
  }
  return out;
}

/** Text of a `content` that some compatible servers send as an array of parts. */
function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

function argsText(a: unknown): string {
  if (typeof a === 'string') return a;
  return a === undefined || a === null ? '' : JSON.stringify(a);
}

/** Generated images of a chat answer or delta (`images[]` of base64 data URLs, the hosted router's shape) as IR parts. */
function generatedImages(v: unknown): IrImage[] {
  const out: IrImage[] = [];
  if (!Array.isArray(v)) return out;
  for (const img of v) {
    const url = isObj(img) && isObj(img.image_url) ? str(img.image_url.url) : undefined;
    const m = url ? /^data:([^;,]+);base64,(.+)$/s.exec(url) : null;
    if (m) out.push({ type: 'image', data: m[2], media_type: m[1] });
  }
  return out;
}

/** A 2xx chat completion body as an IR response; throws UpstreamError for an error body or an invalid answer. */
export function parseChatResponse(text: string): IrResponse {
  const body = parseJsonObject(text);
  if (!Array.isArray(body.choices)) {
    if (body.error) throw streamError(body as { error?: { message?: string } });
    throw invalidResponse('Provider returned an invalid response (no choices)', body);
  }
  const json = checkChatResponse(body) as Obj & { choices: unknown[] };
  const choice = json.choices.find((c) => isObj(c) && (c.index === 0 || c.index === undefined)) ?? json.choices[0];
  if (!isObj(choice)) throw invalidResponse('Provider returned an invalid response (no choices)', json);
  const msg = isObj(choice.message) ? choice.message : {};
  const content: IrPart[] = [];
  if (Array.isArray(msg.reasoning_details) && msg.reasoning_details.length > 0) content.push(...partsOfDetails(msg.reasoning_details));
  else {
    const r = str(msg.reasoning) ?? str(msg.reasoning_content);
    if (r) content.push({ type: 'reasoning', text: r });
  }
  const t = contentText(msg.content);
  if (t) content.push({ type: 'text', text: t });
  if (typeof msg.refusal === 'string' && msg.refusal) content.push({ type: 'refusal', text: msg.refusal });
  content.push(...generatedImages(msg.images));
  let calls = 0;
  if (Array.isArray(msg.tool_calls)) {
    for (const tc of msg.tool_calls) {
      if (!isObj(tc)) continue;
      const fn = isObj(tc.function) ? tc.function : {};
      content.push({ type: 'tool_call', id: str(tc.id) ?? `call_${calls}`, name: str(fn.name) ?? '', arguments: argsText(fn.arguments) });
      calls++;
    }
  } else if (isObj(msg.function_call)) {
    content.push({ type: 'tool_call', id: 'call_0', name: str(msg.function_call.name) ?? '', arguments: argsText(msg.function_call.arguments) });
    calls++;
  }
  const native = choice.finish_reason;
  return {
    id: str(json.id) ?? null,
    model: str(json.model) ?? null,
    content,
    finish_reason: irFinish(native, calls > 0),
    native_finish_reason: typeof native === 'string' ? native : null,
    usage: irUsageFromOpenAI(json.usage),
    service_tier: str(json.service_tier) ?? null,
    system_fingerprint: str(json.system_fingerprint) ?? null,
  };
}

// ------------------------------------------------------------------------------------------------ stream decoder

interface ToolState {
  /** IR index, once started. */
  index: number | null;
  id: string | null;
  name: string | null;
  /** Arguments received before the call could start (no name yet). */
  buffered: string;
}

/**
 * Decoder of an OpenAI chat completions stream. IR indexes: one for the text, one for the reasoning (per
 * `reasoning_details` index and kind), one for the refusal, one per tool call, allocated in order of appearance.
 * `usage` is emitted once, at `[DONE]`, from the last chunk that carried it. An in-stream `{error}` becomes an
 * IR `error` event and ends decoding. Invalid JSON in an event throws UpstreamError (502).
 */
export class ChatStreamDecoder implements StreamDecoder {
  private readonly sse = new SseParser();
  private next = 0;
  private started = false;
  private finished = false;
  private done = false;
  private errored = false;
  private usage: IrUsage | null = null;
  private readonly slots = new Map<string, number>();
  private readonly open: number[] = [];
  private readonly tools = new Map<number, ToolState>();
  private lastTool: number | null = null;
  private sawToolCall = false;

  push(text: string): IrStreamEvent[] {
    if (this.done || this.errored) return [];
    const out: IrStreamEvent[] = [];
    for (const ev of this.sse.feed(text)) {
      if (this.done || this.errored) break;
      this.onData(ev.data, out);
    }
    return out;
  }

  end(): IrStreamEvent[] {
    const out: IrStreamEvent[] = [];
    if (!this.done && !this.errored) for (const ev of this.sse.flush()) if (!this.done && !this.errored) this.onData(ev.data, out);
    if (this.errored) return out;
    if (!this.done) throw new UpstreamError(502, 'Provider stream ended before completion', 'provider_unavailable', 200, null);
    return out;
  }

  private slot(key: string): { index: number; fresh: boolean } {
    const have = this.slots.get(key);
    if (have !== undefined) return { index: have, fresh: false };
    const index = this.next++;
    this.slots.set(key, index);
    this.open.push(index);
    return { index, fresh: true };
  }

  private onData(data: string, out: IrStreamEvent[]): void {
    if (data === '[DONE]') {
      this.closeParts(out);
      if (!this.finished) {
        this.finished = true;
        out.push({ type: 'finish', finish_reason: this.sawToolCall ? 'tool_calls' : 'stop', native_finish_reason: null });
      }
      if (this.usage) out.push({ type: 'usage', usage: this.usage });
      this.done = true;
      return;
    }
    const json = parseStreamData(data);
    if (!isObj(json)) return;
    if (json.error) {
      const e = streamError(json as { error?: { message?: string } });
      this.errored = true;
      out.push({ type: 'error', status: e.status, message: e.message, error_type: e.type, raw: json });
      return;
    }
    checkChatChunk(json);
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: str(json.id) ?? null, model: str(json.model) ?? null });
    }
    const u = irUsageFromOpenAI(json.usage);
    if (u) this.usage = u;
    if (!Array.isArray(json.choices) || this.finished) return;
    for (const c of json.choices) {
      if (!isObj(c) || (c.index !== undefined && c.index !== 0)) continue;
      if (isObj(c.delta)) this.onDelta(c.delta, out);
      const fin = c.finish_reason;
      if (fin !== null && fin !== undefined) {
        this.closeParts(out);
        this.finished = true;
        out.push({ type: 'finish', finish_reason: irFinish(fin, this.sawToolCall), native_finish_reason: typeof fin === 'string' ? fin : null });
      }
    }
  }

  private onDelta(d: Obj, out: IrStreamEvent[]): void {
    // Reasoning: `reasoning_details` when present (it repeats `reasoning`), else `reasoning` / `reasoning_content`.
    if (Array.isArray(d.reasoning_details) && d.reasoning_details.length > 0) {
      for (const det of d.reasoning_details) {
        if (!isObj(det)) continue;
        const di = typeof det.index === 'number' ? det.index : 0;
        if (det.type === 'reasoning.text' || det.type === 'reasoning.summary') {
          const text = str(det.type === 'reasoning.text' ? det.text : det.summary) ?? '';
          const sig = str(det.signature);
          if (!text && !sig) continue;
          const { index } = this.slot(`r${di}`);
          if (text) out.push({ type: 'reasoning_delta', index, text });
          if (sig) out.push({ type: 'reasoning_signature', index, signature: sig });
        } else if (det.type === 'reasoning.encrypted' && typeof det.data === 'string') {
          const { index } = this.slot(`e${di}:${this.next}`);
          out.push({ type: 'redacted_reasoning', index, data: det.data });
        }
      }
    } else {
      const r = str(d.reasoning) || str(d.reasoning_content);
      if (r) out.push({ type: 'reasoning_delta', index: this.slot('r0').index, text: r });
    }
    const text = contentText(d.content);
    if (text) out.push({ type: 'text_delta', index: this.slot('text').index, text });
    if (typeof d.refusal === 'string' && d.refusal) out.push({ type: 'refusal_delta', index: this.slot('refusal').index, text: d.refusal });
    for (const img of generatedImages(d.images)) out.push({ type: 'image', index: this.next++, data: img.data!, media_type: img.media_type ?? 'image/png' });
    if (Array.isArray(d.tool_calls)) {
      for (const tc of d.tool_calls) if (isObj(tc)) this.onToolDelta(tc, out);
    } else if (isObj(d.function_call)) this.onToolDelta({ index: 0, id: 'call_0', function: d.function_call }, out);
  }

  private onToolDelta(tc: Obj, out: IrStreamEvent[]): void {
    const fn = isObj(tc.function) ? tc.function : {};
    const id = str(tc.id) || null;
    let key: number;
    if (typeof tc.index === 'number') key = tc.index;
    else {
      // Servers that omit `index`: a new id starts a new call, otherwise the last call continues.
      const existing = id ? [...this.tools.entries()].find(([, t]) => t.id === id)?.[0] : undefined;
      key = existing ?? (id || this.lastTool === null ? this.tools.size : this.lastTool);
    }
    this.lastTool = key;
    let st = this.tools.get(key);
    if (!st) this.tools.set(key, (st = { index: null, id: null, name: null, buffered: '' }));
    if (id && !st.id) st.id = id;
    const name = str(fn.name);
    if (name && !st.name) st.name = name;
    const args = argsText(fn.arguments);
    this.sawToolCall = true;
    if (st.index === null) {
      st.buffered += args;
      if (st.name) this.startTool(key, st, out);
      return;
    }
    if (args) out.push({ type: 'tool_call_delta', index: st.index, arguments: args });
  }

  private startTool(key: number, st: ToolState, out: IrStreamEvent[]): void {
    const { index } = this.slot(`tool${key}`);
    st.index = index;
    out.push({ type: 'tool_call_start', index, id: st.id ?? `call_${key}`, name: st.name ?? '' });
    if (st.buffered) out.push({ type: 'tool_call_delta', index, arguments: st.buffered });
    st.buffered = '';
  }

  private closeParts(out: IrStreamEvent[]): void {
    // Calls whose name never came still start, so that their arguments are not lost.
    for (const [key, st] of this.tools) if (st.index === null) this.startTool(key, st, out);
    for (const index of this.open.splice(0)) out.push({ type: 'part_end', index });
  }
}

// ------------------------------------------------------------------------------------------------ adapter

export function buildChatRequest(req: IrRequest, ctx: UpstreamContext, opts: ChatBodyOptions = {}) {
  const sp = ctx.endpoint.supported_parameters;
  const legacyMaxTokens = opts.legacyMaxTokens ?? (sp.includes('max_tokens') && !sp.includes('max_completion_tokens'));
  return {
    url: chatUrl(ctx.provider),
    headers: chatHeaders(ctx.provider, ctx.apiKey, req.stream),
    body: JSON.stringify(buildChatBody(req, { ...opts, legacyMaxTokens })),
  };
}

export const openaiChatAdapter: UpstreamAdapter = {
  protocol: 'openai',
  buildRequest: (req, ctx) => buildChatRequest(req, ctx),
  parseResponse: parseChatResponse,
  parseError: openaiError,
  createStreamDecoder: () => new ChatStreamDecoder(),
};
