/**
 * The ordinary content chunk of an OpenAI chat stream, recognized on its bytes (chat-relay.ts relays such chunks
 * without decoding or parsing them): a scan as strict as the JSON grammar for the few shapes it admits.
 */
export const bytes = (s: string) => Buffer.from(s, 'latin1');
const SYSTEM_FINGERPRINT = bytes('"system_fingerprint":');
const SERVICE_TIER = bytes('"service_tier":');
const NULL = bytes('null');
const CHOICE_HEAD = bytes('"choices":[{"index":0,"delta":{');
const CONTENT = bytes('"content":');
const TOOL_HEAD = bytes('"tool_calls":[{"index":');
const TOOL_ARGS = bytes(',"function":{"arguments":');
const TOOL_TAIL = bytes('}}]}');
const LOGPROBS = bytes(',"logprobs":null');
const FINISH = bytes(',"finish_reason":null}]');
export const USAGE_NULL = bytes(',"usage":null');
/** How OpenAI ends every chunk but the last when usage is asked for (the gateway always asks): not relayed. */
export const USAGE_NULL_TAIL = ',"usage":null}';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;
const ESCAPABLE = new Uint8Array(256);
for (const c of '"\\/bfnrt') ESCAPABLE[c.charCodeAt(0)] = 1;

/** `buf[at, at + lit.length)` equals `lit` (and lies before `end`). */
export function has(buf: Buffer, at: number, end: number, lit: Buffer): boolean {
  return at + lit.length <= end && buf.compare(lit, 0, lit.length, at, at + lit.length) === 0;
}

/**
 * What the last successful `plainChunkLength` scan found: the bytes of the delta's JSON string beyond its characters
 * (UTF-8 continuation bytes), to count characters as the string path did.
 */
let extraBytes = 0;

/**
 * The end (exclusive) of the JSON string token starting at `at` (a quote), as RFC 8259 defines it; -1 when it is not
 * one. Counts UTF-8 continuation bytes into `extraBytes`.
 */
function stringEnd(buf: Buffer, at: number, end: number): number {
  if (buf[at] !== QUOTE) return -1;
  let i = at + 1;
  while (i < end) {
    const b = buf[i];
    if (b === QUOTE) return i + 1;
    if (b === BACKSLASH) {
      const n = buf[i + 1];
      if (ESCAPABLE[n] === 1) i += 2;
      else if (n === 0x75 && i + 5 < end && HEX[buf[i + 2]] & HEX[buf[i + 3]] & HEX[buf[i + 4]] & HEX[buf[i + 5]]) i += 6;
      else return -1;
    } else if (b < 0x20) return -1;
    else {
      if ((b & 0xc0) === 0x80) extraBytes++;
      i++;
    }
  }
  return -1;
}

/** After `"system_fingerprint":` / `"service_tier":` at `at`: the end of that field (null or a string), else -1. */
function inertFieldEnd(buf: Buffer, at: number, end: number): number {
  let i: number;
  if (has(buf, at, end, SYSTEM_FINGERPRINT)) i = at + SYSTEM_FINGERPRINT.length;
  else if (has(buf, at, end, SERVICE_TIER)) i = at + SERVICE_TIER.length;
  else return -1;
  if (has(buf, i, end, NULL)) return i + NULL.length;
  return stringEnd(buf, i, end);
}

/**
 * Whether the event data `buf[from, end)` is an ordinary content chunk after an upstream prefix ending at `from`:
 * `(inert,)* "choices":[{"index":0,"delta":DELTA(,"logprobs":null)?,"finish_reason":null}] (,inert)* (,"usage":null)? }`
 * with DELTA `{"content":<non-empty string>}` or `{"tool_calls":[{"index":N,"function":{"arguments":<string>}}]}`, and
 * inert fields `system_fingerprint` / `service_tier` (null or a string). Such a chunk needs nothing from a parse: no
 * error, usage, finish reason, reasoning or provider field is possible, and only valid JSON passes.
 * Returns the characters of output it carries (the delta's JSON text, as the string path counted them), or -1.
 */
export function plainChunkLength(buf: Buffer, from: number, end: number): number {
  let i = from;
  extraBytes = 0;
  while (!has(buf, i, end, CHOICE_HEAD)) {
    const f = inertFieldEnd(buf, i, end);
    if (f < 0 || buf[f] !== 0x2c) return -1;
    i = f + 1;
  }
  i += CHOICE_HEAD.length;
  const deltaStart = i;
  if (has(buf, i, end, CONTENT)) {
    const s = i + CONTENT.length;
    i = stringEnd(buf, s, end);
    if (i < 0 || i === s + 2 || buf[i] !== 0x7d) return -1; // a non-empty string, then `}`
    i++;
  } else if (has(buf, i, end, TOOL_HEAD)) {
    i += TOOL_HEAD.length;
    // 0 or [1-9][0-9]{0,3}
    const d0 = buf[i];
    if (d0 === 0x30) i++;
    else if (d0 >= 0x31 && d0 <= 0x39) {
      i++;
      for (let k = 0; k < 3 && buf[i] >= 0x30 && buf[i] <= 0x39; k++) i++;
    } else return -1;
    if (!has(buf, i, end, TOOL_ARGS)) return -1;
    i = stringEnd(buf, i + TOOL_ARGS.length, end);
    if (i < 0 || !has(buf, i, end, TOOL_TAIL)) return -1;
    i += TOOL_TAIL.length;
  } else return -1;
  const deltaEnd = i;
  if (has(buf, i, end, LOGPROBS)) i += LOGPROBS.length;
  if (!has(buf, i, end, FINISH)) return -1;
  i += FINISH.length;
  while (i < end - 1 && buf[i] === 0x2c && !has(buf, i, end, USAGE_NULL)) {
    const f = inertFieldEnd(buf, i + 1, end);
    if (f < 0) return -1;
    i = f;
  }
  if (has(buf, i, end, USAGE_NULL)) i += USAGE_NULL.length;
  if (i !== end - 1 || buf[i] !== 0x7d) return -1;
  // The delta's text between `{"content":"` … `"}` (a tool call's framing counts a few characters more), in characters.
  return deltaEnd - deltaStart - 13 - extraBytes;
}

/** Whether `data` is the upstream prefix followed by a plain content chunk (the string form of the byte check). */
export function isPlainContentChunk(data: string, upstreamPrefix: string): boolean {
  const buf = Buffer.from(data);
  const prefix = Buffer.from(upstreamPrefix);
  return has(buf, 0, buf.length, prefix) && plainChunkLength(buf, prefix.length, buf.length) >= 0;
}

/** What follows the upstream prefix in a plain content chunk, as the client gets it (without a final `usage: null`). */
export function plainChunkRest(data: string, upstreamPrefix: string): string {
  return data.endsWith(USAGE_NULL_TAIL) ? `${data.slice(upstreamPrefix.length, data.length - USAGE_NULL_TAIL.length)}}` : data.slice(upstreamPrefix.length);
}
