/** Guardrail rate limits as they apply to one key (src/core/rate-limits.ts): counter owners follow the budget's scope. */
import { describe, expect, it } from 'vitest';
import { guardrailRateLimits, perScope, rateLimitView } from '../../src/core/rate-limits.js';

describe('guardrail rate limits of a key', () => {
  const owner = { key: 'hash1', member: 'user1', workspace: 'ws1' };

  it('none set: null for both kinds (the request path checks only that)', () => {
    expect(guardrailRateLimits([], owner)).toEqual({ requests: null, tokens: null });
    expect(guardrailRateLimits([{ id: 'g', name: 'n', scope: 'key', rate_limit_requests: null, rate_limit_interval_s: null, rate_limit_tokens_per_minute: null }], owner)).toEqual({ requests: null, tokens: null });
  });

  it('counters per key, per member (the key when it has no member) and per workspace', () => {
    const r = guardrailRateLimits(
      [
        { id: 'gk', name: 'K', scope: 'key', rate_limit_requests: 5, rate_limit_interval_s: 60 },
        { id: 'gm', name: 'M', scope: 'member', rate_limit_tokens_per_minute: 1000 },
        { id: 'gw', name: 'W', scope: 'workspace', rate_limit_requests: 100, rate_limit_interval_s: 3600, rate_limit_tokens_per_minute: 50_000 },
      ],
      owner,
    );
    expect(r.requests).toEqual([
      { id: 'g:gk:key:hash1', guardrailId: 'gk', name: 'K', scope: 'key', limit: 5, intervalS: 60 },
      { id: 'g:gw:workspace:ws1', guardrailId: 'gw', name: 'W', scope: 'workspace', limit: 100, intervalS: 3600 },
    ]);
    expect(r.tokens?.map((t) => [t.id, t.tokensPerMinute])).toEqual([
      ['g:gm:member:user1', 1000],
      ['g:gw:workspace:ws1', 50_000],
    ]);
    expect(guardrailRateLimits([{ id: 'gm', name: 'M', scope: 'member', rate_limit_tokens_per_minute: 1 }], { ...owner, member: null }).tokens?.[0].id).toBe('g:gm:member:hash1');
    expect([perScope('key'), perScope('member'), perScope('workspace')]).toEqual(['per key', 'per member', 'for its whole workspace']);
  });

  it('views as the API shows them', () => {
    expect(rateLimitView(10, 60, null)).toEqual({ requests: 10, interval: '1m' });
    expect(rateLimitView(null, null, 500)).toEqual({ tokens_per_minute: 500 });
    expect(rateLimitView(3, 7200, 9)).toEqual({ requests: 3, interval: '2h', tokens_per_minute: 9 });
    expect(rateLimitView(null, null, null)).toBeNull();
  });
});
