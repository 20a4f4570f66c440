/**
 * The one server-sent-events reader of the upstream protocols, over `eventsource-parser` (any chunk boundary,
 * LF / CRLF / CR line ends, comments, multi-line data, `retry`/`id` fields): text in, complete events out.
 *
 * A stream may run as long as its timeouts allow, but no single event may grow without bound: text fed without an
 * event completing is counted, and beyond `sseLimits.eventChars` the stream is refused (502) instead of buffered.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { UpstreamError } from '../core/provider-errors.js';

export type SseEvent = EventSourceMessage;

/** 32 Mi characters: far above any real event (a streamed image part included). */
export const DEFAULT_SSE_EVENT_CHARS = 32 * 1024 * 1024;

/**
 * The bound on one event, process-wide: the gateway lowers it to `GATEWAY_UPSTREAM_MAX_BYTES` when that is smaller
 * (src/gateway.ts).
 */
export const sseLimits = { eventChars: DEFAULT_SSE_EVENT_CHARS };

export const eventTooLarge = () => new UpstreamError(502, `Provider sent a stream event larger than ${sseLimits.eventChars} characters`, 'provider_unavailable', 200, null);

/**
 * Counts the text fed since an event last completed (an upper bound: the text after the last event of a feed is not
 * separated out, so the count may lag by one chunk) and throws past the bound.
 */
export class SseEventBound {
  private pending = 0;

  /** After feeding `chars` characters of which `events` completed that many events. */
  fed(chars: number, events: number): void {
    this.pending = events > 0 ? 0 : this.pending + chars;
    if (this.pending > sseLimits.eventChars) throw eventTooLarge();
  }
}

export class SseParser {
  private readonly events: EventSourceMessage[] = [];
  private readonly parser = createParser({ onEvent: (ev) => this.events.push(ev) });
  private readonly bound = new SseEventBound();

  /** Feeds the next piece of the body; returns the events it completed. Throws UpstreamError past the event bound. */
  feed(text: string): SseEvent[] {
    this.parser.feed(text);
    this.bound.fed(text.length, this.events.length);
    return this.events.length === 0 ? [] : this.events.splice(0);
  }

  /** End of input: a pending event whose terminating blank line never came is dispatched. */
  flush(): SseEvent[] {
    this.parser.feed('\n\n');
    return this.events.splice(0);
  }
}
