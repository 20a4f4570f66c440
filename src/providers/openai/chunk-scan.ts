/**
 * The ordinary content chunk of an OpenAI chat stream, recognized without parsing it (services/chat-relay.ts relays
 * such chunks as read; the stream decoder's `rawDelta`, ir-stream.ts, passes their delta on undecoded). The relay scans
 * a read as Latin-1 text (one character per byte, no decoding), so the checks here work on that text: strict patterns
 * run by the regular-expression engine, which is faster here than a scan in JavaScript or calls into Buffer's native
 * methods per check. A chunk is matched in three sticky steps (its choice's head, the delta, the tail) so that where
 * the delta starts and ends is known from `lastIndex` without searching the text again.
 */
import type { RawDelta } from '../../core/adapters.js';
import type { ReadBytes } from '../../core/byte-shape.js';
import type { DeltaMemo } from '../../core/delta-memo.js';
import { hasAt, JSON_STRING, jsonStringLength, NONEMPTY_JSON_STRING } from '../../core/json-scan.js';

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
/** A plain chunk after the upstream's usual prefix, up to its delta: only inert fields, then the one choice's head. */
const CHOICE_HEAD_SOURCE = `(?:${INERT_FIELD},)*"choices":\\[\\{"index":0,"delta":`;
/** After the delta: no finish reason, only inert fields (the final `usage: null` and `}` are not included). */
const TAIL_SOURCE = `(?:,"logprobs":null)?,"finish_reason":null\\}\\](?:,${INERT_FIELD})*`;

const CHOICE_HEAD = new RegExp(CHOICE_HEAD_SOURCE, 'y');
const DELTA = new RegExp(`(?:${PLAIN_DELTA})`, 'y');
/** The tail up to the optional `,"usage":null` and the closing brace, which must end the event (its blank line next). */
const TAIL_TO_EVENT_END = new RegExp(`${TAIL_SOURCE}(?=(?:,"usage":null)?\\}\\n\\n)`, 'y');
/** The whole tail, closing brace included (its end is checked by the caller). */
const TAIL = new RegExp(`${TAIL_SOURCE}(?:,"usage":null)?\\}`, 'y');
/** `data: ` and the upstream's usual prefix with any id, created and model (ir-stream.ts's `rawDelta`). */
const EVENT_PREFIX = new RegExp(`data: \\{"id":${JSON_STRING},"object":"chat\\.completion\\.chunk","created":(?:0|[1-9][0-9]{0,15}),"model":${JSON_STRING},`, 'y');

/**
 * Where the parts of the plain chunk that `plainChunkAt` matched are: its delta from `delta` (the `{`) to `deltaEnd`
 * (after its `}`), and `tail`, where the optional `,"usage":null` and the closing brace begin.
 */
export interface PlainChunk {
  delta: number;
  deltaEnd: number;
  tail: number;
}

/** The choice's head, the delta and a tail (`tail`: TAIL_TO_EVENT_END or TAIL) from `from`; false when one does not fit. */
function matchParts(buf: string, from: number, tail: RegExp, at: PlainChunk): boolean {
  CHOICE_HEAD.lastIndex = from;
  if (!CHOICE_HEAD.test(buf)) return false;
  const delta = CHOICE_HEAD.lastIndex;
  DELTA.lastIndex = delta;
  if (!DELTA.test(buf)) return false;
  const deltaEnd = DELTA.lastIndex;
  tail.lastIndex = deltaEnd;
  if (!tail.test(buf)) return false;
  at.delta = delta;
  at.deltaEnd = deltaEnd;
  at.tail = tail.lastIndex;
  return true;
}

/**
 * Whether `buf` (Latin-1 text of bytes) holds a plain content chunk from `from` (after the upstream prefix) to its
 * event's end: one choice whose delta is a non-empty `content` string (or a tool call's next arguments), no finish
 * reason, and only inert fields besides. Such a chunk needs nothing from its parse — no error, usage, finish reason,
 * reasoning or provider field is possible, and the patterns admit valid JSON only (and no line break). `at` is filled in.
 */
export function plainChunkAt(buf: string, from: number, at: PlainChunk): boolean {
  return matchParts(buf, from, TAIL_TO_EVENT_END, at);
}

const scratch: PlainChunk = { delta: 0, deltaEnd: 0, tail: 0 };

/**
 * Whether the read from `start` to `end` (one event, its blank line excluded) is a plain content chunk with output.
 * Then `d` is filled in: `text_delta` (index 0) for content, else `tool_call_delta` with the chunk's tool call index;
 * `from` and `to` bound the string token (quotes included). False too for empty arguments (no output). With `memo`, a
 * chunk with the fixed bytes of the last one recognized (the same id, created, model and inert fields) is checked by
 * comparing them, and a chunk recognized otherwise becomes the memo.
 */
export function plainChunkDelta(read: ReadBytes, start: number, end: number, d: RawDelta, memo?: DeltaMemo): boolean {
  if (memo?.recall(read, start, end, d)) return true;
  if (!plainChunkByPatterns(read.text, start, end, d)) return false;
  memo?.learn(read, start, end, d);
  return d.to - d.from > 2;
}

/** plainChunkDelta by the patterns alone, on the read's Latin-1 text (true for empty arguments too). */
function plainChunkByPatterns(buf: string, start: number, end: number, d: RawDelta): boolean {
  EVENT_PREFIX.lastIndex = start;
  if (!EVENT_PREFIX.test(buf) || !matchParts(buf, EVENT_PREFIX.lastIndex, TAIL, scratch) || scratch.tail !== end) return false;
  const at = scratch.delta;
  d.buf = buf;
  if (buf.charCodeAt(at + 2) === 0x63) {
    // {"content":…}
    d.kind = 'text_delta';
    d.index = 0;
    d.from = at + 11;
    d.to = scratch.deltaEnd - 1;
    return true;
  }
  // {"tool_calls":[{"index":N,"function":{"arguments":…}}]}
  let p = at + 24;
  let tool = 0;
  for (let c = buf.charCodeAt(p); c !== 0x2c; c = buf.charCodeAt(++p)) tool = tool * 10 + (c - 0x30);
  d.kind = 'tool_call_delta';
  d.index = tool;
  d.from = p + 25;
  d.to = scratch.deltaEnd - 4;
  return true;
}

/**
 * Characters of output in the plain chunk of `buf` that `plainChunkAt` matched (`at`): the delta's text between
 * `{"content":"` and `"}` (a tool call's framing counts a few characters more), as the parsed text's `length` counts
 * them (`jsonStringLength`: an escape is one, a 4-byte UTF-8 sequence two), so that a cut stream bills the same
 * tokens on this path as on the parsing one.
 */
export function plainChunkChars(buf: string, at: PlainChunk): number {
  const start = at.delta + 12;
  const stop = at.deltaEnd - 2;
  return stop <= start ? 0 : jsonStringLength(buf, start - 1, stop);
}

/** Whether `data` is the upstream prefix followed by a plain content chunk (the form the tests and callers with text use). */
export function isPlainContentChunk(data: string, upstreamPrefix: string): boolean {
  const buf = Buffer.from(`${data}\n\n`).toString('latin1');
  const prefix = Buffer.from(upstreamPrefix).toString('latin1');
  return hasAt(buf, 0, prefix) && plainChunkAt(buf, prefix.length, scratch);
}

/** What follows the upstream prefix in a plain content chunk, as the client gets it (without a final `usage: null`). */
export function plainChunkRest(data: string, upstreamPrefix: string): string {
  return data.endsWith(USAGE_NULL_TAIL) ? `${data.slice(upstreamPrefix.length, data.length - USAGE_NULL_TAIL.length)}}` : data.slice(upstreamPrefix.length);
}
