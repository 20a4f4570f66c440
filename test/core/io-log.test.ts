/** I/O logging's pure part (core/io-log.ts): the sampling decision and the content assembled from what was captured. */
import { describe, expect, it } from 'vitest';
import { buildContent, IoCapture, ioLogged, keyNumericId, outputOf } from '../../src/core/io-log.js';

/** A seeded PRNG (mulberry32): the same sequence every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HASH = 'ab'.repeat(32);
const ws = (over: Partial<Parameters<typeof ioLogged>[0] & object> = {}) => ({ is_observability_io_logging_enabled: true, io_logging_sampling_rate: 1, io_logging_api_key_ids: null, ...over });

describe('ioLogged', () => {
  it('is off without a workspace, with the switch off, and for keys not listed', () => {
    const rng = seeded(1);
    expect(ioLogged(null, HASH, rng)).toBe(false);
    expect(ioLogged(ws({ is_observability_io_logging_enabled: false }), HASH, rng)).toBe(false);
    expect(ioLogged(ws({ io_logging_api_key_ids: [keyNumericId('cd'.repeat(32))] }), HASH, rng)).toBe(false);
    expect(ioLogged(ws({ io_logging_api_key_ids: [keyNumericId(HASH)] }), HASH, rng)).toBe(true);
    expect(ioLogged(ws(), HASH, rng)).toBe(true);
  });

  it('samples the configured fraction (fixed seed, 20,000 draws, within 1.5 points)', () => {
    for (const rate of [0.0001, 0.1, 0.5, 0.9]) {
      const rng = seeded(42);
      let n = 0;
      for (let i = 0; i < 20_000; i++) if (ioLogged(ws({ io_logging_sampling_rate: rate }), HASH, rng)) n++;
      expect(Math.abs(n / 20_000 - rate), `rate ${rate}`).toBeLessThan(0.015);
    }
  });

  it('numeric key ids are safe integers from the hash', () => {
    expect(Number.isSafeInteger(keyNumericId('f'.repeat(64)))).toBe(true);
    expect(keyNumericId(HASH)).toBe(parseInt(HASH.slice(0, 13), 16));
  });
});

describe('content assembly', () => {
  it('reads a chat answer: completion, reasoning, tool calls', () => {
    const cap = new IoCapture('chat', { messages: [{ role: 'user', content: 'hi' }] });
    cap.answer = { choices: [{ message: { role: 'assistant', content: 'hello', reasoning: 'think', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] } }] };
    expect(buildContent(cap, null, 'sim-a', 1 << 20)).toEqual({
      input: { messages: [{ role: 'user', content: 'hi' }] },
      output: { completion: 'hello', reasoning: 'think', tool_calls: [{ id: 'c1', name: 'f', arguments: '{"a":1}' }] },
      error: null,
    });
  });

  it('assembles chat, messages and responses streams split anywhere', () => {
    const chat = new IoCapture('chat', {});
    const sse = [
      'data: {"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}\n\n',
      ': GATEWAY PROCESSING\n\n',
      'data: {"choices":[{"delta":{"content":"lo"}}]}\n\ndata: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"t","function":{"name":"f","arguments":"{\\"x\\""}}]}}]}\n\n',
      'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":2}"}}]}}]}\n\ndata: [DONE]\n\n',
    ].join('');
    for (let i = 0; i < sse.length; i += 7) chat.chunks.push(sse.slice(i, i + 7));
    expect(outputOf(chat)).toEqual({ completion: 'Hello', reasoning: null, tool_calls: [{ id: 't', name: 'f', arguments: '{"x":2}' }] });

    const msg = new IoCapture('messages', {});
    msg.chunks.push(
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ok"}}\n\n',
    );
    expect(outputOf(msg)).toEqual({ completion: 'ok', reasoning: 'hmm', tool_calls: null });

    const resp = new IoCapture('responses', {});
    resp.chunks.push('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"a"}\n\n', 'data: {"type":"response.output_text.delta","delta":"b"}\n\n');
    expect(outputOf(resp).completion).toBe('ab');
  });

  it('records the returned error with every earlier attempt', () => {
    const cap = new IoCapture('chat', { messages: [] });
    cap.failed(429, 'Rate limited', 'sim-a', { error: { code: 429 } });
    cap.failed(502, 'Provider returned error', 'sim-b', 'boom');
    expect(buildContent(cap, { status: 502, message: 'Provider returned error' }, 'sim-b', 1 << 20).error).toEqual({
      status: 502,
      message: 'Provider returned error',
      provider_name: 'sim-b',
      raw: 'boom',
      previous_errors: [{ code: 429, message: 'Rate limited', provider_name: 'sim-a', raw: '{"error":{"code":429}}' }],
    });
  });

  it('caps the stored size', () => {
    const cap = new IoCapture('chat', { messages: [{ role: 'user', content: 'x'.repeat(100_000) }] });
    cap.answer = { choices: [{ message: { content: 'y'.repeat(100_000) } }] };
    const c = buildContent(cap, null, null, 8192);
    expect(Buffer.byteLength(JSON.stringify(c))).toBeLessThanOrEqual(8192);
    expect(c.output.completion).toMatch(/^y+… \[truncated\]$/);
  });
});
