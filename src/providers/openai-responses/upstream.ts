/**
 * The OpenAI Responses API (`POST {baseUrl}/responses`) as an upstream protocol, through the IR.
 *
 * Requests are stateless (`store: false`): the whole conversation is sent as `input` items every time, and reasoning
 * is carried across turns by its `encrypted_content` (`include: ["reasoning.encrypted_content"]` when reasoning is
 * on). Mapping choices:
 * - System parts → `instructions` (joined with blank lines).
 * - User text/images → `message` items with `input_text` / `input_image`; tool results → `function_call_output`
 *   items (string output, or `input_text`/`input_image` items for rich results); order kept.
 * - Assistant text/refusals → `message` items with `output_text` / `refusal`; tool calls → `function_call` items.
 *   Items are sent without ids (they are not stored upstream).
 * - Reasoning: an IR redacted part (the `encrypted_content`) becomes a `reasoning` item, with the summary parts just
 *   before it as its `summary`. Reasoning text without encrypted content (e.g. from another provider) cannot be
 *   replayed to OpenAI and is dropped.
 * - Tools: `{type:"function", name, description, parameters, strict}` with `strict` false unless asked (the
 *   Responses API would otherwise default to strict schemas).
 * - Reasoning: `reasoning.effort` as for chat (see openaiEffort); `summary` as asked, or `auto` when reasoning is
 *   enabled explicitly (`enabled: true`, e.g. Anthropic-style thinking) and not excluded.
 * - Not in the Responses API and dropped: `stop`, `seed`, `top_k`, `frequency_penalty`, `presence_penalty`.
 * - Answers: `output_text` → text, `refusal` → refusal, `function_call` → tool call (`call_id` is the id),
 *   `custom_tool_call` (a free-form tool) → tool call whose arguments are `{"input": …}` (as the IR carries custom
 *   tools, inbound/responses-tools.ts; streamed `custom_tool_call_input` deltas are escaped into that JSON), both with
 *   their `namespace` when the tool is namespaced,
 *   `reasoning` → summary parts (`summary: true`), `reasoning_text` content → reasoning, `encrypted_content` →
 *   redacted reasoning. Status `incomplete` maps to `length` (max_output_tokens) or `content_filter`.
 */
import { systemTexts } from '../../core/system-turns.js';
import { mapUpstreamStatus, UpstreamError } from '../../core/provider-errors.js';
import { chatHeaders, openaiError } from '../openai/chat.js';
import { imageUrl, invalidResponse, openaiEffort, parseJsonObject, parseStreamData } from '../openai/ir-upstream.js';
import { SseParser } from '../sse.js';
import { checkResponse, checkResponsesEvent } from './schemas.js';
import type { IrFinishReason, IrImage, IrMessage, IrPart, IrRequest, IrResponse, IrStreamEvent, IrText, IrUsage } from '../../core/ir.js';
import type { StreamDecoder, UpstreamAdapter, UpstreamContext, UpstreamHttpRequest } from '../../core/adapters.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

// ------------------------------------------------------------------------------------------------ IR → request

function inputImage(p: IrImage): Obj {
  return { type: 'input_image', image_url: imageUrl(p), detail: p.detail ?? 'auto' };
}

function userItems(m: IrMessage): Obj[] {
  const out: Obj[] = [];
  let pending: Obj[] = [];
  const flush = () => {
    if (pending.length > 0) out.push({ type: 'message', role: 'user', content: pending });
    pending = [];
  };
  for (const p of m.content) {
    if (p.type === 'text') pending.push({ type: 'input_text', text: p.text });
    else if (p.type === 'image') pending.push(inputImage(p));
    else if (p.type === 'tool_result') {
      flush();
      const output =
        typeof p.content === 'string' ? p.content : p.content.map((c) => (c.type === 'text' ? { type: 'input_text', text: c.text } : inputImage(c)));
      out.push({ type: 'function_call_output', call_id: p.tool_call_id, output });
    }
  }
  flush();
  return out;
}

function assistantItems(m: IrMessage): Obj[] {
  const out: Obj[] = [];
  let content: Obj[] = [];
  let summaries: Obj[] = [];
  const flush = () => {
    if (content.length > 0) out.push({ type: 'message', role: 'assistant', content });
    content = [];
  };
  for (const p of m.content) {
    switch (p.type) {
      case 'reasoning':
        if (p.summary) summaries.push({ type: 'summary_text', text: p.text });
        break;
      case 'redacted_reasoning':
        flush();
        out.push({ type: 'reasoning', summary: summaries, encrypted_content: p.data });
        summaries = [];
        break;
      case 'text':
        content.push({ type: 'output_text', text: p.text });
        break;
      case 'refusal':
        content.push({ type: 'refusal', refusal: p.text });
        break;
      case 'tool_call':
        flush();
        out.push({ type: 'function_call', call_id: p.id, name: p.name, arguments: p.arguments });
        break;
    }
  }
  flush();
  return out;
}

/** Whether the request turns reasoning on (so that encrypted reasoning can be asked for). */
function reasoningOn(req: IrRequest): boolean {
  const r = req.reasoning;
  if (!r) return false;
  if (r.enabled === false || r.effort === 'none') return false;
  return r.enabled === true || r.effort !== undefined || r.summary !== undefined || r.max_tokens !== undefined;
}

/** The Responses API body of an IR request. */
export function buildResponsesBody(req: IrRequest): Obj {
  const input: Obj[] = [];
  for (const m of req.messages) {
    // A mid-conversation system turn: a system message item in place.
    if (m.role === 'system') {
      const texts = systemTexts(m);
      if (texts.length > 0) input.push({ type: 'message', role: 'system', content: texts.map((t) => ({ type: 'input_text', text: t.text })) });
    } else input.push(...(m.role === 'user' ? userItems(m) : assistantItems(m)));
  }
  const body: Obj = { model: req.model };
  if (req.system.length > 0) body.instructions = req.system.map((p: IrText) => p.text).join('\n\n');
  body.input = input;
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: t.parameters,
      strict: t.strict ?? false,
    }));
  }
  if (req.tool_choice) body.tool_choice = req.tool_choice.type === 'tool' ? { type: 'function', name: req.tool_choice.name } : req.tool_choice.type;
  if (req.parallel_tool_calls !== undefined) body.parallel_tool_calls = req.parallel_tool_calls;
  if (req.max_tokens !== undefined) body.max_output_tokens = req.max_tokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  const rf = req.response_format;
  if (rf) {
    if (rf.type === 'json_schema') {
      const format: Obj = { type: 'json_schema', name: rf.name, schema: rf.schema };
      if (rf.strict !== undefined) format.strict = rf.strict;
      if (rf.description !== undefined) format.description = rf.description;
      body.text = { format };
    } else body.text = { format: { type: rf.type } };
  }
  const effort = openaiEffort(req);
  const on = reasoningOn(req);
  // Reasoning explicitly enabled (not only an effort) asks to see it: OpenAI shows reasoning as summaries only.
  const summary = req.reasoning?.summary ?? (req.reasoning?.enabled === true && req.reasoning.exclude !== true ? 'auto' : undefined);
  if (effort || (on && summary)) {
    const r: Obj = {};
    if (effort) r.effort = effort;
    if (on && summary) r.summary = summary;
    body.reasoning = r;
  }
  if (req.user !== undefined) body.user = req.user;
  body.store = false;
  if (on) body.include = ['reasoning.encrypted_content'];
  if (req.stream) body.stream = true;
  return body;
}

export function buildResponsesRequest(req: IrRequest, ctx: UpstreamContext): UpstreamHttpRequest {
  return {
    url: new URL(`${ctx.provider.baseUrl}/responses`),
    headers: chatHeaders(ctx.provider, ctx.apiKey, req.stream),
    body: JSON.stringify(buildResponsesBody(req)),
  };
}

// ------------------------------------------------------------------------------------------------ answer → IR

/** Responses usage → IR usage (input includes cached tokens, output includes reasoning tokens). */
export function irUsageFromResponses(u: unknown): IrUsage | null {
  if (!isObj(u) || typeof u.input_tokens !== 'number') return null;
  const inDet = isObj(u.input_tokens_details) ? u.input_tokens_details : {};
  const outDet = isObj(u.output_tokens_details) ? u.output_tokens_details : {};
  return {
    input: u.input_tokens,
    output: num(u.output_tokens),
    cache_read: num(inDet.cached_tokens),
    cache_write: num(inDet.cache_write_tokens),
    reasoning: num(outDet.reasoning_tokens),
  };
}

/** IR parts of one output item. */
function itemParts(item: Obj): IrPart[] {
  const out: IrPart[] = [];
  switch (item.type) {
    case 'reasoning':
      if (Array.isArray(item.summary)) for (const s of item.summary) if (isObj(s) && typeof s.text === 'string') out.push({ type: 'reasoning', text: s.text, summary: true });
      if (Array.isArray(item.content)) for (const c of item.content) if (isObj(c) && typeof c.text === 'string') out.push({ type: 'reasoning', text: c.text });
      if (typeof item.encrypted_content === 'string' && item.encrypted_content) out.push({ type: 'redacted_reasoning', data: item.encrypted_content });
      break;
    case 'message':
      if (Array.isArray(item.content)) {
        for (const c of item.content) {
          if (!isObj(c)) continue;
          if (c.type === 'output_text' && typeof c.text === 'string') out.push({ type: 'text', text: c.text });
          else if (c.type === 'refusal' && typeof c.refusal === 'string') out.push({ type: 'refusal', text: c.refusal });
        }
      }
      break;
    case 'function_call':
    case 'custom_tool_call': {
      const args = item.type === 'custom_tool_call' ? customArgs(str(item.input) ?? '') : (str(item.arguments) ?? '');
      const ns = str(item.namespace);
      out.push({ type: 'tool_call', id: str(item.call_id) ?? str(item.id) ?? '', name: str(item.name) ?? '', arguments: args, ...(ns ? { namespace: ns } : {}) });
      break;
    }
  }
  return out;
}

/** A free-form tool's input as the IR's JSON arguments, `{"input": …}` (and its pieces: opening, escaped text, closing). */
const customArgs = (input: string): string => JSON.stringify({ input });
const CUSTOM_OPEN = '{"input":"';
const customPiece = (text: string): string => JSON.stringify(text).slice(1, -1);

/** The IR finish of a response object's status. */
function finishOf(resp: Obj, hasToolCalls: boolean): { finish_reason: IrFinishReason; native_finish_reason: string | null } {
  const status = str(resp.status) ?? 'completed';
  if (status === 'incomplete') {
    const reason = isObj(resp.incomplete_details) ? str(resp.incomplete_details.reason) : undefined;
    return { finish_reason: reason === 'content_filter' ? 'content_filter' : 'length', native_finish_reason: reason ?? 'incomplete' };
  }
  if (status === 'failed') return { finish_reason: 'error', native_finish_reason: 'failed' };
  return { finish_reason: hasToolCalls ? 'tool_calls' : 'stop', native_finish_reason: status };
}

/** A Responses error (`response.error` of a failed response, or an `error` stream event) as the gateway's error. */
export function responsesError(e: unknown, raw: unknown): UpstreamError {
  const err = isObj(e) ? e : {};
  const code = str(err.code) ?? str(err.type) ?? '';
  const message = str(err.message) ?? 'Provider returned error';
  let status = 502;
  if (code === 'rate_limit_exceeded') status = 429;
  else if (/^invalid_|context_length_exceeded/.test(code)) status = 400;
  return mapUpstreamStatus(status, message, raw, null, code === 'context_length_exceeded');
}

/** A 2xx Responses body as an IR response; throws UpstreamError for a failed response or an invalid answer. */
export function parseResponsesResponse(text: string): IrResponse {
  const json = parseJsonObject(text);
  if (!Array.isArray(json.output)) {
    if (json.error) throw responsesError(json.error, json);
    throw invalidResponse('Provider returned an invalid response (no output)', json);
  }
  if (json.status === 'failed') throw responsesError(json.error, json);
  checkResponse(json);
  const content: IrPart[] = [];
  for (const item of json.output) if (isObj(item)) content.push(...itemParts(item));
  return {
    id: str(json.id) ?? null,
    model: str(json.model) ?? null,
    content,
    ...finishOf(json, content.some((p) => p.type === 'tool_call')),
    usage: irUsageFromResponses(json.usage),
    service_tier: str(json.service_tier) ?? null,
    system_fingerprint: null,
  };
}

// ------------------------------------------------------------------------------------------------ stream decoder

/**
 * Decoder of a Responses event stream. IR indexes are allocated per output part in order of appearance (a content
 * part of a message, a summary part or reasoning-text part of a reasoning item, a function call, the encrypted
 * reasoning); the parts of an output item end with `response.output_item.done`. Text the server put only in the
 * `done` item (no deltas) is emitted then, so the IR is complete either way. The stream ends with
 * `response.completed` / `response.incomplete` (finish + usage), `response.failed` or `error` (IR error event).
 */
export class ResponsesStreamDecoder implements StreamDecoder {
  private readonly sse = new SseParser();
  private next = 0;
  private started = false;
  private terminal = false;
  private sawToolCall = false;
  private readonly slots = new Map<string, number>();
  /** Text emitted per slot key, to complete it from `done` items. */
  private readonly emitted = new Map<string, string>();
  /** Output index → slot keys, for part_end. */
  private readonly byItem = new Map<number, string[]>();
  private readonly closedItems = new Set<number>();

  push(text: string): IrStreamEvent[] {
    const out: IrStreamEvent[] = [];
    if (this.terminal) return out;
    for (const ev of this.sse.feed(text)) {
      if (this.terminal) break;
      this.onEvent(ev.event, ev.data, out);
    }
    return out;
  }

  end(): IrStreamEvent[] {
    const out: IrStreamEvent[] = [];
    if (!this.terminal) for (const ev of this.sse.flush()) if (!this.terminal) this.onEvent(ev.event, ev.data, out);
    if (!this.terminal) throw new UpstreamError(502, 'Provider stream ended before completion', 'provider_unavailable', 200, null);
    return out;
  }

  private slot(item: number, key: string): number {
    const k = `${item}:${key}`;
    let i = this.slots.get(k);
    if (i === undefined) {
      i = this.next++;
      this.slots.set(k, i);
      const keys = this.byItem.get(item) ?? [];
      keys.push(k);
      this.byItem.set(item, keys);
    }
    return i;
  }

  /** Emits `text` (a delta) for a slot. */
  private delta(kind: 'text' | 'reasoning' | 'refusal' | 'args', item: number, key: string, text: string, out: IrStreamEvent[]): void {
    if (!text) return;
    const index = this.slot(item, key);
    const k = `${item}:${key}`;
    this.emitted.set(k, (this.emitted.get(k) ?? '') + text);
    if (kind === 'text') out.push({ type: 'text_delta', index, text });
    else if (kind === 'reasoning') out.push({ type: 'reasoning_delta', index, text });
    else if (kind === 'refusal') out.push({ type: 'refusal_delta', index, text });
    else out.push({ type: 'tool_call_delta', index, arguments: text });
  }

  /** Emits what a slot lacks compared to its final text (nothing when the deltas already gave it all). */
  private complete(kind: 'text' | 'reasoning' | 'refusal' | 'args', item: number, key: string, full: string, out: IrStreamEvent[]): void {
    const have = this.emitted.get(`${item}:${key}`) ?? '';
    if (full.length > have.length && full.startsWith(have)) this.delta(kind, item, key, full.slice(have.length), out);
  }

  private startCall(item: number, it: Obj, out: IrStreamEvent[]): void {
    if (this.slots.has(`${item}:fc`)) return;
    this.sawToolCall = true;
    const index = this.slot(item, 'fc');
    const ns = str(it.namespace);
    out.push({ type: 'tool_call_start', index, id: str(it.call_id) ?? str(it.id) ?? `call_${item}`, name: str(it.name) ?? '', ...(ns ? { namespace: ns } : {}) });
  }

  /** Completes an output item from its final form and ends its parts. */
  private itemDone(item: number, it: Obj, out: IrStreamEvent[]): void {
    if (this.closedItems.has(item)) return;
    this.closedItems.add(item);
    if (it.type === 'message' && Array.isArray(it.content)) {
      it.content.forEach((c, k) => {
        if (!isObj(c)) return;
        if (c.type === 'output_text' && typeof c.text === 'string') this.complete('text', item, `c${k}`, c.text, out);
        else if (c.type === 'refusal' && typeof c.refusal === 'string') this.complete('refusal', item, `c${k}`, c.refusal, out);
      });
    } else if (it.type === 'reasoning') {
      if (Array.isArray(it.summary)) it.summary.forEach((s, k) => isObj(s) && typeof s.text === 'string' && this.complete('reasoning', item, `s${k}`, s.text, out));
      if (Array.isArray(it.content)) it.content.forEach((c, k) => isObj(c) && typeof c.text === 'string' && this.complete('reasoning', item, `r${k}`, c.text, out));
      if (typeof it.encrypted_content === 'string' && it.encrypted_content) out.push({ type: 'redacted_reasoning', index: this.slot(item, 'enc'), data: it.encrypted_content });
    } else if (it.type === 'function_call') {
      this.startCall(item, it, out);
      if (typeof it.arguments === 'string') this.complete('args', item, 'fc', it.arguments, out);
    } else if (it.type === 'custom_tool_call') {
      // Streamed: the escaped deltas made the JSON up to its closing (escaping piece by piece may differ from escaping
      // the whole, e.g. a surrogate pair split in two, but parses to the same text). Else the whole input at once.
      const streamed = this.emitted.has(`${item}:fc`);
      this.startCall(item, it, out);
      if (streamed) this.delta('args', item, 'fc', '"}', out);
      else if (typeof it.input === 'string') this.delta('args', item, 'fc', customArgs(it.input), out);
    }
    for (const k of this.byItem.get(item) ?? []) out.push({ type: 'part_end', index: this.slots.get(k)! });
  }

  private onEvent(name: string | undefined, data: string, out: IrStreamEvent[]): void {
    if (data === '[DONE]') return; // some compatible servers add it; the typed events decide
    const ev = parseStreamData(data);
    if (!isObj(ev)) return;
    const type = str(ev.type) ?? name;
    if (type !== undefined) checkResponsesEvent(type, ev);
    const item = typeof ev.output_index === 'number' ? ev.output_index : 0;
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued': {
        if (this.started) return;
        this.started = true;
        const r = isObj(ev.response) ? ev.response : {};
        out.push({ type: 'start', id: str(r.id) ?? null, model: str(r.model) ?? null });
        return;
      }
      case 'response.output_item.added':
        if (isObj(ev.item) && ev.item.type === 'function_call') {
          this.startCall(item, ev.item, out);
          if (typeof ev.item.arguments === 'string') this.delta('args', item, 'fc', ev.item.arguments, out);
        } else if (isObj(ev.item) && ev.item.type === 'custom_tool_call') {
          this.startCall(item, ev.item, out);
          this.delta('args', item, 'fc', CUSTOM_OPEN + customPiece(str(ev.item.input) ?? ''), out);
        }
        return;
      case 'response.output_text.delta':
        return this.delta('text', item, `c${num(ev.content_index)}`, str(ev.delta) ?? '', out);
      case 'response.refusal.delta':
        return this.delta('refusal', item, `c${num(ev.content_index)}`, str(ev.delta) ?? '', out);
      case 'response.reasoning_summary_text.delta':
        return this.delta('reasoning', item, `s${num(ev.summary_index)}`, str(ev.delta) ?? '', out);
      case 'response.reasoning_text.delta':
        return this.delta('reasoning', item, `r${num(ev.content_index)}`, str(ev.delta) ?? '', out);
      case 'response.custom_tool_call_input.delta':
        if (!this.slots.has(`${item}:fc`)) {
          this.startCall(item, { call_id: ev.item_id, name: '' }, out);
          this.delta('args', item, 'fc', CUSTOM_OPEN, out);
        }
        return this.delta('args', item, 'fc', customPiece(str(ev.delta) ?? ''), out);
      case 'response.function_call_arguments.delta':
        if (!this.slots.has(`${item}:fc`)) this.startCall(item, { call_id: ev.item_id, name: '' }, out);
        return this.delta('args', item, 'fc', str(ev.delta) ?? '', out);
      case 'response.output_item.done':
        if (isObj(ev.item)) this.itemDone(item, ev.item, out);
        return;
      case 'response.completed':
      case 'response.incomplete': {
        const r = isObj(ev.response) ? ev.response : {};
        if (!this.started) {
          this.started = true;
          out.push({ type: 'start', id: str(r.id) ?? null, model: str(r.model) ?? null });
        }
        if (Array.isArray(r.output)) r.output.forEach((it, i) => isObj(it) && this.itemDone(i, it, out));
        for (const [i] of this.byItem) if (!this.closedItems.has(i)) this.itemDone(i, {}, out);
        const fin = finishOf({ ...r, status: type === 'response.incomplete' ? 'incomplete' : 'completed' }, this.sawToolCall);
        out.push({ type: 'finish', ...fin });
        const usage = irUsageFromResponses(r.usage);
        if (usage) out.push({ type: 'usage', usage });
        this.terminal = true;
        return;
      }
      case 'response.failed': {
        const r = isObj(ev.response) ? ev.response : {};
        const e = responsesError(r.error, ev);
        out.push({ type: 'error', status: e.status, message: e.message, error_type: e.type, raw: ev });
        this.terminal = true;
        return;
      }
      case 'error': {
        const e = responsesError(isObj(ev.error) ? ev.error : ev, ev);
        out.push({ type: 'error', status: e.status, message: e.message, error_type: e.type, raw: ev });
        this.terminal = true;
        return;
      }
      default:
        return; // content_part.added/done, *.done, annotations, tool progress events: nothing new for the IR
    }
  }
}

// ------------------------------------------------------------------------------------------------ adapter

export const openaiResponsesAdapter: UpstreamAdapter = {
  protocol: 'openai-responses',
  buildRequest: buildResponsesRequest,
  parseResponse: parseResponsesResponse,
  parseError: openaiError,
  createStreamDecoder: () => new ResponsesStreamDecoder(),
};
