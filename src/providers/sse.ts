/**
 * The one server-sent-events reader of the upstream protocols, over `eventsource-parser` (any chunk boundary,
 * LF / CRLF / CR line ends, comments, multi-line data, `retry`/`id` fields): text in, complete events out.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export type SseEvent = EventSourceMessage;

export class SseParser {
  private readonly events: EventSourceMessage[] = [];
  private readonly parser = createParser({ onEvent: (ev) => this.events.push(ev) });

  /** Feeds the next piece of the body; returns the events it completed. */
  feed(text: string): SseEvent[] {
    this.parser.feed(text);
    return this.events.length === 0 ? [] : this.events.splice(0);
  }

  /** End of input: a pending event whose terminating blank line never came is dispatched. */
  flush(): SseEvent[] {
    this.parser.feed('\n\n');
    return this.events.splice(0);
  }
}
