/** OpenAI chat completion SSE chunks → IR stream events (ir-upstream.ts's stream decoder). */
import { SseParser } from '../sse.js';
import { checkChatChunk } from './schemas.js';
import type { IrStreamEvent, IrUsage } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import type { RawDelta, StreamDecoder } from '../../core/adapters.js';
import { plainChunkDelta } from './chunk-scan.js';
import { DeltaMemo } from '../../core/delta-memo.js';
import type { ReadBytes } from '../../core/byte-shape.js';
import { streamError } from './chat.js';
import { generatedImages, irFinish, irUsageFromOpenAI, isObj, parseStreamData, str, type Obj } from './ir-shared.js';
import { argsText, contentText } from './ir-answer.js';

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

  private readonly raw: RawDelta = { kind: 'text_delta', index: 0, buf: '', from: 0, to: 0 };
  /** The fixed bytes of the last plain chunk (chunk-scan.ts): the next ones are checked against them. */
  private readonly memo = new DeltaMemo();

  /**
   * A plain content chunk (chunk-scan.ts) whose text goes to the text part already open, or whose arguments go to a
   * tool call already started: what onData would emit, undecoded (services/codec-ir-bytes.ts).
   */
  rawDelta(read: ReadBytes, start: number, end: number): RawDelta | null {
    if (!this.started || this.finished || this.done || this.errored) return null;
    const d = this.raw;
    if (!plainChunkDelta(read, start, end, d, this.memo)) return null;
    if (d.kind === 'text_delta') {
      const index = this.slots.get('text');
      if (index === undefined) return null;
      d.index = index;
      return d;
    }
    const st = this.tools.get(d.index);
    if (st === undefined || st.index === null) return null;
    this.lastTool = d.index; // as onToolDelta: the call continued last
    d.index = st.index;
    return d;
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
