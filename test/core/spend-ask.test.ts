/** What an attempt reserves (src/core/spend-ask.ts): the prompt's byte bound, generation and fixed-cost asks. */
import { describe, expect, it } from 'vitest';
import { costAsk, fixedAsk, MEDIA_TOKENS, outputAsk, promptTokensBound, valueTokensBound } from '../../src/core/spend-ask.js';
import { lazyConversation, lazyStats, parseLazy } from '../../src/core/lazy-body.js';

describe('the prompt bound', () => {
  it('counts UTF-8 bytes of the prompt fields, 4 per object, 8 per request; not model, provider or max_tokens', () => {
    // 8 + 4 (the message) + "user" (4) + "hello there" (11)
    expect(promptTokensBound({ model: 'a/b', provider: { only: ['x'] }, max_tokens: 12, messages: [{ role: 'user', content: 'hello there' }] })).toBe(27);
    // Multi-byte characters count their bytes (a token never covers less than one byte).
    expect(valueTokensBound('héllo')).toBe(6);
    expect(valueTokensBound('日本語')).toBe(9);
    // Tool schemas count their key names; offering tools adds the providers' template allowance.
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    expect(promptTokensBound({ messages: [], tools })).toBeGreaterThan(512 + 'function'.length + 'parameters'.length + 'city'.length);
  });

  it('is never below a chars/4 estimate and counts inline media at a fixed allowance', () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(50);
    expect(promptTokensBound({ messages: [{ role: 'user', content: text }] })).toBeGreaterThanOrEqual(Math.ceil(text.length / 4));
    const image = `data:image/png;base64,${'A'.repeat(200_000)}`;
    expect(valueTokensBound(image)).toBe(MEDIA_TOKENS);
    expect(valueTokensBound('B'.repeat(5000))).toBe(MEDIA_TOKENS); // a bare base64 payload
  });
});

describe('the prompt bound of a conversation still as bytes (core/lazy-body.ts)', () => {
  /** Many short messages (the framing per message dominates) with every one-character escape. */
  const shortTurns = (n: number) => Array.from({ length: n }, (_, i) => ({ role: i % 3 === 0 ? 'user' : i % 3 === 1 ? 'assistant' : 'system', content: `a\n"b"\\/\t${i % 10 ? '' : '\b\f\r'}` }));
  const cases: Array<[string, Record<string, unknown>]> = [
    ['chat', { model: 'm', tools: [{ type: 'function', function: { name: 'f' } }], messages: shortTurns(6000) }],
    ['Messages', { model: 'm', system: 'be brief', max_tokens: 9, messages: shortTurns(6000) }],
    ['Responses', { model: 'm', instructions: 'be brief', input: shortTurns(6000) }],
    ['one long message', { model: 'm', messages: [{ role: 'user', content: 'The quick \"brown\" fox.\n'.repeat(8000) }] }],
  ];
  for (const [name, body] of cases) {
    it(`is the parsed body's bound, without parsing it: ${name}`, () => {
      const text = JSON.stringify(body);
      const lazy = parseLazy(Buffer.from(text));
      expect(lazy).not.toBeNull();
      expect(lazyConversation(lazy!.body, lazy!.key)).not.toBeNull();
      const before = lazyStats.materialized;
      const bound = promptTokensBound(lazy!.body);
      expect(lazyStats.materialized).toBe(before);
      expect(lazyConversation(lazy!.body, lazy!.key)).not.toBeNull();
      expect(bound).toBe(promptTokensBound(JSON.parse(text) as Record<string, unknown>));
      // At least one byte per token: never below the UTF-8 bytes of the text the conversation carries.
      const conversation = (JSON.parse(text) as Record<string, Array<{ content: string }>>)[lazy!.key];
      expect(bound).toBeGreaterThan(conversation.reduce((n, m) => n + Buffer.byteLength(m.content), 0));
    });
  }

  it('a non-ASCII conversation (parsed eagerly: the body parser takes only ASCII lazily) is bounded by its UTF-8 bytes', () => {
    const body = { model: 'm', messages: Array.from({ length: 3000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `日本語 ü ${i}` })) };
    const bytes = body.messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0);
    expect(bytes).toBeGreaterThan(body.messages.reduce((n, m) => n + m.content.length, 0));
    expect(promptTokensBound(body)).toBeGreaterThan(bytes);
  });
});

describe('asks', () => {
  const pricing = { prompt: '0.000001', completion: '0.000002' };

  it('a generation reserves the prompt bound and its maximum output, at the dearest rate each token may take', () => {
    const ask = outputAsk({ pricing, max_completion_tokens: null, context_length: 32000 } as never, 100, 12);
    expect(ask).toMatchObject({ nano: 100 * 1000 + 12 * 2000, tokens: 112 });
    expect(ask.refusal(50_000)).toBe('This request requires more credits, or fewer max_tokens. You requested up to 12 tokens, but can only afford 0.');
    // No max_tokens: the endpoint's maximum with a prompt of zero (a smaller real prompt cannot leave room for more).
    expect(outputAsk({ pricing, max_completion_tokens: null, context_length: 1000 } as never, 100, null).tokens).toBe(1100);
    // Dearer reasoning and cache writes are reserved at their price.
    const dear = outputAsk({ pricing: { ...pricing, internal_reasoning: '0.00001', input_cache_write: '0.000002' }, max_completion_tokens: 10, context_length: 1000 } as never, 100, null);
    expect(dear.nano).toBe(100 * 2000 + 10 * 10_000);
    expect(outputAsk({ pricing: null, max_completion_tokens: 10, context_length: 1000 } as never, 5, null)).toMatchObject({ nano: null, tokens: 15 });
  });

  it('a call of known size reserves its cost; unpriced reserves nothing', () => {
    const ask = fixedAsk(pricing, { promptTokens: 24, completionTokens: 0 }, undefined, 'these embeddings');
    expect(ask.nano).toBe(24_000);
    expect(ask.refusal(1_000)).toBe('This request requires more credits: these embeddings can cost up to $0.000024000, but only $0.000001000 can be spent.');
    expect(costAsk(null, 3, 'x').nano).toBeNull();
  });
});
