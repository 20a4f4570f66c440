/**
 * Decoder of `streamGenerateContent?alt=sse`: each SSE event is `data: <GenerateContentResponse JSON>` (events end
 * with a blank line; Google sends CRLF). Text arrives in any chunking: the shared SSE parser (../sse.ts) reassembles events.
 *
 * Per chunk, each candidate part becomes deltas under the same rules as response.ts:
 * - consecutive text parts → `text_delta`s of one text part; consecutive thought parts → `reasoning_delta`s of one
 *   reasoning part (a signature on a thought part → `reasoning_signature` on it, which ends it);
 * - a `thoughtSignature` on a non-thought part (often an empty text part in the last chunk) → a new reasoning part with
 *   only `reasoning_signature`, ahead of the part it came on;
 * - a functionCall (Gemini sends whole calls) → `tool_call_start` + one `tool_call_delta` with the full arguments JSON;
 * - a part ends (`part_end`) when a part of another kind starts, and at the end.
 * Indexes are assigned in order of appearance, so they are stable whatever the chunk boundaries.
 *
 * `finish` and `usage` are emitted by `end()`: the finish reason is the last one seen (old models repeat it on every
 * chunk), usage comes from the last `usageMetadata` (each chunk carries running totals). An `{"error": …}` event
 * becomes an IR `error` event and ends the decoding; `end()` throws UpstreamError(502) when neither a finishReason nor
 * a prompt block was seen, or when the body ended in the middle of an event (the stream was cut).
 */
import type { IrStreamEvent } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import type { StreamDecoder } from '../../core/adapters.js';
import { SseParser } from '../sse.js';
import { streamErrorEvent } from './errors.js';
import { checkGeminiChunk } from './schemas.js';
import { CallIds, mapFinishReason, mapUsage } from './response.js';
import { isObj, type GeminiPart, type GeminiResponse, type GeminiUsageMetadata } from './types.js';

type OpenKind = 'text' | 'reasoning';

class GeminiStreamDecoder implements StreamDecoder {
  private readonly sse = new SseParser();
  private started = false;
  private ids = new CallIds(null);
  private next = 0;
  private open: { kind: OpenKind; index: number } | null = null;
  private finish: string | null = null;
  private block: string | null = null;
  private toolCalls = false;
  private usage: GeminiUsageMetadata | null = null;
  private failed = false;
  private ended = false;

  push(text: string): IrStreamEvent[] {
    const out: IrStreamEvent[] = [];
    for (const ev of this.sse.feed(text)) this.event(ev.data, out, true);
    return out;
  }

  end(): IrStreamEvent[] {
    if (this.ended) return [];
    this.ended = true;
    const data = this.sse.flush().map((ev) => ev.data);
    const out: IrStreamEvent[] = [];
    // A last event without its blank line: used when complete; cut in the middle, the stream is incomplete even when
    // an earlier chunk carried a finishReason (older models repeat it on every chunk).
    for (const d of data) {
      if (this.failed || d.trim() === '' || d === '[DONE]') continue;
      try {
        JSON.parse(d);
      } catch {
        throw new UpstreamError(502, 'Provider stream ended in the middle of an event', 'provider_unavailable', null, d.slice(0, 4096));
      }
      this.event(d, out, false);
    }
    if (this.failed) return out;
    if (this.finish === null && this.block === null) {
      throw new UpstreamError(502, 'Provider stream ended before a finishReason', 'provider_unavailable', null, null);
    }
    this.close(out);
    if (this.finish !== null) {
      out.push({ type: 'finish', finish_reason: mapFinishReason(this.finish, this.toolCalls), native_finish_reason: this.finish });
    } else {
      out.push({ type: 'finish', finish_reason: 'content_filter', native_finish_reason: this.block });
    }
    const usage = mapUsage(this.usage);
    if (usage) out.push({ type: 'usage', usage });
    return out;
  }

  private event(data: string, out: IrStreamEvent[], strict: boolean): void {
    if (this.failed || data.trim() === '' || data === '[DONE]') return;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      if (!strict) return;
      throw new UpstreamError(502, 'Provider sent an invalid stream chunk', 'server', null, data.slice(0, 4096));
    }
    if (Array.isArray(chunk)) chunk = chunk[0];
    if (!isObj(chunk)) {
      if (!strict) return;
      throw new UpstreamError(502, 'Provider sent an invalid stream chunk', 'server', null, chunk);
    }
    const r = chunk as GeminiResponse;
    if (isObj(r.error)) {
      this.close(out);
      out.push(streamErrorEvent(r));
      this.failed = true;
      return;
    }
    checkGeminiChunk(r);
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: typeof r.responseId === 'string' ? r.responseId : null, model: typeof r.modelVersion === 'string' ? r.modelVersion : null });
    }
    this.ids.seen(typeof r.responseId === 'string' ? r.responseId : null);
    if (isObj(r.usageMetadata)) this.usage = r.usageMetadata;
    if (isObj(r.promptFeedback) && typeof r.promptFeedback.blockReason === 'string') this.block = r.promptFeedback.blockReason;
    const cand = Array.isArray(r.candidates) ? r.candidates[0] : undefined;
    if (!isObj(cand)) return;
    const parts = isObj(cand.content) && Array.isArray(cand.content.parts) ? cand.content.parts : [];
    for (const p of parts) if (isObj(p)) this.part(p, out);
    if (typeof cand.finishReason === 'string' && cand.finishReason !== '') this.finish = cand.finishReason;
  }

  private close(out: IrStreamEvent[]): void {
    if (this.open) out.push({ type: 'part_end', index: this.open.index });
    this.open = null;
  }

  /** The open part of `kind`, opening a new one (and closing the current one) when needed. */
  private ensure(kind: OpenKind, out: IrStreamEvent[]): number {
    if (this.open?.kind === kind) return this.open.index;
    this.close(out);
    this.open = { kind, index: this.next++ };
    return this.open.index;
  }

  /** A signature-only reasoning part. */
  private signature(sig: string, out: IrStreamEvent[]): void {
    this.close(out);
    const index = this.next++;
    out.push({ type: 'reasoning_signature', index, signature: sig, origin: 'google' }, { type: 'part_end', index });
  }

  private part(p: GeminiPart, out: IrStreamEvent[]): void {
    const sig = typeof p.thoughtSignature === 'string' && p.thoughtSignature !== '' ? p.thoughtSignature : undefined;
    if (p.thought === true) {
      const text = typeof p.text === 'string' ? p.text : '';
      if (text === '' && !sig) return;
      const index = this.ensure('reasoning', out);
      if (text !== '') out.push({ type: 'reasoning_delta', index, text });
      if (sig) {
        out.push({ type: 'reasoning_signature', index, signature: sig, origin: 'google' });
        this.close(out);
      }
      return;
    }
    if (sig) this.signature(sig, out);
    if (isObj(p.functionCall)) {
      this.close(out);
      const fc = p.functionCall;
      const index = this.next++;
      const id = this.ids.next(typeof fc.id === 'string' && fc.id !== '' ? fc.id : undefined);
      out.push(
        { type: 'tool_call_start', index, id, name: typeof fc.name === 'string' ? fc.name : '' },
        { type: 'tool_call_delta', index, arguments: JSON.stringify(isObj(fc.args) ? fc.args : {}) },
        { type: 'part_end', index },
      );
      this.toolCalls = true;
    } else if (typeof p.text === 'string') {
      if (p.text !== '') out.push({ type: 'text_delta', index: this.ensure('text', out), text: p.text });
    } else if (isObj(p.inlineData) && typeof p.inlineData.data === 'string' && p.inlineData.data !== '') {
      // A generated image (image output models): one event with the whole image.
      this.close(out);
      out.push({ type: 'image', index: this.next++, data: p.inlineData.data, media_type: typeof p.inlineData.mimeType === 'string' ? p.inlineData.mimeType : 'image/png' });
    } else {
      this.close(out); // another kind of part breaks the text run
    }
  }
}

export function createGeminiStreamDecoder(): StreamDecoder {
  return new GeminiStreamDecoder();
}
