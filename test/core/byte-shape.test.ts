/**
 * ByteShape (core/byte-shape.ts): an event's fixed bytes remembered, with holes (a JSON string's characters, a
 * number) — the one way the same-protocol relay and the translated decoders recognize a stream's next common event.
 */
import { describe, expect, it } from 'vitest';
import { ByteShape, COUNT, NONEMPTY_STRING, readBytes, STRING } from '../../src/core/byte-shape.js';
import { jsonStringLength } from '../../src/core/json-scan.js';

/** A shape learned from `event` whose holes are the marked `«…»` parts (the marks removed), of `kinds`. */
function learn(marked: string, kinds: number[]): ByteShape {
  const cuts = [0];
  let plain = '';
  for (const part of marked.split(/([«»])/)) {
    if (part === '«' || part === '»') cuts.push(Buffer.byteLength(plain));
    else plain += part;
  }
  cuts.push(Buffer.byteLength(plain));
  return new ByteShape(Buffer.from(plain), cuts, kinds);
}

/** What the shape finds in `event` (placed after a few bytes: offsets count): its holes' text, or null. */
function match(shape: ByteShape, event: string, limit = Infinity): { holes: string[]; chars: number } | null {
  const read = readBytes(Buffer.from(`xyz${event}tail`));
  const n = Math.min(read.bytes.length, 3 + limit);
  const e = shape.match(read.bytes, read.view, 3, n);
  // A shape of one string is matched in the read's text too (matchText): the same answer.
  if (shape.holes.length === 2) {
    const chars = shape.chars;
    const holes = Array.from(shape.holes);
    expect(shape.matchText(read.bytes, read.text, 3, n)).toBe(e);
    if (e !== -1) expect([Array.from(shape.holes), shape.chars]).toEqual([holes, chars]);
  }
  if (e === -1) return null;
  expect(read.bytes.subarray(3, e).toString()).toBe(event.slice(0, Buffer.from(event).subarray(0, e - 3).toString().length));
  const holes: string[] = [];
  for (let k = 0; k < shape.holes.length; k += 2) holes.push(read.bytes.subarray(shape.holes[k], shape.holes[k + 1]).toString());
  return { holes, chars: shape.chars };
}

const CHUNK = (s: string) => `data: {"id":"c1","choices":[{"index":0,"delta":{"content":"${s}"}}]}\n\n`;

describe('ByteShape', () => {
  const chunk = learn(CHUNK('«Hi»'), [NONEMPTY_STRING]);

  it('matches the same event with another string: escapes, 2-, 3- and 4-byte UTF-8, \\u escapes', () => {
    for (const s of ['a', 'Hi there', '\\"quoted\\"', '\\\\ \\/ \\b\\f\\n\\r\\t', 'é中😀', '\\u00e9\\ud83d\\ude00', 'x'.repeat(300)]) {
      const got = match(chunk, CHUNK(s));
      expect(got?.holes, s).toEqual([s]);
      // Its characters as the parsed text's length counts them (core/json-scan.ts).
      const latin1 = Buffer.from(`"${s}"`).toString('latin1');
      expect(got?.chars).toBe(jsonStringLength(latin1, 0, latin1.length - 1));
      expect(got?.chars).toBe((JSON.parse(`"${s}"`) as string).length);
    }
  });

  it('refuses what is not a valid string, an empty one where one is needed, and a changed fixed byte anywhere', () => {
    for (const s of ['', '\\x', '\\u12g4', '\\u12', 'a\tb', 'a\u0001b', 'a\\']) expect(match(chunk, CHUNK(s)), s).toBeNull();
    const ok = CHUNK('Hi');
    for (let i = 0; i < ok.length; i++) {
      if (i >= ok.indexOf('Hi') && i < ok.indexOf('Hi') + 2) continue;
      const changed = ok.slice(0, i) + (ok[i] === 'A' ? 'B' : 'A') + ok.slice(i + 1);
      expect(match(chunk, changed), `byte ${i}`).toBeNull();
    }
    expect(learn(CHUNK('«»'), [STRING]).match(Buffer.from(CHUNK('')), new DataView(new ArrayBuffer(0)), 0, 0)).toBe(-1);
  });

  it('refuses an event cut at every length (the bytes given end before it does)', () => {
    const ev = CHUNK('é\\u00e9 ok');
    const len = Buffer.byteLength(ev);
    expect(match(chunk, ev, len)).not.toBeNull();
    for (let n = 0; n < len; n++) expect(match(chunk, ev, n), `${n}`).toBeNull();
  });

  it('holds several holes: numbers (0|[1-9][0-9]{0,15}), strings, and runs shorter than 8 bytes', () => {
    const shape = learn('data: {"n":«12»,"d":"«a»","o":"«»"}', [COUNT, NONEMPTY_STRING, STRING]);
    expect(match(shape, 'data: {"n":0,"d":"ü","o":""}')).toEqual({ holes: ['0', 'ü', ''], chars: 1 });
    expect(match(shape, 'data: {"n":1234567890123456,"d":"b","o":"zz"}')?.holes).toEqual(['1234567890123456', 'b', 'zz']);
    expect(match(shape, 'data: {"n":12345678901234567,"d":"b","o":""}')).toBeNull(); // 17 digits
    expect(match(shape, 'data: {"n":03,"d":"b","o":""}')).toBeNull();
    expect(match(shape, 'data: {"n":,"d":"b","o":""}')).toBeNull();
    expect(match(shape, 'data: {"n":1,"d":"","o":""}')).toBeNull();
    expect(match(shape, 'data: {"n":1,"d":"b","o":"x"]')).toBeNull();
  });

  it('compares runs of any bytes of valid UTF-8 exactly (DEL, multi-byte characters whose words are odd doubles)', () => {
    const odd = `data: {"x":"\u007f\u007f\u007f\u007f\u007f\u007f\u007f\u007fé😀\u0080ÿ","d":"«a»"}\n\n`;
    const shape = learn(odd, [NONEMPTY_STRING]);
    expect(match(shape, odd.replace('«a»', 'b'))?.holes).toEqual(['b']);
    expect(match(shape, odd.replace('«a»', 'b').replace('é', 'è'))).toBeNull();
    expect(match(shape, odd.replace('«a»', 'b').replace('\u007f', '~'))).toBeNull();
  });
});
