/**
 * The Messages skin's event stream: IR stream events → Anthropic SSE (`message_start`, `content_block_start|delta|stop`,
 * `message_delta`, `message_stop`, `error`).
 */
import type { IrFinishReason, IrStreamEvent, IrUsage } from '../core/ir.js';
import type { AnswerMeta, RawDelta, StreamEncoder } from '../core/adapters.js';
import { defaultErrorType, sse, uncachedInput, type Json } from './common.js';
import { anthropicErrorType, stopReason, usageBody } from './messages-output.js';
import { signatureOf } from './messages-signing.js';

// ---- stream ------------------------------------------------------------------------------------------------------

type BlockKind = 'text' | 'thinking' | 'redacted_thinking' | 'tool_use';

/** A `content_block_delta` event around its block index and string, as `sse` serializes it (rawDelta). */
const RAW_HEAD = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":';
const RAW_TEXT = ',"delta":{"type":"text_delta","text":';
const RAW_JSON = ',"delta":{"type":"input_json_delta","partial_json":';

/**
 * IR events → Anthropic SSE. Anthropic blocks are strictly sequential (start, deltas, stop; then the next), and their
 * indexes are positions in the final `content`, so IR part indexes are remapped to 0, 1, 2… in order of appearance.
 * A part that resumes after another started gets a fresh block (text/thinking), except tool arguments and thinking
 * signatures, which go to their original block (a late delta, which the SDKs apply by index) so that the input JSON
 * and the signed thinking stay whole. Upstream decoders normally never interleave, so this is a safety net.
 */
export class MessagesStreamEncoder implements StreamEncoder {
  private started = false;
  private done = false;
  private next = 0;
  /** IR index → Anthropic block (current block per IR index). */
  private blocks = new Map<number, { index: number; kind: BlockKind }>();
  private open: { irIndex: number; index: number; kind: BlockKind } | null = null;
  private usage: IrUsage | null = null;
  private finishReason: IrFinishReason | null = null;
  private nativeFinish: string | null = null;
  private sawTool = false;
  private sawRefusal = false;
  /** Thinking blocks (by block index): their text so far, and whether a signature was sent. */
  private readonly thinking = new Map<number, { text: string; signed: boolean }>();

  constructor(private readonly meta: AnswerMeta) {}

  start(): string {
    // message_start waits for the first event so that it can carry input usage when the upstream sends it first.
    return '';
  }

  private messageStart(): string {
    if (this.started) return '';
    this.started = true;
    const u = this.usage;
    return sse('message_start', {
      type: 'message_start',
      message: {
        id: this.meta.id,
        type: 'message',
        role: 'assistant',
        model: this.meta.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        container: null,
        usage: {
          input_tokens: u ? uncachedInput(u) : 0,
          output_tokens: 0,
          cache_creation_input_tokens: u ? u.cache_write : 0,
          cache_read_input_tokens: u ? u.cache_read : 0,
          cache_creation: null,
          inference_geo: null,
          output_tokens_details: null,
          server_tool_use: null,
          service_tier: 'standard',
        },
      },
    });
  }

  private closeOpen(): string {
    if (!this.open) return '';
    const index = this.open.index;
    let out = '';
    // Thinking no upstream signed leaves with the gateway's signature (a real one arriving later replaces it).
    const thinking = this.thinking.get(index);
    if (thinking && !thinking.signed) {
      thinking.signed = true;
      const signature = signatureOf(thinking.text, undefined);
      if (signature) out += this.delta(index, { type: 'signature_delta', signature });
    }
    this.open = null;
    return out + sse('content_block_stop', { type: 'content_block_stop', index });
  }

  /** Makes sure the IR part `irIndex` has an open block of `kind`; returns the frames needed and the block index. */
  private ensure(irIndex: number, kind: BlockKind, contentBlock: () => Json): { out: string; index: number } {
    if (this.open && this.open.irIndex === irIndex && this.open.kind === kind) return { out: '', index: this.open.index };
    const known = this.blocks.get(irIndex);
    if (known && known.kind === 'tool_use' && kind === 'tool_use') return { out: '', index: known.index }; // late arguments
    let out = this.messageStart() + this.closeOpen();
    const index = this.next++;
    this.blocks.set(irIndex, { index, kind });
    this.open = { irIndex, index, kind };
    out += sse('content_block_start', { type: 'content_block_start', index, content_block: contentBlock() });
    return { out, index };
  }

  private delta(index: number, delta: Json): string {
    return sse('content_block_delta', { type: 'content_block_delta', index, delta });
  }

  event(ev: IrStreamEvent): string {
    if (this.done) return '';
    switch (ev.type) {
      case 'start':
        return '';
      case 'usage':
        this.usage = ev.usage;
        return '';
      case 'text_delta':
      case 'refusal_delta': {
        if (ev.type === 'refusal_delta') this.sawRefusal = true;
        if (ev.text === '') return '';
        const b = this.ensure(ev.index, 'text', () => ({ type: 'text', text: '', citations: null }));
        return b.out + this.delta(b.index, { type: 'text_delta', text: ev.text });
      }
      case 'reasoning_delta': {
        if (ev.text === '') return '';
        const b = this.ensure(ev.index, 'thinking', () => ({ type: 'thinking', thinking: '', signature: '' }));
        const t = this.thinking.get(b.index);
        if (t) t.text += ev.text;
        else this.thinking.set(b.index, { text: ev.text, signed: false });
        return b.out + this.delta(b.index, { type: 'thinking_delta', thinking: ev.text });
      }
      case 'reasoning_signature': {
        // A signature that arrives after its thinking block was closed still belongs to that block. Another provider's
        // (a Gemini thoughtSignature) rides inside the gateway's signature of the block's text (signatureOf).
        const known = this.blocks.get(ev.index);
        if (known?.kind === 'thinking' && this.open?.index !== known.index) {
          return this.delta(known.index, { type: 'signature_delta', signature: signatureOf(this.thinking.get(known.index)?.text ?? '', ev.signature, ev.origin) });
        }
        const b = this.ensure(ev.index, 'thinking', () => ({ type: 'thinking', thinking: '', signature: '' }));
        // The upstream signed this block: no gateway signature when it closes.
        const text = this.thinking.get(b.index)?.text ?? '';
        this.thinking.set(b.index, { text, signed: true });
        return b.out + this.delta(b.index, { type: 'signature_delta', signature: signatureOf(text, ev.signature, ev.origin) });
      }
      case 'redacted_reasoning': {
        // A redacted block carries its data on content_block_start and has no deltas.
        let out = this.messageStart() + this.closeOpen();
        const index = this.next++;
        this.blocks.set(ev.index, { index, kind: 'redacted_thinking' });
        this.open = { irIndex: ev.index, index, kind: 'redacted_thinking' };
        out += sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: ev.data } });
        return out;
      }
      case 'tool_call_start': {
        this.sawTool = true;
        const b = this.ensure(ev.index, 'tool_use', () => ({ type: 'tool_use', id: ev.id, name: ev.name, input: {}, caller: { type: 'direct' } }));
        return b.out;
      }
      case 'tool_call_delta': {
        this.sawTool = true;
        const b = this.ensure(ev.index, 'tool_use', () => ({ type: 'tool_use', id: `toolu_${this.meta.id}_${ev.index}`, name: '', input: {}, caller: { type: 'direct' } }));
        if (ev.arguments === '') return b.out;
        return b.out + this.delta(b.index, { type: 'input_json_delta', partial_json: ev.arguments });
      }
      case 'part_end':
        return this.open && this.open.irIndex === ev.index ? this.closeOpen() : '';
      case 'finish':
        this.finishReason = ev.finish_reason;
        this.nativeFinish = ev.native_finish_reason;
        return this.messageStart() + this.closeOpen();
      case 'image_partial':
      case 'image': // generated images are rendered by the chat completions API only (docs/images.md)
        return '';
      case 'error':
        return this.error(ev.status, ev.message, ev.error_type, this.meta);
    }
  }

  /** A delta to the open block of its part (text, or a tool's input JSON) from a template, its string as it came. */
  rawDelta(d: RawDelta): string | null {
    const open = this.open;
    if (this.done || open === null || open.irIndex !== d.index) return null;
    const token = d.buf.slice(d.from, d.to);
    if (d.kind === 'text_delta') return open.kind === 'text' ? `${RAW_HEAD}${open.index}${RAW_TEXT}${token}}}\n\n` : null;
    return open.kind === 'tool_use' ? `${RAW_HEAD}${open.index}${RAW_JSON}${token}}}\n\n` : null;
  }

  finish(usage: IrUsage | null, meta: AnswerMeta): string {
    if (this.done) return '';
    const u = usage ?? this.usage ?? { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 };
    let out = this.messageStart() + this.closeOpen();
    this.done = true;
    let finish: IrFinishReason = this.finishReason ?? (this.sawTool ? 'tool_calls' : 'stop');
    if (finish === 'stop' && this.sawRefusal) finish = 'content_filter';
    const usageOut = usageBody(u, meta, null);
    delete usageOut.cache_creation;
    delete usageOut.inference_geo;
    delete usageOut.service_tier;
    out += sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReason(finish, this.nativeFinish), stop_sequence: null, stop_details: null, container: null },
      usage: usageOut,
    });
    const stop: Json = { type: 'message_stop' };
    if (meta.gateway_metadata) stop.gateway_metadata = meta.gateway_metadata;
    out += sse('message_stop', stop);
    return out;
  }

  error(status: number, message: string, errorType: string, meta: AnswerMeta): string {
    if (this.done) return '';
    this.done = true;
    const ev: Json = { type: 'error', error: { type: anthropicErrorType(status), message, error_type: errorType || defaultErrorType(status) } };
    if (meta.gateway_metadata) ev.gateway_metadata = meta.gateway_metadata;
    return sse('error', ev);
  }
}
