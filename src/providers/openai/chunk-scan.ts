/**
 * The ordinary content chunk of an OpenAI chat stream, recognized without parsing it (services/chat-relay.ts relays
 * such chunks as read; the stream decoder's `rawDelta`, ir-stream.ts, passes their delta on undecoded). The relay scans a read as Latin-1 text (one character per byte, no decoding), so the checks here
 * work on that text: a strict pattern run by the regular-expression engine, which is faster here than a scan in
 * JavaScript or calls into Buffer's native methods per check.
 */
import type { RawDelta } from '../../core/adapters.js';
import { hasAt, JSON_STRING, NONEMPTY_JSON_STRING } from '../../core/json-scan.js';

export { hasAt };

/** Top-level fields a plain content chunk may carry besides its choice, with values that change nothing here. */
const INERT_FIELD = `"(?:system_fingerprint|service_tier)":(?:null|${JSON_STRING})`;
/**
 * How OpenAI ends every chunk but the last when usage is asked for (`stream_options.include_usage`, which the gateway
 * always asks for). The gateway's chunks carry no `usage` until the final one — as the hosted API's, whose SDK
 * refuses a `usage: null` — so a plain chunk ending so is relayed without it.
 */
export const USAGE_NULL_TAIL = ',"usage":null}';
/** Deltas that carry output and nothing to normalize: non-empty text, or a piece of one tool call's arguments. */
const PLAIN_DELTA = `\\{"content":${NONEMPTY_JSON_STRING}\\}|\\{"tool_calls":\\[\\{"index":(?:0|[1-9][0-9]{0,3}),"function":\\{"arguments":${JSON_STRING}\\}\\}\\]\\}`;
/**
 * The rest of an ordinary content chunk after the upstream's usual prefix, up to the blank line that ends its event:
 * one choice whose delta is a non-empty `content` string (or a tool call's next arguments), no finish reason, and only
 * inert fields besides. Such a chunk needs nothing from its parse — no error, usage, finish reason, reasoning or
 * provider field is possible, and the pattern admits valid JSON only (and no line break). Sticky: matched from
 * `lastIndex` (after the prefix).
 */
const PLAIN_REST_SOURCE = `(?:(?:${INERT_FIELD}),)*"choices":\\[\\{"index":0,"delta":(?:${PLAIN_DELTA})(?:,"logprobs":null)?,"finish_reason":null\\}\\](?:,(?:${INERT_FIELD}))*(?:,"usage":null)?\\}`;
const PLAIN_CONTENT_REST = new RegExp(`${PLAIN_REST_SOURCE}(?=\\n\\n)`, 'y');

/**
 * A whole plain content chunk's event as the upstream decoder reads it (ir-stream.ts's `rawDelta`): `data: `, the
 * usual prefix with any id, created and model, and the rest as above (sticky; its end is checked by the caller).
 */
const PLAIN_CONTENT_EVENT = new RegExp(`data: \\{"id":${JSON_STRING},"object":"chat\\.completion\\.chunk","created":(?:0|[1-9][0-9]{0,15}),"model":${JSON_STRING},${PLAIN_REST_SOURCE}`, 'y');

/** Whether `buf` (Latin-1 text of bytes) holds a plain content chunk from `from` (after the upstream prefix) to its event's end. */
export function plainChunkAt(buf: string, from: number): boolean {
  PLAIN_CONTENT_REST.lastIndex = from;
  return PLAIN_CONTENT_REST.test(buf);
}

/**
 * Whether `buf` from `start` to `end` (one event, its blank line excluded) is a plain content chunk with output. Then
 * `d` is filled in: `text_delta` (index 0) for content, else `tool_call_delta` with the chunk's tool call index; `from`
 * and `to` bound the string token (quotes included). False too for empty arguments (no output).
 */
export function plainChunkDelta(buf: string, start: number, end: number, d: RawDelta): boolean {
  PLAIN_CONTENT_EVENT.lastIndex = start;
  if (!PLAIN_CONTENT_EVENT.test(buf) || PLAIN_CONTENT_EVENT.lastIndex !== end) return false;
  // The first `"delta":{`: no string token can hold it (its quotes would be escaped).
  const at = buf.indexOf(DELTA, start) + DELTA.length;
  let stop = buf.lastIndexOf(FINISH, end);
  if (hasAt(buf, stop - LOGPROBS.length, LOGPROBS)) stop -= LOGPROBS.length;
  d.buf = buf;
  if (buf.charCodeAt(at + 1) === 0x63) {
    // {"content":…}
    d.kind = 'text_delta';
    d.index = 0;
    d.from = at + 10;
    d.to = stop - 1;
    return true;
  }
  // {"tool_calls":[{"index":N,"function":{"arguments":…}}]}
  let p = at + 23;
  let tool = 0;
  for (let c = buf.charCodeAt(p); c !== 0x2c; c = buf.charCodeAt(++p)) tool = tool * 10 + (c - 0x30);
  d.kind = 'tool_call_delta';
  d.index = tool;
  d.from = p + 25;
  d.to = stop - 4;
  return d.to - d.from > 2;
}

const DELTA = '"delta":{';
const FINISH = ',"finish_reason":null';
const LOGPROBS = ',"logprobs":null';
const CHOICE = '"choices":[{"index":0,"delta":{';
const FINISH_END = ',"finish_reason":null}]}';
const FINISH_END_NULL = ',"finish_reason":null}],"usage":null}';

/**
 * Characters of output in the plain chunk of `buf` from `from` to `end` (its data, PLAIN_CONTENT_REST matched): the
 * delta's text between `{"content":"` and `"}` (a tool call's framing counts a few characters more), in characters —
 * UTF-8 continuation bytes are not counted.
 */
export function plainChunkChars(buf: string, from: number, end: number): number {
  // The usual layout (no inert fields) is checked first: a search, forwards or backwards, costs more than the count.
  const start = (hasAt(buf, from, CHOICE) ? from + CHOICE.length : buf.indexOf(DELTA, from) + DELTA.length) + 11;
  let stop = hasAt(buf, end - FINISH_END.length, FINISH_END) ? end - FINISH_END.length : hasAt(buf, end - FINISH_END_NULL.length, FINISH_END_NULL) ? end - FINISH_END_NULL.length : buf.lastIndexOf(FINISH, end);
  if (buf.startsWith(LOGPROBS, stop - LOGPROBS.length)) stop -= LOGPROBS.length;
  stop -= 2;
  let n = stop - start;
  for (let i = start; i < stop; i++) if ((buf.charCodeAt(i) & 0xc0) === 0x80) n--;
  return n < 0 ? 0 : n;
}

/** Whether `data` is the upstream prefix followed by a plain content chunk (the form the tests and callers with text use). */
export function isPlainContentChunk(data: string, upstreamPrefix: string): boolean {
  const buf = Buffer.from(`${data}\n\n`).toString('latin1');
  const prefix = Buffer.from(upstreamPrefix).toString('latin1');
  return hasAt(buf, 0, prefix) && plainChunkAt(buf, prefix.length);
}

/** What follows the upstream prefix in a plain content chunk, as the client gets it (without a final `usage: null`). */
export function plainChunkRest(data: string, upstreamPrefix: string): string {
  return data.endsWith(USAGE_NULL_TAIL) ? `${data.slice(upstreamPrefix.length, data.length - USAGE_NULL_TAIL.length)}}` : data.slice(upstreamPrefix.length);
}
