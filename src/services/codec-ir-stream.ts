/**
 * The stream session of an attempt that goes through the internal representation (services/codec-ir.ts): the upstream
 * protocol's decoder → IR stream events → output content guardrails → response-healing → the inbound API's encoder.
 * Nothing goes to the client before the first content event, so a failure until then may still fall back.
 */
import type { IrStreamEvent, IrUsage } from '../core/ir.js';
import { UpstreamError } from '../core/provider-errors.js';
import { IrStreamGuard, type CompiledFilter } from '../core/content-filters/index.js';
import type { AnswerMeta, StreamDecoder, StreamEncoder } from '../core/adapters.js';
import type { AnyPipelineEntry as PipelineEntry } from '../core/plugins.js';
import type { StreamHealer } from './plugins/healing.js';
import type { StreamSession } from './codec-types.js';
import { irToTokens } from './codec-usage.js';
import { deltaTokens } from './chat-relay.js';

const REASONING_EVENTS = new Set(['reasoning_delta', 'reasoning_signature', 'redacted_reasoning']);
export const CONTENT_EVENTS = new Set(['text_delta', 'reasoning_delta', 'reasoning_signature', 'redacted_reasoning', 'refusal_delta', 'tool_call_start', 'tool_call_delta', 'image', 'image_partial']);

/** Characters of output in an IR stream event. */
function irDeltaChars(ev: IrStreamEvent): number {
  const e = ev as { text?: unknown; arguments?: unknown; name?: unknown; delta?: unknown };
  return [e.text, e.arguments, e.name, e.delta].reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 0), 0);
}

export interface IrStreamOptions {
  /** `reasoning.exclude`: reasoning events are not sent to the client. */
  exclude: boolean;
  /** Content guardrails on the output (core/content-filters/ir-stream.ts): deltas redacted as they pass. */
  filters: CompiledFilter[] | null;
  /** response-healing (services/plugins/healing.ts): after the guardrails, on what the client receives. */
  healer: StreamHealer | null;
}

export class IrStreamSession implements StreamSession {
  readonly binary: boolean;
  contentStarted = false;
  failure: UpstreamError | null = null;
  /** Output produced upstream, counted before the guardrails hold back or drop any (what a cut stream bills). */
  producedTokens = 0;
  finish: string | null = null;
  native: string | null = null;
  upstreamId: string | null = null;
  private lastUsage: IrUsage | null = null;
  private pending: IrStreamEvent[] = [];
  private readonly guard: IrStreamGuard | null;

  constructor(
    private readonly decoder: StreamDecoder,
    private readonly encoder: StreamEncoder,
    private readonly o: IrStreamOptions,
  ) {
    this.binary = decoder.pushBytes !== undefined;
    this.guard = o.filters ? new IrStreamGuard(o.filters) : null;
  }

  get blocked(): CompiledFilter | null {
    return this.guard?.blocked ?? null;
  }

  outputPipeline(): PipelineEntry[] {
    return [...(this.guard?.pipeline() ?? []), ...(this.o.healer?.pipeline() ?? [])];
  }

  push(input: string | Uint8Array): string {
    let events: IrStreamEvent[];
    try {
      events = typeof input === 'string' ? this.decoder.push(input) : this.decoder.pushBytes!(input);
    } catch (err) {
      throw err instanceof UpstreamError ? err : new UpstreamError(502, 'Provider sent an invalid stream', 'provider_unavailable', 200, String(err));
    }
    const out = this.guard ? this.guard.events(this.count(events)) : this.count(events);
    const healer = this.o.healer;
    return this.handle(healer && !this.guard?.blocked ? healer.events(out) : out);
  }

  end(): string {
    const events = this.count(this.decoder.end());
    const out = this.guard ? [...this.guard.events(events), ...this.guard.end()] : events;
    const healer = this.o.healer;
    return this.handle(healer && !this.guard?.blocked ? [...healer.events(out), ...healer.end()] : out);
  }

  finishOut(m: AnswerMeta): string {
    return this.flushPending() + this.encoder.finish(this.lastUsage, m);
  }

  errorOut(status: number, message: string, errorType: string, m: AnswerMeta): string {
    return this.encoder.error(status, message, errorType, m);
  }

  usage() {
    return irToTokens(this.lastUsage);
  }

  private count(events: IrStreamEvent[]): IrStreamEvent[] {
    for (const ev of events) if (CONTENT_EVENTS.has(ev.type)) this.producedTokens += deltaTokens(irDeltaChars(ev));
    return events;
  }

  /** The start of the answer and the events held back until the first content, once. */
  private flushPending(): string {
    if (this.contentStarted && this.pending.length === 0) return '';
    let out = '';
    if (!this.contentStarted) out += this.encoder.start();
    for (const p of this.pending) out += this.encoder.event(p);
    this.pending = [];
    return out;
  }

  private handle(events: IrStreamEvent[]): string {
    let out = '';
    for (const ev of events) {
      switch (ev.type) {
        case 'error': {
          const err = new UpstreamError(ev.status, ev.message, ev.error_type as UpstreamError['type'], null, ev.raw ?? null);
          if (out === '') throw err;
          this.failure = err;
          return out;
        }
        case 'usage':
          this.lastUsage = ev.usage;
          continue; // reported once, by finishOut
        case 'start':
          this.upstreamId = ev.id;
          break;
        case 'finish':
          this.finish = ev.finish_reason;
          this.native = ev.native_finish_reason;
          break;
      }
      if (this.o.exclude && REASONING_EVENTS.has(ev.type)) continue;
      if (!this.contentStarted) {
        // Nothing goes to the client before content: a failure until then may still fall back.
        this.pending.push(ev);
        if (!CONTENT_EVENTS.has(ev.type)) continue;
        out += this.encoder.start();
        this.contentStarted = true;
        for (const p of this.pending) out += this.encoder.event(p);
        this.pending = [];
        continue;
      }
      out += this.encoder.event(ev);
    }
    return out;
  }
}
