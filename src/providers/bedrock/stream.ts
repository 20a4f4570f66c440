/**
 * ConverseStream answer → IR stream events. The body is AWS event-stream framing (binary: prelude with lengths and
 * CRCs, headers, JSON payload; decoded by `@smithy/eventstream-codec`), one message per event:
 *
 *   messageStart → contentBlockStart (tool use) / contentBlockDelta (text, toolUse input, reasoningContent) →
 *   contentBlockStop → messageStop {stopReason} → metadata {usage}
 *
 * `:message-type: exception` messages carry errors (`:exception-type`). The stream is complete once `messageStop`
 * and `metadata` came; it ending before `messageStop` is an error.
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
 */
import { createRequire } from 'node:module';
import type { EventStreamCodec } from '@smithy/eventstream-codec';
import type { StreamDecoder } from '../../core/adapters.js';
import type { IrStreamEvent, IrUsage } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import { bedrockStreamException } from './errors.js';
import { converseFinish, converseUsage } from './response.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const utf8 = new TextDecoder();
const toUtf8 = (b: Uint8Array) => utf8.decode(b);
const fromUtf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const requireLazily = createRequire(import.meta.url);
let codec: EventStreamCodec | undefined;
/**
 * One codec for every stream (it keeps no state between messages), made by the first Bedrock stream decoded: a gateway
 * without Bedrock does not load AWS's codec (a smaller heap for every full collection to mark).
 */
export const EVENT_STREAM: Pick<EventStreamCodec, 'decode'> = {
  decode: (frame) => (codec ??= new (requireLazily('@smithy/eventstream-codec') as typeof import('@smithy/eventstream-codec')).EventStreamCodec(toUtf8, fromUtf8)).decode(frame),
};

export class ConverseStreamDecoder implements StreamDecoder {
  private buf: Buffer = Buffer.alloc(0);
  private started = false;
  private stopped = false;
  private done = false;
  private errored = false;
  private sawToolCall = false;
  private usage: IrUsage | null = null;
  private readonly open = new Set<number>();

  push(text: string): IrStreamEvent[] {
    // Text never reaches a binary decoder (the caller feeds bytes); kept for the interface.
    return this.pushBytes(Buffer.from(text, 'latin1'));
  }

  pushBytes(bytes: Uint8Array): IrStreamEvent[] {
    const out: IrStreamEvent[] = [];
    if (this.done || this.errored) return out;
    this.buf = this.buf.length === 0 ? Buffer.from(bytes) : Buffer.concat([this.buf, bytes]);
    while (this.buf.length >= 4 && !this.errored) {
      const total = this.buf.readUInt32BE(0);
      if (total < 16) throw new UpstreamError(502, 'Provider sent an invalid event stream (bad message length)', 'provider_unavailable', 200, null);
      if (this.buf.length < total) break;
      const frame = this.buf.subarray(0, total);
      this.buf = this.buf.subarray(total);
      let msg;
      try {
        msg = EVENT_STREAM.decode(frame);
      } catch (err) {
        throw new UpstreamError(502, `Provider sent an invalid event stream (${(err as Error).message})`, 'provider_unavailable', 200, null);
      }
      const header = (name: string) => {
        const h = msg.headers[name];
        return h && h.type === 'string' ? h.value : undefined;
      };
      let payload: unknown = {};
      try {
        payload = msg.body.length > 0 ? JSON.parse(toUtf8(msg.body)) : {};
      } catch {
        throw new UpstreamError(502, 'Provider sent an invalid event stream (payload is not JSON)', 'provider_unavailable', 200, null);
      }
      const type = header(':message-type');
      if (type === 'exception' || type === 'error') {
        const e = bedrockStreamException(header(':exception-type') ?? header(':error-code') ?? 'internalServerException', payload);
        this.errored = true;
        out.push({ type: 'error', status: e.status, message: e.message, error_type: e.type, raw: payload });
        break;
      }
      this.onEvent(header(':event-type') ?? '', isObj(payload) ? payload : {}, out);
    }
    return out;
  }

  end(): IrStreamEvent[] {
    if (this.errored) return [];
    if (!this.stopped) throw new UpstreamError(502, 'Provider stream ended before completion', 'provider_unavailable', 200, null);
    if (!this.done) return this.finishUsage();
    return [];
  }

  private finishUsage(): IrStreamEvent[] {
    this.done = true;
    return this.usage ? [{ type: 'usage', usage: this.usage }] : [];
  }

  private onEvent(type: string, p: Obj, out: IrStreamEvent[]): void {
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: null, model: null });
    }
    const index = typeof p.contentBlockIndex === 'number' ? p.contentBlockIndex : 0;
    switch (type) {
      case 'contentBlockStart': {
        const tu = isObj(p.start) && isObj(p.start.toolUse) ? p.start.toolUse : null;
        if (tu && typeof tu.toolUseId === 'string' && typeof tu.name === 'string') {
          this.sawToolCall = true;
          this.open.add(index);
          out.push({ type: 'tool_call_start', index, id: tu.toolUseId, name: tu.name });
        }
        return;
      }
      case 'contentBlockDelta': {
        const d = isObj(p.delta) ? p.delta : {};
        this.open.add(index);
        if (typeof d.text === 'string') out.push({ type: 'text_delta', index, text: d.text });
        else if (isObj(d.toolUse) && typeof d.toolUse.input === 'string') out.push({ type: 'tool_call_delta', index, arguments: d.toolUse.input });
        else if (isObj(d.reasoningContent)) {
          const r = d.reasoningContent;
          if (typeof r.text === 'string') out.push({ type: 'reasoning_delta', index, text: r.text });
          if (typeof r.signature === 'string') out.push({ type: 'reasoning_signature', index, signature: r.signature });
          if (typeof r.redactedContent === 'string') out.push({ type: 'redacted_reasoning', index, data: r.redactedContent });
        }
        return;
      }
      case 'contentBlockStop':
        if (this.open.delete(index)) out.push({ type: 'part_end', index });
        return;
      case 'messageStop':
        for (const i of this.open) out.push({ type: 'part_end', index: i });
        this.open.clear();
        this.stopped = true;
        out.push({ type: 'finish', finish_reason: converseFinish(p.stopReason, this.sawToolCall), native_finish_reason: typeof p.stopReason === 'string' ? p.stopReason : null });
        return;
      case 'metadata':
        this.usage = converseUsage(p.usage) ?? this.usage;
        if (this.stopped) out.push(...this.finishUsage());
        return;
      default:
        return; // messageStart and events the IR does not carry
    }
  }
}
