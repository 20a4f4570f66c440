/** Pure parts of files and plugins: type sniffing, middle-out, plugin settings, the IR stream guard, the stream healer (response-healing). */
import { describe, expect, it } from 'vitest';
import { compileFilters, IrStreamGuard } from '../../src/core/content-filters/index.js';
import { sniffMime } from '../../src/core/file-types.js';
import { dropOrphanToolMessages, middleOut } from '../../src/core/middle-out.js';
import { pluginSettings } from '../../src/core/plugins.js';
import type { IrStreamEvent } from '../../src/core/ir.js';
import { MAX_HEALED_STREAM_CHARS, StreamHealer } from '../../src/services/plugins/healing.js';

describe('sniffMime', () => {
  const b = (s: string) => Buffer.from(s, 'latin1');
  it('binary signatures, whatever the name', () => {
    expect(sniffMime(b('%PDF-1.7\n...'), true)).toBe('application/pdf');
    expect(sniffMime(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]), true)).toBe('image/jpeg');
    expect(sniffMime(b('GIF89a....'), true)).toBe('image/gif');
    expect(sniffMime(b('RIFF\0\0\0\0WEBPVP8 '), true)).toBe('image/webp');
    expect(sniffMime(b('RIFF\0\0\0\0WAVEfmt '), true)).toBe('audio/wav');
    expect(sniffMime(b('fLaC\0\0'), true)).toBe('audio/flac');
    expect(sniffMime(b('OggS\0\x02'), true)).toBe('audio/ogg');
    expect(sniffMime(b('ID3\x04\0'), true)).toBe('audio/mpeg');
    expect(sniffMime(b('PK\x03\x04....[Content_Types].xml....word/document.xml'), true)).toContain('wordprocessingml');
    expect(sniffMime(b('PK\x03\x04....[Content_Types].xml....xl/workbook.xml'), true)).toContain('spreadsheetml');
    expect(sniffMime(b('PK\x03\x04 just a zip'), true)).toBeNull();
  });
  it('text by structure; binary junk and invalid UTF-8 refused', () => {
    expect(sniffMime(b('[1, 2, {"a": null}]'), true)).toBe('application/json');
    expect(sniffMime(b('{"a":1}\n{"b":2}\n'), true)).toBe('application/x-ndjson');
    expect(sniffMime(b('a,b,c\n1,2,3\n"x,y",2,3\n'), true)).toBe('text/csv');
    expect(sniffMime(b('## Notes\n\n- one\n- two\n'), true)).toBe('text/markdown');
    expect(sniffMime(Buffer.from('Une phrase, rien de plus. Ça va.\n'), true)).toBe('text/plain');
    expect(sniffMime(Buffer.from([0xc3, 0x28, 0x41]), true)).toBeNull();
    expect(sniffMime(Buffer.from([1, 2, 3, 4]), true)).toBeNull();
    // A head cut inside a multi-byte character is still text.
    const head = Buffer.from('héllo wörld '.repeat(10)).subarray(0, 14);
    expect(sniffMime(head, false)).toBe('text/plain');
  });
});

describe('middleOut', () => {
  const msgs = (n: number) => [{ role: 'system', content: 'sys' }, ...Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i} ${'x'.repeat(76)}` }))];
  it('removes from the middle until the estimate fits; keeps system, first and last', () => {
    const r = middleOut(msgs(10), 100);
    expect(r.tokensAfter).toBeLessThanOrEqual(100);
    expect(r.messages[0]).toMatchObject({ role: 'system' });
    expect(r.messages[1].content).toMatch(/^m0 /);
    expect(r.messages.at(-1)!.content).toMatch(/^m9 /);
    expect(r.removed).toBe(11 - r.messages.length);
    // The removed ones are the middle ones: the survivors are the ends.
    const kept = r.messages.slice(1).map((m) => Number(/^m(\d+)/.exec(m.content)![1]));
    expect(kept).toEqual([...kept].sort((a, b) => a - b));
  });
  it('a prompt that fits is untouched', () => {
    const m = msgs(3);
    expect(middleOut(m, 10_000)).toMatchObject({ messages: m, removed: 0 });
  });
  it('tool results whose calls were removed go too; calls that lost results lose their calls', () => {
    const out = dropOrphanToolMessages([
      { role: 'user', content: 'q' },
      { role: 'tool', tool_call_id: 'gone', content: 'r' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a' }, { id: 'b' }] },
      { role: 'tool', tool_call_id: 'a', content: 'ra' },
      { role: 'user', content: 'end' },
    ]);
    expect(out).toEqual([{ role: 'user', content: 'q' }, { role: 'assistant', content: '' }, { role: 'user', content: 'end' }]);
  });
});

describe('pluginSettings', () => {
  it('reads known plugins and refuses the rest naming the field', () => {
    expect(pluginSettings([{ id: 'file-parser', pdf: { engine: 'pdf-text' } }, { id: 'response-healing' }, { id: 'context-compression', engine: 'middle-out' }, { id: 'web', max_results: 2 }, { id: 'moderation', enabled: false }])).toEqual({
      fileParser: { enabled: true, engine: 'text' },
      responseHealing: true,
      middleOut: true,
      web: { max_results: 2 },
      moderation: false,
    });
    expect(() => pluginSettings([{ id: 'file-parser', pdf: { engine: 'mistral-ocr' } }])).toThrow(/plugins\[0\]\.pdf\.engine: mistral-ocr/);
    expect(() => pluginSettings([{ id: 'web', max_results: 0 }])).toThrow(/plugins\[0\]\.max_results/);
    expect(() => pluginSettings([{ id: 'x' }])).toThrow(/plugins\[0\]\.id: "x"/);
  });
});

describe('IrStreamGuard', () => {
  const filters = compileFilters([{ source: { id: 'g', name: 'G', scope: 'key' }, content_filters: null, content_filter_builtins: [{ slug: 'email', action: 'redact' }] }]);
  const text = (evs: IrStreamEvent[]) => evs.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text).join('');
  it('redacts a split email; releases the held tail before a tool call and at the end, in order', () => {
    const g = new IrStreamGuard(filters, 64);
    const out: IrStreamEvent[] = [];
    for (const piece of ['Mail ja', 'ne@exa', 'mple.com now']) out.push(...g.events([{ type: 'text_delta', index: 0, text: piece }]));
    out.push(...g.events([{ type: 'tool_call_start', index: 1, id: 'c', name: 'f' }]));
    const before = out.findIndex((e) => e.type === 'tool_call_start');
    expect(text(out.slice(0, before))).toBe('Mail [EMAIL] now');
    out.push(...g.events([{ type: 'finish', finish_reason: 'stop', native_finish_reason: 'stop' }]), ...g.end());
    expect(g.pipeline()[0]).toMatchObject({ name: 'content_filter:email', data: { matches: 1, stage: 'output' } });
  });
  it('a block ends the guarded stream', () => {
    const b = compileFilters([{ source: { id: 'g', name: 'G', scope: 'key' }, content_filters: null, content_filter_builtins: [{ slug: 'ssn', action: 'block' }] }]);
    const g = new IrStreamGuard(b, 16);
    const out = [...g.events([{ type: 'text_delta', index: 0, text: 'ok then 123-45-' }]), ...g.events([{ type: 'text_delta', index: 0, text: '6789 more' }]), ...g.end()];
    expect(g.blocked?.name).toBe('ssn');
    expect(text(out)).not.toContain('123-45');
  });
});

describe('StreamHealer (response-healing on streams)', () => {
  const format = { type: 'json_schema' as const, schema: { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] } };
  const deltas = (text: string, n = 3): IrStreamEvent[] => Array.from({ length: Math.ceil(text.length / n) }, (_, i) => ({ type: 'text_delta', index: 0, text: text.slice(i * n, i * n + n) }) as IrStreamEvent);
  const run = (events: IrStreamEvent[]) => {
    const h = new StreamHealer(format);
    const out = [...h.events(events), ...h.end()];
    return { out, text: out.map((e) => (e.type === 'text_delta' ? e.text : '')).join(''), entry: h.pipeline()[0] };
  };

  it('a truncated reply: the tail goes out before the part ends (part_end, then finish)', () => {
    const r = run([...deltas('{"a": 1, "b": [1, 2'), { type: 'part_end', index: 0 }, { type: 'finish', finish_reason: 'stop', native_finish_reason: 'stop' }]);
    expect(JSON.parse(r.text)).toEqual({ a: 1, b: [1, 2] });
    const tail = r.out.findIndex((e, i) => e.type === 'text_delta' && i > 0 && r.out[i + 1]?.type === 'part_end');
    expect(tail).toBeGreaterThan(0);
    expect(r.entry.data).toEqual({ format: 'json_schema', stream: true, results: [{ repaired: true, valid: true, delivery: 'appended' }] });
  });

  it('no part_end: healed before the finish; no finish either: at the end of the stream', () => {
    const withFinish = run([...deltas('{"a": 2'), { type: 'finish', finish_reason: 'length', native_finish_reason: 'length' }]);
    expect(withFinish.out.at(-1)?.type).toBe('finish');
    expect(JSON.parse(withFinish.text)).toEqual({ a: 2 });
    expect(JSON.parse(run(deltas('[1, 2, {"a": 3')).text)).toEqual([1, 2, { a: 3 }]);
  });

  it('valid JSON untouched; a repair that rewrites sent text is reported with the healed JSON; invalid schema flagged', () => {
    const ok = run(deltas('{"a": 1}'));
    expect(ok.text).toBe('{"a": 1}');
    expect(ok.entry.data.results).toEqual([{ repaired: false, valid: true }]);
    const rewrite = run(deltas("{a: 'x'}"));
    expect(rewrite.text).toBe("{a: 'x'}");
    expect((rewrite.entry.data.results as unknown[])[0]).toMatchObject({ repaired: true, valid: false, delivery: 'metadata_only', healed: '{"a": "x"}' });
  });

  it('past the size bound the stream is relayed unhealed and says so', () => {
    const big = '{"a": "' + 'x'.repeat(MAX_HEALED_STREAM_CHARS);
    const r = run([{ type: 'text_delta', index: 0, text: big }]);
    expect(r.text).toBe(big);
    expect(r.entry.data).toMatchObject({ applied: false, reason: 'too_long' });
  });
});
