/**
 * Content filters over a streamed text (a reply's deltas), without holding the whole stream: each push scans the
 * carry-over plus the new chunk, emits everything up to `carry` characters before the end (moved back to the start of
 * any match that reaches past that point), and keeps the rest for the next push. A match is therefore redacted even
 * when it is split across chunks, as long as it is at most `carry` characters long; the held-back text is bounded by
 * `carry` plus one chunk. A `block` match stops the stream: nothing more is emitted.
 */
import { applyRedactions } from './engine.js';
import type { CompiledFilter, Span } from './types.js';

export interface StreamStep {
  /** Text safe to send now (redacted). */
  text: string;
  /** The blocking filter, when one matched: the caller ends the stream (finish_reason content_filter). */
  block: CompiledFilter | null;
}

export class StreamRedactor {
  private buf = '';
  private blocked: CompiledFilter | null = null;
  /** Matches per filter in the text emitted so far (for the pipeline). */
  readonly counts = new Map<CompiledFilter, number>();

  constructor(
    private readonly filters: CompiledFilter[],
    private readonly role = 'assistant',
    readonly carry = 256,
  ) {}

  push(chunk: string): StreamStep {
    if (this.blocked) return { text: '', block: this.blocked };
    this.buf += chunk;
    return this.flush(false);
  }

  /** The end of the stream: everything held back, redacted. */
  end(): StreamStep {
    if (this.blocked) return { text: '', block: this.blocked };
    return this.flush(true);
  }

  private flush(final: boolean): StreamStep {
    const text = this.buf;
    const found: Array<{ f: CompiledFilter; s: Span }> = [];
    for (const f of this.filters) {
      if (f.roles && !f.roles.has(this.role)) continue;
      for (const s of f.find(text)) found.push({ f, s });
    }
    let cut = final ? text.length : Math.max(0, text.length - this.carry);
    // A match reaching into the held-back tail may still grow: it is decided later, so `cut` moves before it (again
    // while another match straddles the new cut). Matches ending before `cut` are final.
    for (let moved = true; moved; ) {
      moved = false;
      for (const { s } of found) if (s.start < cut && s.end > cut) [cut, moved] = [s.start, true];
    }
    const done = found.filter(({ s }) => s.end <= cut);
    for (const { f } of done) this.counts.set(f, (this.counts.get(f) ?? 0) + 1);
    const block = done.find(({ f }) => f.action === 'block');
    if (block) {
      this.blocked = block.f;
      this.buf = '';
      return { text: '', block: block.f };
    }
    const redact = done.filter(({ f }) => f.action === 'redact').map(({ f, s }) => ({ ...s, label: f.label }));
    const out = applyRedactions(text.slice(0, cut), redact);
    this.buf = text.slice(cut);
    return { text: out, block: null };
  }
}
