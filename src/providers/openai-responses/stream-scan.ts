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
import { JSON_STRING, NONEMPTY_JSON_STRING } from '../../core/json-scan.js';

const INDEX = '(?:0|[1-9][0-9]{0,8})';
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
 * Whether `buf` from `start` to `end` (one event, its blank line excluded) is a non-empty text delta or function
 * call arguments delta of the form above. Then `d` (kind and token) and `at` are filled in.
 */
export function scanResponsesDelta(buf: string, start: number, end: number, d: RawDelta, at: ScannedDelta): boolean {
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
