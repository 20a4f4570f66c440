/**
 * SseReads (providers/sse-reads.ts): an event stream's reads cut at their events — the one way the same-protocol relay
 * and the translated sessions complete an event cut across reads. Cut at every byte offset (two reads, and three for a
 * short stream), joined or not, the events given are the stream's, each piece ends at a blank line, and a UTF-8
 * sequence is never split.
 */
import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { SseReads } from '../../src/providers/sse-reads.js';
import { sseLimits } from '../../src/providers/sse.js';

/** The events of event-stream bytes: the non-blank lines' runs between blank lines. */
const eventsOf = (s: string) => s.split(/\n\n+/).map((e) => e.replace(/^\n+/, '')).filter((e) => e !== '');

/** What `reads` gives for the stream cut at `cuts`: the pieces (head, body) in order, and the bytes left carried. */
function feed(stream: Buffer, cuts: number[], joinBelow: number): { pieces: Buffer[]; carried: Buffer | null } {
  const r = new SseReads(joinBelow);
  const pieces: Buffer[] = [];
  const at = [0, ...cuts, stream.length];
  for (let k = 0; k + 1 < at.length; k++) {
    r.cut(stream.subarray(at[k], at[k + 1]));
    if (r.head !== null) pieces.push(r.head);
    if (r.body.length > 0) pieces.push(r.body);
  }
  return { pieces, carried: r.take() };
}

const STREAM = Buffer.from(
  'data: {"a":"é中😀"}\n\n' + // 2-, 3- and 4-byte UTF-8
    'data: {"b":"\\"\\\\\\n\\u00e9\\ud83d\\ude00"}\n\n\n' + // escapes, then an odd run of line feeds
    ': keep-alive\n\n\n\n' +
    'event: x\ndata: {"c":1}\ndata: {"d":2}\n\n' + // an event of several lines
    'data: {"e":"ü"}\n\n' +
    'data: [DONE]\n\n',
);

function check(stream: Buffer, cuts: number[], joinBelow: number): void {
  const { pieces, carried } = feed(stream, cuts, joinBelow);
  for (const p of pieces) {
    // A piece ends at a blank line (or is the rest of a run of line feeds: blank lines).
    expect(p.subarray(-2).toString() === '\n\n' || /^\n+$/.test(p.toString()), `${cuts} ${joinBelow}`).toBe(true);
    expect(isUtf8(p)).toBe(true);
  }
  expect(eventsOf(Buffer.concat(pieces).toString())).toEqual(eventsOf(stream.toString()));
  expect(carried === null || eventsOf(carried.toString()).length === 0).toBe(true);
}

describe('SseReads', () => {
  it('gives the stream events whole when cut in two at every byte offset, joined or not', () => {
    for (const joinBelow of [0, 16, Infinity]) for (let i = 0; i <= STREAM.length; i++) check(STREAM, [i], joinBelow);
  });

  it('gives them whole when cut in three at every pair of offsets', () => {
    const short = STREAM.subarray(0, STREAM.indexOf('event:'));
    for (const joinBelow of [0, 16]) for (let i = 0; i <= short.length; i++) for (let j = i; j <= short.length; j++) check(short, [i, j], joinBelow);
  });

  it('gives them whole read byte by byte, and each event as soon as its blank line is read', () => {
    const r = new SseReads(0);
    const got: string[] = [];
    for (let i = 0; i < STREAM.length; i++) {
      r.cut(STREAM.subarray(i, i + 1));
      for (const p of [r.head, r.body]) if (p !== null && p.length > 0) got.push(...eventsOf(p.toString()));
      // Everything up to the last blank line read was given.
      const read = STREAM.subarray(0, i + 1).toString();
      const last = read.lastIndexOf('\n\n');
      expect(got).toEqual(last === -1 ? [] : eventsOf(read.slice(0, last + 2)));
    }
    expect(r.take()).toBeNull();
  });

  it('holds the read cut across `\\n` | `\\n` and across CRLF-free multi-byte characters', () => {
    const r = new SseReads(0);
    r.cut(Buffer.from('data: a\n'));
    expect(r.head).toBeNull();
    expect(r.body.length).toBe(0);
    r.cut(Buffer.from('\ndata: b\n\n'));
    expect(r.head?.toString()).toBe('data: a\n\n');
    expect(r.body.toString()).toBe('data: b\n\n');
    const e = Buffer.from('data: "é"\n\n');
    r.cut(e.subarray(0, 8)); // inside é
    r.cut(e.subarray(8));
    expect(r.head?.toString()).toBe('data: "é"\n\n');
  });

  it('marks an event larger than the bound (the caller fails the stream, 502), whether carried in one read or grown over several, keeping the read\'s complete events', () => {
    const bound = sseLimits.eventChars;
    sseLimits.eventChars = 64;
    try {
      const one = new SseReads(0);
      one.cut(Buffer.concat([Buffer.from('data: 1\n\n'), Buffer.alloc(65, 0x61)]));
      expect(one.tooLarge).toBe(true);
      expect(one.body.toString()).toBe('data: 1\n\n');
      const r = new SseReads(0);
      r.cut(Buffer.alloc(40, 0x61));
      expect(r.tooLarge).toBe(false);
      r.cut(Buffer.alloc(40, 0x61));
      expect(r.tooLarge).toBe(true);
      const j = new SseReads(1000);
      j.cut(Buffer.alloc(40, 0x61));
      j.cut(Buffer.alloc(40, 0x61));
      expect(j.tooLarge).toBe(true);
    } finally {
      sseLimits.eventChars = bound;
    }
  });
});
