/**
 * The common event of an Anthropic Messages stream recognized in its bytes, without parsing it (the decoder's
 * `rawDelta`, stream.ts): a `content_block_delta` whose delta is a non-empty `text_delta` or `input_json_delta`, as
 * Anthropic serializes it —
 *
 *   event: content_block_delta
 *   data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}
 *
 * The event is scanned as Latin-1 text of its bytes (services/codec-ir-bytes.ts) by a strict pattern that admits
 * valid JSON only and exactly these fields in this order; any other form (another key order, spacing, more fields, an
 * `id:` line, an empty string) is left to the full parser, which gives the same result.
 */
import type { RawDelta } from '../../core/adapters.js';
import type { ReadBytes } from '../../core/byte-shape.js';
import type { DeltaMemo } from '../../core/delta-memo.js';
import { NONEMPTY_JSON_STRING } from '../../core/json-scan.js';

const EVENT_LINE = 'event: content_block_delta\n';
const DATA_HEAD = 'data: {"type":"content_block_delta","index":';
const TEXT_HEAD = ',"delta":{"type":"text_delta","text":';
const JSON_HEAD = ',"delta":{"type":"input_json_delta","partial_json":';

/** The whole event (sticky, from its start); its end is checked by the caller (`lastIndex`). */
const CONTENT_DELTA = new RegExp(
  `(?:event: content_block_delta\\n)?data: \\{"type":"content_block_delta","index":(?:0|[1-9][0-9]{0,8}),"delta":\\{"type":"(?:text_delta","text"|input_json_delta","partial_json"):${NONEMPTY_JSON_STRING}\\}\\}`,
  'y',
);

/**
 * scanContentDelta on the read's bytes: with `memo`, a delta with the fixed bytes of the last one recognized (the same
 * block and kind) is checked by comparing them (core/delta-memo.ts), and one recognized otherwise becomes the memo.
 */
export function scanContentDeltaIn(read: ReadBytes, start: number, end: number, d: RawDelta, memo: DeltaMemo): boolean {
  if (memo.recall(read, start, end, d)) return true;
  if (!scanContentDelta(read.text, start, end, d)) return false;
  memo.learn(read, start, end, d);
  return true;
}

/**
 * Whether `buf` from `start` to `end` (one event, its blank line excluded) is such a delta. Then `d` is filled in:
 * `kind` `text_delta` for a text delta, `tool_call_delta` for an `input_json_delta` (the decoder maps it by its
 * block), the block index, and the string token's bounds.
 */
export function scanContentDelta(buf: string, start: number, end: number, d: RawDelta): boolean {
  CONTENT_DELTA.lastIndex = start;
  if (!CONTENT_DELTA.test(buf) || CONTENT_DELTA.lastIndex !== end) return false;
  let p = start + (buf.charCodeAt(start) === 0x65 ? EVENT_LINE.length : 0) + DATA_HEAD.length;
  let index = 0;
  for (let c = buf.charCodeAt(p); c !== 0x2c; c = buf.charCodeAt(++p)) index = index * 10 + (c - 0x30);
  const text = buf.charCodeAt(p + 18) === 0x74; // `t`ext_delta or `i`nput_json_delta
  d.kind = text ? 'text_delta' : 'tool_call_delta';
  d.index = index;
  d.buf = buf;
  d.from = p + (text ? TEXT_HEAD.length : JSON_HEAD.length);
  d.to = end - 2;
  return true;
}
