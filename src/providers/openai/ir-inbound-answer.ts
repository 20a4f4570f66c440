/**
 * IR answers → the client-facing chat completions API (mapping choices: ir-inbound.ts): a complete chat completion
 * body, `chat.completion.chunk` SSE events, and the error body.
 */
import type { IrPart, IrResponse, IrStreamEvent, IrUsage } from '../../core/ir.js';
import type { AnswerMeta, RawDelta, StreamEncoder } from '../../core/adapters.js';
import { latin1 } from '../../core/json-scan.js';
import { reasoningDetails } from './ir-upstream.js';

type Obj = Record<string, unknown>;

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
/** What follows a delta's string in a chunk: as `chunk` serializes it. */
const TEXT_TAIL = '},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}\n\n';
const ARGS_TAIL = '}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}\n\n';

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
  /** The head of a chunk (`data: {"id":…,"provider":…,`) as Latin-1 text of its bytes, for rawDelta. */
  private rawHead: string | undefined;

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

  /** A text delta or a started tool call's next arguments from a template, the string as it came (Latin-1 text of bytes). */
  rawDelta(d: RawDelta): string | null {
    if (!this.opened) return null;
    const head = (this.rawHead ??= latin1(`data: ${JSON.stringify(this.head()).slice(0, -1)},"choices":[{"index":0,"delta":{`));
    const token = d.buf.slice(d.from, d.to);
    if (d.kind === 'text_delta') return `${head}"content":${token}${TEXT_TAIL}`;
    const n = this.toolIndex.get(d.index);
    return n === undefined ? null : `${head}"tool_calls":[{"index":${n},"function":{"arguments":${token}${ARGS_TAIL}`;
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
