/**
 * Anthropic Messages stream (SSE) → IR stream events.
 *
 * Documented flow (https://docs.anthropic.com/en/api/messages-streaming): `message_start`, then per content block
 * `content_block_start` / `content_block_delta`… / `content_block_stop`, one or more `message_delta` (stop reason,
 * CUMULATIVE usage), `message_stop`; `ping` events anywhere; `error` events (e.g. overloaded_error); unknown event
 * types must be ignored. IR events use Anthropic's block index as the part index.
 *
 * - finish and usage are emitted once, at `message_stop` (there may be several `message_delta`). Usage combines
 *   `message_start`'s input/cache counts with the last reported values (later events overwrite, never add).
 * - The emulated JSON-output tool (JSON_TOOL_NAME) streams as text: its input_json deltas become text deltas.
 * - Server-tool and other unknown block types are skipped with their deltas.
 * - An event whose data is not JSON throws UpstreamError(502) from `push`; `end()` throws UpstreamError(502) when
 *   neither `message_stop` nor an `error` event came.
 * - `rawDelta`: the common text and input-JSON deltas recognized in their bytes (stream-scan.ts), for blocks already
 *   started, decoded by nobody (services/codec-ir-bytes.ts).
 */
import type { IrStreamEvent } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import type { RawDelta, StreamDecoder } from '../../core/adapters.js';
import type { ReadBytes } from '../../core/byte-shape.js';
import { SseParser, type SseEvent } from '../sse.js';
import { anthropicStreamError } from './errors.js';
import { checkStreamEvent } from './schemas.js';
import { scanContentDeltaIn } from './stream-scan.js';
import { DeltaMemo } from '../../core/delta-memo.js';
import { finishReason, irUsage, isObj, JSON_TOOL_NAME, type AnthropicUsage, type Obj } from './wire.js';

type BlockKind = 'text' | 'reasoning' | 'tool' | 'json' | 'ignored';

const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const;

export class AnthropicStreamDecoder implements StreamDecoder {
  private readonly sse = new SseParser();
  private readonly blocks = new Map<number, BlockKind>();
  private started = false;
  private stopped = false;
  private errored = false;
  private readonly usage: AnthropicUsage = {};
  private sawUsage = false;
  private stopReason: string | null = null;
  private userTools = 0;
  private jsonTools = 0;

  push(text: string): IrStreamEvent[] {
    const out: IrStreamEvent[] = [];
    for (const ev of this.sse.feed(text)) this.handle(ev, out);
    return out;
  }

  private readonly raw: RawDelta = { kind: 'text_delta', index: 0, buf: '', from: 0, to: 0 };
  /** The fixed bytes of the last delta recognized (core/delta-memo.ts): the next ones are checked against them. */
  private readonly memo = new DeltaMemo();

  rawDelta(read: ReadBytes, start: number, end: number): RawDelta | null {
    if (!this.started || this.stopped || this.errored) return null;
    const d = this.raw;
    if (!scanContentDeltaIn(read, start, end, d, this.memo)) return null;
    const kind = this.blocks.get(d.index);
    // As blockDelta maps them: text in a text block; input JSON in a tool block, or as text in the JSON-output tool's.
    if (d.kind === 'text_delta') return kind === 'text' ? d : null;
    if (kind === 'tool') return d;
    if (kind !== 'json') return null;
    d.kind = 'text_delta';
    return d;
  }

  end(): IrStreamEvent[] {
    const out: IrStreamEvent[] = [];
    for (const ev of this.sse.flush()) this.handle(ev, out);
    if (!this.stopped && !this.errored) {
      throw new UpstreamError(502, 'Provider stream ended before message_stop', 'provider_unavailable', 200, null);
    }
    return out;
  }

  private handle(ev: SseEvent, out: IrStreamEvent[]): void {
    if (this.stopped || this.errored) return;
    let json: unknown;
    try {
      json = JSON.parse(ev.data);
    } catch {
      throw new UpstreamError(502, 'Provider sent an invalid stream event', 'provider_unavailable', 200, ev.data.slice(0, 512));
    }
    if (!isObj(json)) return;
    const type = typeof json.type === 'string' ? json.type : ev.event;
    if (type !== undefined) checkStreamEvent(type, json);
    switch (type) {
      case 'message_start': {
        if (this.started) return;
        const msg = isObj(json.message) ? json.message : {};
        this.started = true;
        out.push({ type: 'start', id: typeof msg.id === 'string' ? msg.id : null, model: typeof msg.model === 'string' ? msg.model : null });
        this.mergeUsage(msg.usage);
        return;
      }
      case 'content_block_start':
        return this.blockStart(json, out);
      case 'content_block_delta':
        return this.blockDelta(json, out);
      case 'content_block_stop': {
        const index = typeof json.index === 'number' ? json.index : -1;
        const kind = this.blocks.get(index);
        if (kind !== undefined && kind !== 'ignored') out.push({ type: 'part_end', index });
        return;
      }
      case 'message_delta': {
        const delta = isObj(json.delta) ? json.delta : {};
        if (typeof delta.stop_reason === 'string') this.stopReason = delta.stop_reason;
        this.mergeUsage(json.usage);
        return;
      }
      case 'message_stop': {
        this.ensureStarted(out);
        this.stopped = true;
        let finish = finishReason(this.stopReason);
        if (finish === 'tool_calls' && this.jsonTools > 0 && this.userTools === 0) finish = 'stop';
        out.push({ type: 'finish', finish_reason: finish, native_finish_reason: this.stopReason });
        if (this.sawUsage) out.push({ type: 'usage', usage: irUsage(this.usage) });
        return;
      }
      case 'error': {
        this.errored = true;
        const e = anthropicStreamError(json);
        out.push({ type: 'error', status: e.status, message: e.message, error_type: e.type, raw: json });
        return;
      }
      default:
        return; // ping, and event types added later (ignored, as the docs ask)
    }
  }

  private ensureStarted(out: IrStreamEvent[]): void {
    if (this.started) return;
    this.started = true;
    out.push({ type: 'start', id: null, model: null });
  }

  private mergeUsage(u: unknown): void {
    if (!isObj(u)) return;
    for (const k of USAGE_KEYS) {
      const v = u[k];
      if (typeof v === 'number' && Number.isFinite(v)) {
        this.usage[k] = v;
        this.sawUsage = true;
      }
    }
  }

  private blockStart(json: Obj, out: IrStreamEvent[]): void {
    if (typeof json.index !== 'number') return;
    const index = json.index;
    const cb = isObj(json.content_block) ? json.content_block : {};
    this.ensureStarted(out);
    switch (cb.type) {
      case 'text':
        this.blocks.set(index, 'text');
        if (typeof cb.text === 'string' && cb.text !== '') out.push({ type: 'text_delta', index, text: cb.text });
        return;
      case 'thinking':
        this.blocks.set(index, 'reasoning');
        if (typeof cb.thinking === 'string' && cb.thinking !== '') out.push({ type: 'reasoning_delta', index, text: cb.thinking });
        if (typeof cb.signature === 'string' && cb.signature !== '') out.push({ type: 'reasoning_signature', index, signature: cb.signature, origin: 'anthropic' });
        return;
      case 'redacted_thinking':
        this.blocks.set(index, 'reasoning');
        out.push({ type: 'redacted_reasoning', index, data: typeof cb.data === 'string' ? cb.data : '' });
        return;
      case 'tool_use': {
        const input = isObj(cb.input) && Object.keys(cb.input).length > 0 ? JSON.stringify(cb.input) : '';
        if (cb.name === JSON_TOOL_NAME) {
          this.jsonTools++;
          this.blocks.set(index, 'json');
          if (input) out.push({ type: 'text_delta', index, text: input });
        } else {
          this.userTools++;
          this.blocks.set(index, 'tool');
          out.push({ type: 'tool_call_start', index, id: typeof cb.id === 'string' ? cb.id : '', name: typeof cb.name === 'string' ? cb.name : '' });
          if (input) out.push({ type: 'tool_call_delta', index, arguments: input });
        }
        return;
      }
      default:
        this.blocks.set(index, 'ignored'); // server_tool_use, web_search_tool_result, …
    }
  }

  private blockDelta(json: Obj, out: IrStreamEvent[]): void {
    if (typeof json.index !== 'number' || !isObj(json.delta)) return;
    const index = json.index;
    const d = json.delta;
    const kind = this.blocks.get(index);
    if (kind === 'ignored') return;
    this.ensureStarted(out);
    switch (d.type) {
      case 'text_delta':
        if (typeof d.text === 'string' && d.text !== '') out.push({ type: 'text_delta', index, text: d.text });
        return;
      case 'thinking_delta':
        if (typeof d.thinking === 'string' && d.thinking !== '') out.push({ type: 'reasoning_delta', index, text: d.thinking });
        return;
      case 'signature_delta':
        if (typeof d.signature === 'string' && d.signature !== '') out.push({ type: 'reasoning_signature', index, signature: d.signature, origin: 'anthropic' });
        return;
      case 'input_json_delta':
        if (typeof d.partial_json !== 'string' || d.partial_json === '') return;
        if (kind === 'json') out.push({ type: 'text_delta', index, text: d.partial_json });
        else out.push({ type: 'tool_call_delta', index, arguments: d.partial_json });
        return;
      default:
        return; // citations_delta and later delta types
    }
  }
}

export function createStreamDecoder(): StreamDecoder {
  return new AnthropicStreamDecoder();
}
