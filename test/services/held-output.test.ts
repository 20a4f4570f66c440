/**
 * The output a streamed answer holds for its final write (services/chat/held.ts): the same bytes as the text it
 * replaced, whether the pieces are bytes (the chat relay) or text (the translating sessions).
 */
import { describe, expect, it } from 'vitest';
import { hold, withLast } from '../../src/services/chat/held.js';

const bytes = (x: string | Buffer) => (typeof x === 'string' ? Buffer.from(x) : x);

describe('held stream output', () => {
  const pieces = ['data: {"a":"héllo"}\n\n', 'data: {"b":"日本語 🙂"}\n\n', '', 'data: {"c":1}\n\n'];

  it('bytes stay bytes, and end as the same bytes as the text would', () => {
    let held: string | Buffer = '';
    for (const p of pieces) held = hold(held, Buffer.from(p));
    const out = withLast(held, 'data: {"usage":"ü"}\n\ndata: [DONE]\n\n');
    expect(Buffer.isBuffer(out)).toBe(true);
    expect(bytes(out).toString()).toBe(pieces.join('') + 'data: {"usage":"ü"}\n\ndata: [DONE]\n\n');
  });

  it('text stays text', () => {
    let held: string | Buffer = '';
    for (const p of pieces) held = hold(held, p);
    expect(withLast(held, 'end')).toBe(pieces.join('') + 'end');
  });

  it('mixed pieces and an empty final event', () => {
    const held = hold(hold(hold('', 'x€'), Buffer.from('y€')), 'z');
    expect(bytes(withLast(held, '')).toString()).toBe('x€y€z');
    expect(withLast('', '')).toBe('');
    expect(bytes(withLast(Buffer.from('ab'), '')).toString()).toBe('ab');
  });

  it('a character split across two reads is kept whole (bytes are joined before any decoding)', () => {
    const euro = Buffer.from('€');
    const held = hold(hold('', euro.subarray(0, 1)), euro.subarray(1));
    expect(bytes(withLast(held, '!')).toString()).toBe('€!');
  });
});
