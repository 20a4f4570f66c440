/**
 * The client-facing chat completions API (OpenAI shape, OpenRouter extensions) through the IR: a validated chat body
 * → IR request, an IR response → chat completion body, IR stream events → `chat.completion.chunk` SSE.
 *
 * Mapping choices:
 * - `system` and `developer` messages, wherever they appear, become the IR system parts in order (cache marks kept).
 * - `tool` messages become user `tool_result` parts; consecutive tool messages share one IR user message.
 * - `image_url` parts: `data:` URLs are split into base64 data + media type, other URLs kept as URLs. Content part
 *   types the IR cannot carry (audio, files) are dropped.
 * - Assistant `reasoning_details` (`reasoning.text` with signature, `reasoning.summary`, `reasoning.encrypted`) become
 *   reasoning / redacted parts; a bare `reasoning` string is used only when there are no details.
 * - Non-function tools (server tools) are left to the gateway and not put in the IR.
 * - In answers, `reasoning` is the concatenated reasoning text (null when none) and `reasoning_details` lists every
 *   reasoning part with its signature, redacted reasoning as `reasoning.encrypted`.
 * - Stream tool-call `index` counts tool calls only (0, 1, …), whatever the IR part indexes are.
 * - The encoder does not mask error messages: the caller passes the message it wants the client to see.
 */
import type {
  IrImage,
  IrMessage,
  IrPart,
  IrReasoningConfig,
  IrRequest,
  IrResponse,
  IrResponseFormat,
  IrStreamEvent,
  IrText,
  IrTool,
  IrToolCall,
  IrToolChoice,
  IrToolResult,
  IrUsage,
  CacheControl,
} from '../../core/ir.js';
import type { AnswerMeta, StreamEncoder } from '../../core/adapters.js';
import { reasoningDetails } from './ir-upstream.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

// ------------------------------------------------------------------------------------------------ chat body → IR

function cacheControl(v: unknown): CacheControl | undefined {
  if (!isObj(v) || v.type !== 'ephemeral') return undefined;
  return v.ttl === '5m' || v.ttl === '1h' ? { type: 'ephemeral', ttl: v.ttl } : { type: 'ephemeral' };
}

function withCache<T extends { cache_control?: CacheControl }>(part: T, raw: Obj): T {
  const cc = cacheControl(raw.cache_control);
  if (cc) part.cache_control = cc;
  return part;
}

/** An image from a URL: `data:<type>;base64,<data>` is split, other URLs are kept. */
export function imageFromUrl(url: string, detail?: unknown): IrImage {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  const img: IrImage = m ? { type: 'image', data: m[2], media_type: m[1] } : { type: 'image', url };
  if (detail === 'auto' || detail === 'low' || detail === 'high') img.detail = detail;
  return img;
}

/** Text and image parts of a message `content` (string or array of parts). */
function contentParts(c: unknown): Array<IrText | IrImage> {
  if (typeof c === 'string') return c === '' ? [] : [{ type: 'text', text: c }];
  if (!Array.isArray(c)) return [];
  const out: Array<IrText | IrImage> = [];
  for (const p of c) {
    if (!isObj(p)) continue;
    if ((p.type === 'text' || p.type === 'input_text') && typeof p.text === 'string') out.push(withCache<IrText>({ type: 'text', text: p.text }, p));
    else if (p.type === 'image_url') {
      const iu = p.image_url;
      const url = typeof iu === 'string' ? iu : isObj(iu) ? str(iu.url) : undefined;
      if (url) out.push(withCache(imageFromUrl(url, isObj(iu) ? iu.detail : undefined), p));
    }
  }
  return out;
}

/** Reasoning parts of `reasoning_details` entries. */
export function reasoningParts(details: unknown): IrPart[] {
  if (!Array.isArray(details)) return [];
  const out: IrPart[] = [];
  for (const d of details) {
    if (!isObj(d)) continue;
    if (d.type === 'reasoning.text') {
      const part: IrPart = { type: 'reasoning', text: str(d.text) ?? '' };
      if (typeof d.signature === 'string' && d.signature) part.signature = d.signature;
      out.push(part);
    } else if (d.type === 'reasoning.summary') out.push({ type: 'reasoning', text: str(d.summary) ?? '', summary: true });
    else if (d.type === 'reasoning.encrypted' && typeof d.data === 'string') out.push({ type: 'redacted_reasoning', data: d.data });
  }
  return out;
}

function assistantParts(m: Obj): IrPart[] {
  const out: IrPart[] = reasoningParts(m.reasoning_details);
  if (out.length === 0 && typeof m.reasoning === 'string' && m.reasoning) out.push({ type: 'reasoning', text: m.reasoning });
  if (typeof m.content === 'string') {
    if (m.content) out.push({ type: 'text', text: m.content });
  } else if (Array.isArray(m.content)) {
    for (const p of m.content) {
      if (!isObj(p)) continue;
      if (p.type === 'text' && typeof p.text === 'string') out.push(withCache<IrText>({ type: 'text', text: p.text }, p));
      else if (p.type === 'refusal' && typeof p.refusal === 'string') out.push({ type: 'refusal', text: p.refusal });
    }
  }
  if (typeof m.refusal === 'string' && m.refusal) out.push({ type: 'refusal', text: m.refusal });
  if (Array.isArray(m.tool_calls)) {
    for (const tc of m.tool_calls) {
      if (!isObj(tc)) continue;
      const fn = isObj(tc.function) ? tc.function : {};
      const args = fn.arguments;
      out.push(withCache<IrToolCall>({ type: 'tool_call', id: str(tc.id) ?? '', name: str(fn.name) ?? '', arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) }, tc));
    }
  }
  return out;
}

function toolResult(m: Obj): IrToolResult {
  const c = m.content;
  const part: IrToolResult = { type: 'tool_result', tool_call_id: str(m.tool_call_id) ?? '', content: typeof c === 'string' ? c : '' };
  if (Array.isArray(c)) {
    const parts = contentParts(c);
    // A single text part is the same as a string; its cache mark moves to the tool result.
    if (parts.length === 1 && parts[0].type === 'text') {
      part.content = parts[0].text;
      if (parts[0].cache_control) part.cache_control = parts[0].cache_control;
    } else part.content = parts;
  }
  return part;
}

function responseFormat(v: unknown): IrResponseFormat | undefined {
  if (!isObj(v)) return undefined;
  if (v.type === 'text' || v.type === 'json_object') return { type: v.type };
  if (v.type === 'json_schema') {
    const js = isObj(v.json_schema) ? v.json_schema : {};
    const out: IrResponseFormat = { type: 'json_schema', name: str(js.name) ?? 'response', schema: isObj(js.schema) ? js.schema : {} };
    if (typeof js.strict === 'boolean') out.strict = js.strict;
    if (typeof js.description === 'string') out.description = js.description;
    return out;
  }
  return undefined;
}

function toolChoice(v: unknown): IrToolChoice | undefined {
  if (v === 'none' || v === 'auto' || v === 'required') return { type: v };
  if (isObj(v) && v.type === 'function') {
    const name = isObj(v.function) ? str(v.function.name) : str(v.name);
    if (name) return { type: 'tool', name };
  }
  return undefined;
}

function tools(v: unknown): IrTool[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: IrTool[] = [];
  for (const t of v) {
    if (!isObj(t) || t.type !== 'function' || !isObj(t.function)) continue;
    const f = t.function;
    const name = str(f.name);
    if (!name) continue;
    const tool: IrTool = { name, parameters: isObj(f.parameters) ? f.parameters : { type: 'object', properties: {} } };
    if (typeof f.description === 'string') tool.description = f.description;
    if (typeof f.strict === 'boolean') tool.strict = f.strict;
    out.push(withCache(tool, t));
  }
  return out.length > 0 ? out : undefined;
}

const EFFORTS = new Set(['max', 'xhigh', 'high', 'medium', 'low', 'minimal', 'none']);

function reasoningConfig(body: Obj): IrReasoningConfig | undefined {
  const r = isObj(body.reasoning) ? body.reasoning : {};
  const out: IrReasoningConfig = {};
  const effort = str(body.reasoning_effort) ?? str(r.effort);
  if (effort && EFFORTS.has(effort)) out.effort = effort as IrReasoningConfig['effort'];
  if (typeof r.max_tokens === 'number') out.max_tokens = r.max_tokens;
  if (typeof r.enabled === 'boolean') out.enabled = r.enabled;
  else if (typeof body.include_reasoning === 'boolean' && body.include_reasoning) out.enabled = true;
  if (r.summary === 'auto' || r.summary === 'concise' || r.summary === 'detailed') out.summary = r.summary;
  if (typeof r.exclude === 'boolean') out.exclude = r.exclude;
  else if (body.include_reasoning === false) out.exclude = true;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A validated chat completions body as an IR request (without `model`). */
export function chatToIr(body: Record<string, unknown>): Omit<IrRequest, 'model'> {
  const system: IrText[] = [];
  const messages: IrMessage[] = [];
  const list = Array.isArray(body.messages) ? body.messages : [];
  for (const m of list) {
    if (!isObj(m)) continue;
    switch (m.role) {
      case 'system':
      case 'developer':
        for (const p of contentParts(m.content)) if (p.type === 'text') system.push(p);
        break;
      case 'user': {
        const msg: IrMessage = { role: 'user', content: contentParts(m.content) };
        if (typeof m.name === 'string') msg.name = m.name;
        messages.push(msg);
        break;
      }
      case 'assistant': {
        const msg: IrMessage = { role: 'assistant', content: assistantParts(m) };
        if (typeof m.name === 'string') msg.name = m.name;
        messages.push(msg);
        break;
      }
      case 'tool': {
        const prev = messages[messages.length - 1];
        const part = toolResult(m);
        if (prev && prev.role === 'user' && prev.content.length > 0 && prev.content.every((p) => p.type === 'tool_result')) prev.content.push(part);
        else messages.push({ role: 'user', content: [part] });
        break;
      }
    }
  }
  const out: Omit<IrRequest, 'model'> = { system, messages, stream: body.stream === true };
  const t = tools(body.tools);
  if (t) out.tools = t;
  const tc = toolChoice(body.tool_choice);
  if (tc) out.tool_choice = tc;
  if (typeof body.parallel_tool_calls === 'boolean') out.parallel_tool_calls = body.parallel_tool_calls;
  const max = num(body.max_completion_tokens) ?? num(body.max_tokens);
  if (max !== undefined) out.max_tokens = max;
  for (const k of ['temperature', 'top_p', 'top_k', 'frequency_penalty', 'presence_penalty', 'seed'] as const) {
    const v = num(body[k]);
    if (v !== undefined) out[k] = v;
  }
  if (typeof body.stop === 'string') out.stop = [body.stop];
  else if (Array.isArray(body.stop)) out.stop = body.stop.filter((s): s is string => typeof s === 'string');
  const rf = responseFormat(body.response_format);
  if (rf) out.response_format = rf;
  const rc = reasoningConfig(body);
  if (rc) out.reasoning = rc;
  if (typeof body.user === 'string') out.user = body.user;
  if (Array.isArray(body.modalities)) out.modalities = body.modalities.filter((m): m is 'text' | 'image' => m === 'text' || m === 'image');
  return out;
}

// ------------------------------------------------------------------------------------------------ IR → chat answer

/** The gateway's `usage` object of a chat answer. */
export function chatUsage(u: IrUsage | null, meta: AnswerMeta): Obj {
  const x = u ?? { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 };
  return {
    prompt_tokens: x.input,
    completion_tokens: x.output,
    total_tokens: x.input + x.output,
    prompt_tokens_details: { cached_tokens: x.cache_read, cache_write_tokens: x.cache_write },
    completion_tokens_details: { reasoning_tokens: x.reasoning },
    cost: meta.cost,
    is_byok: meta.is_byok === true,
    cost_details: meta.cost_details,
  };
}

/** The assistant message of a chat completion. */
export function chatMessage(parts: IrPart[]): Obj {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const refusals: string[] = [];
  const calls: Obj[] = [];
  const images: Obj[] = [];
  for (const p of parts) {
    if (p.type === 'image' && p.data) images.push(chatImage(p.data, p.media_type ?? 'image/png'));
    else if (p.type === 'text') texts.push(p.text);
    else if (p.type === 'reasoning') reasoning.push(p.text);
    else if (p.type === 'refusal') refusals.push(p.text);
    else if (p.type === 'tool_call') calls.push({ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments } });
  }
  const msg: Obj = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : calls.length > 0 || refusals.length > 0 ? null : '',
    refusal: refusals.length > 0 ? refusals.join('') : null,
    reasoning: reasoning.length > 0 ? reasoning.join('') : null,
  };
  const details = reasoningDetails(parts);
  if (details.length > 0) msg.reasoning_details = details;
  if (calls.length > 0) msg.tool_calls = calls;
  if (images.length > 0) msg.images = images;
  return msg;
}

/** A generated image in a chat answer (`message.images[]`, `delta.images[]`): a base64 data URL. */
const chatImage = (data: string, mediaType: string): Obj => ({ type: 'image_url', image_url: { url: `data:${mediaType};base64,${data}` } });

/** An IR response as a chat completion body. */
export function chatFromIr(res: IrResponse, meta: AnswerMeta): Record<string, unknown> {
  const out: Obj = {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    provider: meta.provider,
    system_fingerprint: res.system_fingerprint ?? null,
  };
  if (res.service_tier) out.service_tier = res.service_tier;
  out.choices = [
    {
      index: 0,
      message: chatMessage(res.content),
      logprobs: null,
      finish_reason: res.finish_reason,
      native_finish_reason: res.native_finish_reason,
    },
  ];
  out.usage = chatUsage(res.usage, meta);
  if (meta.gateway_metadata) out.gateway_metadata = meta.gateway_metadata;
  return out;
}

// ------------------------------------------------------------------------------------------------ stream encoder

const sse = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;

/**
 * Encoder of `chat.completion.chunk` events. The first chunk (role `assistant`, empty content) comes from start(),
 * or before the first output when start() was not called. `usage` IR events are kept as a fallback for finish().
 */
export class ChatStreamEncoder implements StreamEncoder {
  /** Images sent so far (the `index` of the next one in `delta.images`). */
  private images = 0;
  private opened = false;
  /** IR part index → tool call number (0, 1, …). */
  private readonly toolIndex = new Map<number, number>();
  /** IR part index → reasoning_details index. */
  private readonly detailIndex = new Map<number, number>();
  private lastUsage: IrUsage | null = null;
  private textHead: string | undefined;

  constructor(private readonly meta: AnswerMeta) {}

  private head(): Obj {
    return { id: this.meta.id, object: 'chat.completion.chunk', created: this.meta.created, model: this.meta.model, provider: this.meta.provider };
  }

  private chunk(delta: Obj, finish: string | null = null, native: string | null = null): string {
    return sse({ ...this.head(), choices: [{ index: 0, delta, finish_reason: finish, native_finish_reason: native, logprobs: null }] });
  }

  start(): string {
    if (this.opened) return '';
    this.opened = true;
    return this.chunk({ role: 'assistant', content: '' });
  }

  private detail(index: number): number {
    let d = this.detailIndex.get(index);
    if (d === undefined) this.detailIndex.set(index, (d = this.detailIndex.size));
    return d;
  }

  event(ev: IrStreamEvent): string {
    let out: string;
    switch (ev.type) {
      case 'text_delta':
        // The common chunk from a template: what `chunk` serializes, without building it (one per token).
        out = `${(this.textHead ??= `data: ${JSON.stringify(this.head()).slice(0, -1)},"choices":[{"index":0,"delta":{"content":`)}${JSON.stringify(ev.text)}},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}\n\n`;
        break;
      case 'reasoning_delta':
        out = this.chunk({ reasoning: ev.text, reasoning_details: [{ type: 'reasoning.text', text: ev.text, index: this.detail(ev.index) }] });
        break;
      case 'reasoning_signature':
        out = this.chunk({ reasoning_details: [{ type: 'reasoning.text', text: '', signature: ev.signature, index: this.detail(ev.index) }] });
        break;
      case 'redacted_reasoning':
        out = this.chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: ev.data, index: this.detail(ev.index) }] });
        break;
      case 'refusal_delta':
        out = this.chunk({ refusal: ev.text });
        break;
      case 'image':
        out = this.chunk({ images: [{ ...chatImage(ev.data, ev.media_type), index: this.images++ }] });
        break;
      case 'tool_call_start': {
        const n = this.toolIndex.size;
        this.toolIndex.set(ev.index, n);
        out = this.chunk({ tool_calls: [{ index: n, id: ev.id, type: 'function', function: { name: ev.name, arguments: '' } }] });
        break;
      }
      case 'tool_call_delta': {
        const n = this.toolIndex.get(ev.index);
        if (n === undefined || ev.arguments === '') return '';
        out = this.chunk({ tool_calls: [{ index: n, function: { arguments: ev.arguments } }] });
        break;
      }
      case 'finish':
        out = this.chunk({}, ev.finish_reason, ev.native_finish_reason);
        break;
      case 'usage':
        this.lastUsage = ev.usage;
        return '';
      default:
        // start, part_end: nothing to send; error: the caller ends the stream with error().
        return '';
    }
    return this.start() + out;
  }

  finish(usage: IrUsage | null, meta: AnswerMeta): string {
    const tail: Obj = { ...this.head(), choices: [], usage: chatUsage(usage ?? this.lastUsage, meta) };
    if (meta.gateway_metadata) tail.gateway_metadata = meta.gateway_metadata;
    return this.start() + sse(tail) + 'data: [DONE]\n\n';
  }

  error(status: number, message: string, errorType: string, meta: AnswerMeta): string {
    const chunk: Obj = {
      ...this.head(),
      error: { code: status, message, metadata: { error_type: errorType } },
      choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error' }],
    };
    if (meta.gateway_metadata) chunk.gateway_metadata = meta.gateway_metadata;
    return sse(chunk) + 'data: [DONE]\n\n';
  }
}

/** The chat API's error body. */
export function chatErrorBody(status: number, message: string, metadata: Record<string, unknown> | null): Record<string, unknown> {
  const error: Obj = { code: status, message };
  if (metadata) error.metadata = metadata;
  return { error };
}
