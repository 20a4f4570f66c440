/**
 * The common events of an OpenAI Responses stream recognized in their bytes, without parsing them (the decoder's
 * `rawDelta`, stream.ts): a non-empty `response.output_text.delta` or `response.function_call_arguments.delta`, as
 * OpenAI and the simulator serialize them —
 *
 *   event: response.output_text.delta
 *   data: {"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[],"obfuscation":"x1"}
 *
 *   event: response.function_call_arguments.delta
 *   data: {"type":"response.function_call_arguments.delta","sequence_number":9,"item_id":"fc_1","output_index":1,"delta":"{\"a\"","obfuscation":"x2"}
 *
 * (OpenAI's documentation prints them with `sequence_number` last, and some with a `response_id` before `item_id`.)
 * The event is scanned as Latin-1 text of its bytes (services/codec-ir-bytes.ts) by a strict pattern that admits
 * valid JSON only and exactly these fields in this order (`sequence_number` — after `type` or last —, `response_id`,
 * `item_id`, `content_index`, `logprobs: []` and `obfuscation` each optional; none of them changes what the event
 * decodes to but the two indexes); any
 * other form (another key order, spacing, more fields, non-empty logprobs, an `id:` line, an empty delta) is left to
 * the full parser, which gives the same result.
 */
import type { RawDelta } from '../../core/adapters.js';
import { ByteShape, COUNT, NONEMPTY_STRING, STRING, type ReadBytes } from '../../core/byte-shape.js';
import { hasAt, JSON_STRING, NONEMPTY_JSON_STRING } from '../../core/json-scan.js';

/** The optional fields that may follow `type`, which the decoder does not read. */
const SEQUENCE = '(?:,"sequence_number":(?:0|[1-9][0-9]{0,15}))?';
const IDS = `${SEQUENCE}(?:,"response_id":${JSON_STRING})?(?:,"item_id":${JSON_STRING})?`;
const head = (type: string) => new RegExp(`(?:event: response\\.${type}\\.delta\\n)?data: \\{"type":"response\\.${type}\\.delta"${IDS},"output_index":`, 'y');
/** Up to `output_index`'s value: of a text delta, of a piece of a function call's arguments. */
const TEXT_HEAD = head('output_text');
const ARGS_HEAD = head('function_call_arguments');
/** The delta's string (sticky, from its `,`); its token starts 9 characters in and ends at `lastIndex`. */
const DELTA = new RegExp(`,"delta":${NONEMPTY_JSON_STRING}`, 'y');
const DELTA_KEY = ',"delta":'.length;
/** After the delta, up to the closing brace (its end is checked by the caller). */
const TEXT_TAIL = new RegExp(`(?:,"logprobs":\\[\\])?(?:,"obfuscation":${JSON_STRING})?${SEQUENCE}\\}`, 'y');
const ARGS_TAIL = new RegExp(`(?:,"obfuscation":${JSON_STRING})?${SEQUENCE}\\}`, 'y');
const CONTENT_INDEX = ',"content_index":';

/** Where the kind of event shows: after `event: response.`, or after `data: {"type":"response.`. */
const KIND_AFTER_EVENT = 'event: response.'.length;
const KIND_AFTER_DATA = 'data: {"type":"response.'.length;

/** The value of the index at `p` (digits only, already matched or checked here) and where it ends; -1 when none. */
let indexEnd = 0;
function readIndex(buf: string, p: number): number {
  let c = buf.charCodeAt(p);
  if (c < 0x30 || c > 0x39) return -1;
  if (c === 0x30) {
    indexEnd = p + 1;
    c = buf.charCodeAt(p + 1);
    return c >= 0x30 && c <= 0x39 ? -1 : 0;
  }
  let n = 0;
  let i = p;
  for (; i < p + 9 && c >= 0x30 && c <= 0x39; c = buf.charCodeAt(++i)) n = n * 10 + (c - 0x30);
  if (c >= 0x30 && c <= 0x39) return -1; // more than 9 digits
  indexEnd = i;
  return n;
}

/**
 * A recognized delta: `d` is filled in (`kind`, the token's bounds; `index` is left to the decoder), and `item` and
 * `part` say where it goes: the output index, and the content index (-1 for a function call's arguments).
 */
export interface ScannedDelta {
  item: number;
  part: number;
}

/**
 * The last delta recognized in a stream, as its fixed bytes (core/byte-shape.ts): from the event's start to the
 * delta's string, with the sequence number as a hole, then the string, then the tail with the obfuscation string and a
 * last sequence number as holes. A stream's deltas of one part differ only in those, so the next one with the same
 * bytes around them needs only the holes scanned (the id and index patterns run when the part changes). `token` is
 * the string's hole; `text`, `item` and `part` what the fixed bytes say.
 */
export interface ResponsesMemo {
  shape: ByteShape | null;
  token: number;
  text: boolean;
  item: number;
  part: number;
}

export const newResponsesMemo = (): ResponsesMemo => ({ shape: null, token: 0, text: true, item: 0, part: 0 });

const SEQUENCE_KEY = ',"sequence_number":';
const LOGPROBS = ',"logprobs":[]';
const OBFUSCATION_KEY = ',"obfuscation":"';
const EVENT_LINE = (type: string) => `event: response.${type}.delta\n`.length;
const DATA_TYPE = (type: string) => `data: {"type":"response.${type}.delta"`.length;
const LEAD = { text: [DATA_TYPE('output_text'), EVENT_LINE('output_text')], args: [DATA_TYPE('function_call_arguments'), EVENT_LINE('function_call_arguments')] };

/** After `,"sequence_number":` at `p`: where its number (0|[1-9][0-9]{0,15}, matched already) ends. */
function afterNumber(buf: string, p: number): number {
  const limit = p + 16;
  for (p++; p < limit; p++) {
    const x = buf.charCodeAt(p);
    if (x < 0x30 || x > 0x39) break;
  }
  return p;
}

/** Where the characters of a valid JSON string from `p` (after its opening quote) end: its closing quote. */
function closingQuote(buf: string, p: number): number {
  for (let c = buf.charCodeAt(p); c !== 0x22; c = buf.charCodeAt(p)) p += c === 0x5c ? 2 : 1;
  return p;
}

/** A sequence number at `p` (`,"sequence_number":N`) as a hole: its bounds added to `cuts`; where it ends, or `p`. */
function sequenceHole(buf: string, p: number, cuts: number[], kinds: number[]): number {
  if (!hasAt(buf, p, SEQUENCE_KEY)) return p;
  const n = p + SEQUENCE_KEY.length;
  const e = afterNumber(buf, n);
  cuts.push(n, e);
  kinds.push(COUNT);
  return e;
}

/** The memo of the delta that fullScan recognized from `start` to `end` in `read` (`d`, `at`: what it found). */
function learn(read: ReadBytes, start: number, end: number, d: RawDelta, at: ScannedDelta, memo: ResponsesMemo): void {
  const buf = read.text;
  const text = d.kind === 'text_delta';
  const lengths = text ? LEAD.text : LEAD.args;
  const cuts = [start];
  const kinds: number[] = [];
  sequenceHole(buf, start + lengths[0] + (buf.charCodeAt(start) === 0x65 ? lengths[1] : 0), cuts, kinds);
  memo.token = kinds.length;
  cuts.push(d.from + 1, d.to - 1);
  kinds.push(NONEMPTY_STRING);
  // The tail (TEXT_TAIL or ARGS_TAIL, matched already): logprobs, obfuscation, sequence number, each optional.
  let p = d.to;
  if (hasAt(buf, p, LOGPROBS)) p += LOGPROBS.length;
  if (hasAt(buf, p, OBFUSCATION_KEY)) {
    const q = p + OBFUSCATION_KEY.length;
    p = closingQuote(buf, q);
    cuts.push(q, p);
    kinds.push(STRING);
    p++; // past the closing quote: a sequence number may follow
  }
  sequenceHole(buf, p, cuts, kinds);
  cuts.push(end);
  memo.shape = new ByteShape(read.bytes, cuts, kinds);
  memo.text = text;
  memo.item = at.item;
  memo.part = at.part;
}

/**
 * Whether the read from `start` to `end` (one event, its blank line excluded) is a non-empty text delta or function
 * call arguments delta of the form above. Then `d` (kind and token) and `at` are filled in. With `memo`, a delta with
 * the fixed bytes of the last one recognized is checked by comparing them, and one recognized otherwise becomes the memo.
 */
export function scanResponsesDelta(read: ReadBytes, start: number, end: number, d: RawDelta, at: ScannedDelta, memo?: ResponsesMemo): boolean {
  const shape = memo?.shape;
  if (shape != null && shape.match(read.bytes, read.view, start, end) === end) {
    recalled(read, d, at, memo!, shape);
    return true;
  }
  if (!fullScan(read.text, start, end, d, at)) return false;
  if (memo !== undefined) learn(read, start, end, d, at, memo);
  return true;
}

/**
 * The delta from `start` whose end is not known, recognized by `memo` alone (no patterns): where it ends (its fixed
 * bytes' end), with `d` and `at` filled in as scanResponsesDelta does, or -1. A match cannot hold a blank line (its
 * runs come from one event; its holes — a JSON string's characters, a number — hold no line feed and lie between
 * quotes or after a colon), so when one follows the end, the event ends there.
 */
export function recallResponsesDelta(read: ReadBytes, start: number, limit: number, d: RawDelta, at: ScannedDelta, memo: ResponsesMemo): number {
  const shape = memo.shape;
  if (shape === null) return -1;
  const end = shape.match(read.bytes, read.view, start, limit);
  if (end === -1) return -1;
  recalled(read, d, at, memo, shape);
  return end;
}

/** `d` and `at` filled in from the memo whose `shape` just matched in `read`. */
function recalled(read: ReadBytes, d: RawDelta, at: ScannedDelta, memo: ResponsesMemo, shape: NonNullable<ResponsesMemo['shape']>): void {
  d.kind = memo.text ? 'text_delta' : 'tool_call_delta';
  d.buf = read.text;
  d.from = shape.holes[2 * memo.token] - 1;
  d.to = shape.holes[2 * memo.token + 1] + 1;
  at.item = memo.item;
  at.part = memo.part;
}

/** scanResponsesDelta by the patterns alone. */
function fullScan(buf: string, start: number, end: number, d: RawDelta, at: ScannedDelta): boolean {
  const k = buf.charCodeAt(start + (buf.charCodeAt(start) === 0x65 ? KIND_AFTER_EVENT : KIND_AFTER_DATA));
  const text = k === 0x6f; // `o`utput_text
  if (!text && k !== 0x66) return false; // `f`unction_call_arguments
  const re = text ? TEXT_HEAD : ARGS_HEAD;
  re.lastIndex = start;
  if (!re.test(buf)) return false;
  const item = readIndex(buf, re.lastIndex);
  if (item < 0) return false;
  let p = indexEnd;
  let part = -1;
  if (text) {
    part = 0;
    if (buf.startsWith(CONTENT_INDEX, p)) {
      part = readIndex(buf, p + CONTENT_INDEX.length);
      if (part < 0) return false;
      p = indexEnd;
    }
  }
  DELTA.lastIndex = p;
  if (!DELTA.test(buf)) return false;
  const to = DELTA.lastIndex;
  const tail = text ? TEXT_TAIL : ARGS_TAIL;
  tail.lastIndex = to;
  if (!tail.test(buf) || tail.lastIndex !== end) return false;
  d.kind = text ? 'text_delta' : 'tool_call_delta';
  d.buf = buf;
  d.from = p + DELTA_KEY;
  d.to = to;
  at.item = item;
  at.part = part;
  return true;
}
