/**
 * Content filters over a streamed reply in the internal representation (IR stream events), whatever the client's API:
 * the text (and reasoning) deltas of each part go through a StreamRedactor of their own, so a match split across
 * upstream chunks is redacted while only a bounded tail of each part (`carry` characters plus one chunk) is held back.
 * What a part holds back is released before any other kind of event (another part, a tool call, the finish), so the
 * order of events is kept. A `block` match ends the guarded stream: nothing more is emitted, and the caller ends the
 * client's stream with its API's error event.
 */
import type { IrStreamEvent } from '../ir.js';
import { pipelineEntries, type PipelineEntry } from './screen.js';
import { StreamRedactor } from './stream.js';
import type { CompiledFilter } from './types.js';

type DeltaType = 'text_delta' | 'reasoning_delta';

export class IrStreamGuard {
  private readonly parts = new Map<string, { type: DeltaType; index: number; r: StreamRedactor }>();
  /** The blocking filter, once one matched: nothing more is emitted. */
  blocked: CompiledFilter | null = null;

  constructor(
    private readonly filters: CompiledFilter[],
    private readonly carry = 256,
  ) {}

  /** The events to encode for these upstream events (redacted deltas; held-back tails released in order). */
  events(events: IrStreamEvent[]): IrStreamEvent[] {
    if (this.blocked) return [];
    const out: IrStreamEvent[] = [];
    for (const ev of events) {
      if (ev.type === 'text_delta' || ev.type === 'reasoning_delta') {
        const k = `${ev.type}:${ev.index}`;
        this.releaseExcept(k, out);
        if (this.blocked) return out;
        let part = this.parts.get(k);
        if (!part) this.parts.set(k, (part = { type: ev.type, index: ev.index, r: new StreamRedactor(this.filters, 'assistant', this.carry) }));
        const step = part.r.push(ev.text);
        if (step.block) return this.block(step.block, out);
        if (step.text) out.push({ type: ev.type, index: ev.index, text: step.text });
        continue;
      }
      if (ev.type !== 'usage' && ev.type !== 'start') {
        this.releaseExcept(null, out);
        if (this.blocked) return out;
      }
      out.push(ev);
    }
    return out;
  }

  /** The end of the upstream stream: every tail still held back. */
  end(): IrStreamEvent[] {
    if (this.blocked) return [];
    const out: IrStreamEvent[] = [];
    this.releaseExcept(null, out);
    return out;
  }

  /** What the filters did so far, as `gateway_metadata.pipeline` entries (stage `output`). */
  pipeline(): PipelineEntry[] {
    const counts = new Map<CompiledFilter, number>();
    for (const { r } of this.parts.values()) for (const [f, n] of r.counts) counts.set(f, (counts.get(f) ?? 0) + n);
    return pipelineEntries(counts, 'output');
  }

  private releaseExcept(keep: string | null, out: IrStreamEvent[]): void {
    for (const [k, part] of this.parts) {
      if (k === keep) continue;
      const step = part.r.end();
      if (step.block) {
        this.block(step.block, out);
        return;
      }
      if (step.text) out.push({ type: part.type, index: part.index, text: step.text });
    }
  }

  private block(f: CompiledFilter, out: IrStreamEvent[]): IrStreamEvent[] {
    this.blocked = f;
    return out;
  }
}
