/**
 * core/body-slabs.ts: a large request body copied into reused slabs; the slabs go back to the pool only once the
 * handler released them, nothing keeps them and every upstream write handed them over; a lazy conversation refuses to
 * read bytes given back (core/lazy-body.ts BytesOwner).
 */
import { describe, expect, it } from 'vitest';
import { BodyLease, lentBody, SLAB_BYTES, slabStats } from '../../src/core/body-slabs.js';
import { conversationBytes, keepBytes, parseLazy, shareLazy } from '../../src/core/lazy-body.js';
import { IoCapture } from '../../src/core/io-log.js';

const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) % 251));

function filled(chunks: Buffer[]): BodyLease {
  const lease = new BodyLease();
  for (const c of chunks) lease.write(c);
  return lease;
}

const drain = (it: Iterable<Buffer>) => Buffer.concat([...it]);

describe('a body lease', () => {
  it('holds the bytes written, across slab boundaries, as one view per slab', () => {
    const whole = bytes(SLAB_BYTES * 2 + 12_345, 7);
    for (const size of [65_536, 7_919, SLAB_BYTES, SLAB_BYTES + 1]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < whole.length; i += size) chunks.push(whole.subarray(i, i + size));
      const lease = filled(chunks);
      const parts = lease.parts();
      expect(parts).toHaveLength(3);
      expect(Buffer.concat(parts).equals(whole)).toBe(true);
      lease.release();
    }
  });

  it('gives its slabs back to the pool when released, and the next lease reuses them', () => {
    const a = filled([bytes(SLAB_BYTES + 10, 1)]);
    const slabs = a.parts().map((p) => p.buffer);
    const recycled = slabStats.recycled;
    a.release();
    expect(a.gone).toBe(true);
    expect(slabStats.recycled).toBe(recycled + 2);
    const b = filled([bytes(SLAB_BYTES + 10, 2)]);
    for (const p of b.parts()) expect(slabs.some((s) => s === p.buffer)).toBe(true);
    expect(Buffer.concat(b.parts()).equals(bytes(SLAB_BYTES + 10, 2))).toBe(true);
    b.release();
  });

  it('kept (something reads it after the request), never goes back to the pool', () => {
    const a = filled([bytes(1000, 3)]);
    const view = a.parts()[0];
    a.keep();
    a.release();
    expect(a.gone).toBe(false);
    const b = filled([bytes(1000, 4)]);
    expect(b.parts()[0].buffer).not.toBe(view.buffer);
    expect(view.equals(bytes(1000, 3))).toBe(true);
    b.release();
  });

  it('waits for upstream writes handed over before giving back; a write cut short keeps the slabs', () => {
    const a = filled([bytes(5000, 5)]);
    const settle = a.lend();
    a.release();
    expect(a.gone).toBe(false);
    settle(true);
    expect(a.gone).toBe(true);

    const b = filled([bytes(5000, 6)]);
    const cut = b.lend();
    b.release();
    cut(false);
    expect(b.gone).toBe(false);
  });
});

describe('an upstream body of lent parts (lentBody)', () => {
  it('is the same bytes, its end a copy, and lends the lease until the last part was asked past', () => {
    const body = bytes(SLAB_BYTES + 200_000, 8);
    const lease = filled([body]);
    const head = Buffer.from('{"messages":');
    const parts = [head, ...lease.parts(), Buffer.from('}')];
    const it = lentBody(parts, false)!;
    expect(it).not.toBeNull();
    const out = [...it];
    expect(Buffer.concat(out).equals(Buffer.concat(parts))).toBe(true);
    // The last part is no view of a slab: undici waits for it to be written, and with it every byte before.
    expect(lease.parts().some((p) => p.buffer === out.at(-1)!.buffer)).toBe(false);
    expect(out.at(-1)!.length).toBeGreaterThanOrEqual(64 * 1024);
    lease.release();
    expect(lease.gone).toBe(true);
  });

  it('a write abandoned mid-way keeps the slabs; a resent body (fallback) lends again', () => {
    const lease = filled([bytes(SLAB_BYTES * 2, 9)]);
    const first = lentBody(lease.parts(), false)![Symbol.iterator]();
    first.next();
    first.return!(undefined);
    expect(drain(lentBody(lease.parts(), false)!).equals(bytes(SLAB_BYTES * 2, 9))).toBe(true);
    lease.release();
    expect(lease.gone).toBe(false);
  });

  it('is null for parts in no slab, and over HTTP/2 (the slabs are kept instead)', () => {
    expect(lentBody([Buffer.from('{}')], false)).toBeNull();
    const lease = filled([bytes(100_000, 10)]);
    expect(lentBody(lease.parts(), true)).toBeNull();
    lease.release();
    expect(lease.gone).toBe(false);
  });
});

describe('a lazy conversation in lent bytes', () => {
  const text = `{"model":"m","messages":[${Array.from({ length: 400 }, (_, i) => `{"role":"user","content":"${'word '.repeat(40)}${i}"}`).join(',')}]}`;

  it('refuses to be read once its bytes were given back, and reads well before', () => {
    const lease = filled([Buffer.from(text)]);
    const parsed = parseLazy(Buffer.from(text), undefined, lease.parts(), lease)!;
    expect(conversationBytes(parsed.body, 'messages')).not.toBeNull();
    lease.release();
    expect(() => conversationBytes(parsed.body, 'messages')).toThrow(/given back/);
    expect(() => parsed.body.messages).toThrow(/given back/);
  });

  it('captured for I/O logging (also through a shared body), keeps its bytes past the release', () => {
    for (const shared of [false, true]) {
      const lease = filled([Buffer.from(text)]);
      const { body } = parseLazy(Buffer.from(text), undefined, lease.parts(), lease)!;
      const out: Record<string, unknown> = { model: 'up' };
      shareLazy(body, out, 'messages');
      if (shared) keepBytes(out);
      else new IoCapture('chat', body);
      lease.release();
      expect(lease.gone).toBe(false);
      expect((body.messages as unknown[]).length).toBe(400);
    }
  });
});
