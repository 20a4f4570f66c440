/** What an attempt reserves (src/core/spend-ask.ts): the prompt's byte bound, generation and fixed-cost asks. */
import { describe, expect, it } from 'vitest';
import { costAsk, fixedAsk, MEDIA_TOKENS, outputAsk, promptTokensBound, valueTokensBound } from '../../src/core/spend-ask.js';

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
