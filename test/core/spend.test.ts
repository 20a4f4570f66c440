/** The pure parts of spend control (src/core/spend.ts, src/core/money.ts). */
import { describe, expect, it } from 'vitest';
import { formatNano, nanoToUsd, sumUsd, usdToNano } from '../../src/core/money.js';
import { affordableOutputTokens, insufficientCreditsMessage, leaseSlack, maxOutputTokens, maxRequestCost, requestedOutputTokens, scopeId } from '../../src/core/spend.js';

const pricing = { prompt: '0.000001', completion: '0.000002', request: '0.0001' };

describe('money', () => {
  it('converts and sums exactly', () => {
    expect(usdToNano(0.00016)).toBe(160_000);
    expect(usdToNano(-0.0000000025)).toBe(-3); // half away from zero
    expect(nanoToUsd(480_000)).toBe(0.00048);
    expect(sumUsd(0.00016, 0.00016, 0.00016)).toBe(0.00048);
    expect(formatNano(1_234_567)).toBe('0.001234567');
    expect(formatNano(-5_000_000_000, 2)).toBe('-5.00');
  });
});

describe('maximum cost of a request', () => {
  it('reads max_tokens, max_completion_tokens or max_output_tokens', () => {
    expect(requestedOutputTokens({ max_tokens: 100 })).toBe(100);
    expect(requestedOutputTokens({ max_completion_tokens: 50, max_tokens: 100 })).toBe(50);
    expect(requestedOutputTokens({ max_output_tokens: 7 })).toBe(7);
    expect(requestedOutputTokens({ max_tokens: 0 })).toBeNull();
    expect(requestedOutputTokens({})).toBeNull();
  });

  it('caps the output at the endpoint, or takes its maximum when none is asked for', () => {
    expect(maxOutputTokens(100, { max_completion_tokens: 4096, context_length: 8192 }, 10)).toBe(100);
    expect(maxOutputTokens(100_000, { max_completion_tokens: 4096, context_length: 8192 }, 10)).toBe(4096);
    expect(maxOutputTokens(null, { max_completion_tokens: null, context_length: 8192 }, 192)).toBe(8000);
    expect(maxOutputTokens(null, { max_completion_tokens: null, context_length: 0 }, 10)).toBe(16_384);
  });

  it('prices the prompt estimate, the maximum output and the request fee exactly', () => {
    // 1000 × 0.000001 + 500 × 0.000002 + 0.0001 = 0.0021 USD
    expect(maxRequestCost(pricing, 1000, 500)).toEqual({ nano: 2_100_000, promptTokens: 1000, completionTokens: 500 });
    expect(maxRequestCost(null, 1000, 500).nano).toBeNull();
  });

  it('tells how many output tokens the room left can buy, in the hosted router\'s words', () => {
    // Room 0.0021: prompt (0.001) and fee (0.0001) paid, 0.001 buys 500 output tokens.
    expect(affordableOutputTokens(pricing, 1000, 2_100_000)).toBe(500);
    expect(affordableOutputTokens(pricing, 1000, 2_099_999)).toBe(499);
    expect(affordableOutputTokens(pricing, 1000, 1_000_000)).toBe(0);
    expect(insufficientCreditsMessage(4096, 500)).toBe('This request requires more credits, or fewer max_tokens. You requested up to 4096 tokens, but can only afford 500.');
  });
});

describe('scopes and leases', () => {
  it('names a new scope per window', () => {
    const now = Date.parse('2026-11-25T12:00:00Z'); // a Wednesday
    expect(scopeId('key', 'h', 'daily', now, 'key limit')).toMatchObject({ id: 'key:h:daily:2026-11-25', ttlS: 2 * 86400 });
    expect(scopeId('key', 'h', 'weekly', now, 'key limit').id).toBe('key:h:weekly:2026-11-23');
    expect(scopeId('workspace_budget', 'w', 'monthly', now, 'b').id).toBe('workspace_budget:w:monthly:2026-11-01');
    expect(scopeId('credits', 'org', null, now, 'credits')).toMatchObject({ id: 'credits:org:lifetime:lifetime', ttlS: 0 });
  });

  it('leases whole requests while there is room, and none once the budget is nearly spent', () => {
    expect(leaseSlack(100, 1, 0, 8)).toBe(8); // capped
    expect(leaseSlack(20, 3, 1, 8)).toBe(3); // share 5 → one whole request
    expect(leaseSlack(10, 3, 1, 8)).toBe(0); // share 2 < one request: per-request reservations
    expect(leaseSlack(0, 3, 0, 8)).toBe(0);
  });
});
