/** The OpenAI Responses API's event stream decoded into IR stream events (the protocol: upstream.ts). */
import { UpstreamError } from '../../core/provider-errors.js';
import { parseStreamData } from '../openai/ir-upstream.js';
import { SseParser } from '../sse.js';
import { checkResponsesEvent } from './schemas.js';
import { CUSTOM_OPEN, customArgs, customPiece, finishOf, imageMediaType, irUsageFromResponses, isObj, num, responsesError, str, type Obj } from './upstream.js';
import { imageData } from '../images.js';
import type { IrStreamEvent } from '../../core/ir.js';
import type { RawDelta, StreamDecoder } from '../../core/adapters.js';
import type { ReadBytes } from '../../core/byte-shape.js';
import { utf8Of } from '../../core/json-scan.js';
import { newResponsesMemo, recallResponsesDelta, scanResponsesDelta, type ScannedDelta } from './stream-scan.js';

/** Characters of raw deltas' text kept undecoded at most (see rawTaken). */
const RAW_PIECES = 4096;

/**
 * Decoder of a Responses event stream. IR indexes are allocated per output part in order of appearance (a content
 * part of a message, a summary part or reasoning-text part of a reasoning item, a function call, the encrypted
 * reasoning); the parts of an output item end with `response.output_item.done`. Text the server put only in the
 * `done` item (no deltas) is emitted then, so the IR is complete either way. The stream ends with
 * `response.completed` / `response.incomplete` (finish + usage), `response.failed` or `error` (IR error event).
 * An `image_generation_call` item (the hosted image tool) is an IR image when its `output_item.done` carries the
 * result, after `image_partial` events for its `response.image_generation_call.partial_image` previews.
 * - `rawDelta` / `rawTaken`: the common text and function-call-argument deltas recognized in their bytes
 *   (stream-scan.ts), for parts already started, decoded by nobody (services/codec-ir-bytes.ts). Their text is kept
 *   undecoded (the JSON string's inside, Latin-1 text of its bytes) until an event needs the text emitted so far.
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
  /** Output index → IR index of an image_generation_call item (an image is a part of its own: no part_end). */
  private readonly imageSlots = new Map<number, number>();

  private readonly raw: RawDelta = { kind: 'text_delta', index: 0, buf: '', from: 0, to: 0 };
  private readonly scanned: ScannedDelta = { item: 0, part: 0 };
  private readonly memo = newResponsesMemo();
  /** The slot of the last delta taken raw (its key and IR index), and of the last one recognized. */
  private rawKey: string | null = null;
  private rawPieces = '';
  private lastItem = -1;
  private lastPart = -2;
  private lastKey = '';
  private lastIndex = 0;

  /**
   * A plain text delta (or function call arguments) whose part is already open: what onEvent would emit, undecoded.
   * Changes no state; `rawTaken` does, once the delta was written raw.
   */
  rawDelta(read: ReadBytes, start: number, end: number): RawDelta | null {
    if (!this.started || this.terminal) return null;
    const d = this.raw;
    const at = this.scanned;
    if (!scanResponsesDelta(read, start, end, d, at, this.memo)) return null;
    return this.slotted(d, at);
  }

  rawEnd = 0;

  /** rawDelta of the event from `start`, its end not known: by the memo alone (see StreamDecoder). */
  rawDeltaFrom(read: ReadBytes, start: number, limit: number): RawDelta | null {
    if (!this.started || this.terminal) return null;
    const d = this.raw;
    const at = this.scanned;
    const end = recallResponsesDelta(read, start, limit, d, at, this.memo);
    if (end === -1 || end + 1 >= limit || read.bytes[end] !== 0x0a || read.bytes[end + 1] !== 0x0a) return null;
    this.rawEnd = end;
    return this.slotted(d, at);
  }

  /** `d` (recognized, at `at`) with its IR index, or null when its part is not open. */
  private slotted(d: RawDelta, at: ScannedDelta): RawDelta | null {
    if (at.item !== this.lastItem || at.part !== this.lastPart) {
      const key = at.part < 0 ? `${at.item}:fc` : `${at.item}:c${at.part}`;
      const index = this.slots.get(key);
      if (index === undefined) return null; // the part starts: through onEvent
      this.lastItem = at.item;
      this.lastPart = at.part;
      this.lastKey = key;
      this.lastIndex = index;
    }
    d.index = this.lastIndex;
    return d;
  }

  /** The delta `rawDelta` returned last was written raw: its text counts as emitted (as `delta` records it). */
  rawTaken(d: RawDelta): void {
    if (this.rawKey !== this.lastKey) {
      this.flushRaw();
      this.rawKey = this.lastKey;
    }
    this.rawPieces += d.buf.slice(d.from + 1, d.to - 1);
    // The pieces are slices of the reads: decoded every few KB, so that they do not keep the stream's reads alive.
    if (this.rawPieces.length > RAW_PIECES) this.flushRaw();
  }

  /** The raw deltas' text, decoded, added to what their slot emitted. */
  private flushRaw(): void {
    const key = this.rawKey;
    if (key === null) return;
    const text = JSON.parse(`"${utf8Of(this.rawPieces, 0, this.rawPieces.length)}"`) as string;
    this.emitted.set(key, (this.emitted.get(key) ?? '') + text);
    this.rawKey = null;
    this.rawPieces = '';
  }

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

  private imageSlot(item: number): number {
    let i = this.imageSlots.get(item);
    if (i === undefined) this.imageSlots.set(item, (i = this.next++));
    return i;
  }

  /** Completes an output item from its final form and ends its parts. */
  private itemDone(item: number, it: Obj, out: IrStreamEvent[]): void {
    if (this.closedItems.has(item)) return;
    this.closedItems.add(item);
    if (it.type === 'image_generation_call') {
      const data = str(it.result);
      if (data) out.push({ type: 'image', index: this.imageSlot(item), data: imageData(data, 'image_generation_call.result'), media_type: imageMediaType(data, it.output_format) });
      return;
    }
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
    this.flushRaw(); // every decoded event sees all the text emitted before it
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
      case 'response.image_generation_call.partial_image':
        out.push({ type: 'image_partial', index: this.imageSlot(item), data: imageData(ev.partial_image_b64, 'partial_image_b64'), partial_index: num(ev.partial_image_index) });
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
        const usage = irUsageFromResponses(r.usage, r.tool_usage);
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
