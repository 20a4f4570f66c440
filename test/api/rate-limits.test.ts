/**
 * Per-key rate limits: set at creation or by PATCH, shown on the key, enforced on every authenticated request with
 * 429, Retry-After and X-RateLimit-* (in each API's own error shape), windows aligned to the clock and reset when
 * over; with PostgreSQL + Redis the limit holds across instances; bad settings are refused naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { createInferenceKey, invalidationsReached, startGateway, startTwoInstances, type TestGateway } from '../helpers.js';
import pino from 'pino';
import { decide, formatInterval, parseInterval, windowAt, type GuardrailRequestLimit } from '../../src/core/rate-limits.js';
import type { HttpError } from '../../src/core/errors.js';
import { RateLimiter } from '../../src/services/rate-limits.js';
import { SpendService } from '../../src/services/spend/index.js';
import { Redis } from 'ioredis';
import { GuardrailRatePresence } from '../../src/services/guardrail-rates.js';
import type { KeyRow } from '../../src/store/types.js';
import { expectError } from './util.js';

describe('rate limit arithmetic', () => {
  it('parses and formats intervals, aligns windows to the clock', () => {
    expect(parseInterval('10s')).toBe(10);
    expect(parseInterval('1m')).toBe(60);
    expect(parseInterval('6h')).toBe(21_600);
    expect(parseInterval('30d')).toBe(2_592_000);
    expect(parseInterval('31d')).toBeNull();
    expect(parseInterval('0s')).toBeNull();
    expect(parseInterval('1w')).toBeNull();
    expect(formatInterval(60)).toBe('1m');
    expect(formatInterval(90)).toBe('90s');
    expect(formatInterval(7200)).toBe('2h');
    expect(formatInterval(86_400)).toBe('1d');
    expect(windowAt(Date.UTC(2026, 10, 22, 10, 0, 59, 999), 60)).toEqual({ index: Date.UTC(2026, 10, 22, 10, 0) / 60_000, resetAt: Date.UTC(2026, 10, 22, 10, 1) });
    expect(decide(3, 3, 0)).toEqual({ allowed: true, limit: 3, remaining: 0, resetAt: 0 });
    expect(decide(4, 3, 0).allowed).toBe(false);
  });
});

describe('the rate limiter', () => {
  const key = (over: Partial<KeyRow> = {}) => ({ hash: 'f'.repeat(64), rate_limit_requests: 2, rate_limit_interval_s: 60, ...over }) as KeyRow;

  it('counts per key and window in memory, synchronously; a key without a limit is not counted', () => {
    let clock = Date.UTC(2026, 10, 22, 12, 0, 0);
    const rl = new RateLimiter(null, pino({ level: 'silent' }), () => clock);
    expect(rl.admit(key({ rate_limit_requests: null, rate_limit_interval_s: null }))).toBeNull();
    expect(rl.admit(key())).toMatchObject({ allowed: true, remaining: 1 });
    expect(rl.admit(key())).toMatchObject({ allowed: true, remaining: 0 });
    expect(rl.admit(key())).toMatchObject({ allowed: false, remaining: 0, resetAt: Date.UTC(2026, 10, 22, 12, 1, 0) });
    expect(rl.admit(key({ hash: 'e'.repeat(64) }))).toMatchObject({ allowed: true });
    clock += 60_000;
    expect(rl.admit(key())).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('with Redis unreachable: 503 for a limited key (fail closed, as spend); with the `local` fail mode, counts on this instance', async () => {
    // Request limits are scopes of the spend ledger, so they follow its fail mode (docs/spend.md, "Redis down"): the
    // default refuses what cannot be counted across instances rather than letting each instance admit the limit.
    const rl = new RateLimiter('redis://127.0.0.1:1', pino({ level: 'silent' }));
    try {
      const err = await Promise.resolve()
        .then(() => rl.admit(key()))
        .catch((e: HttpError) => e);
      expect(err).toMatchObject({ status: 503, metadata: { error_type: 'spend_unavailable' } });
      expect((await rl.admit(key({ rate_limit_requests: null, rate_limit_interval_s: null }))) ?? null).toBeNull();
    } finally {
      await rl.close();
    }
    const redis = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    redis.on('error', () => undefined);
    const spend = new SpendService({ redis, failMode: 'local' });
    const local = new RateLimiter(spend, pino({ level: 'silent' }));
    try {
      const got = await Promise.all([local.admit(key()), local.admit(key()), local.admit(key())]);
      expect(got.map((d) => d?.allowed)).toEqual([true, true, false]);
    } finally {
      await spend.close();
      redis.disconnect();
    }
  });
});

describe('the rate limiter with guardrail limits', () => {
  const key = (over: Partial<KeyRow> = {}) => ({ hash: 'f'.repeat(64), kind: 'inference', rate_limit_requests: null, rate_limit_interval_s: null, ...over }) as KeyRow;
  const limit = (over: Partial<GuardrailRequestLimit> = {}): GuardrailRequestLimit => ({ id: 'g:1:workspace:w', guardrailId: '1', name: 'team', scope: 'workspace', limit: 2, intervalS: 3600, ...over });
  const source = (limits: GuardrailRequestLimit[] | null, may = true) => {
    const calls = { peek: 0, policyFor: 0 };
    return {
      calls,
      mayRateLimit: () => may,
      peekPolicy: () => (calls.peek++, { requestLimits: limits }),
      policyFor: async () => (calls.policyFor++, { requestLimits: limits }),
    };
  };

  it('no guardrail limit anywhere: the policy is not looked at; none for this key: counted as the key alone', () => {
    const rl = new RateLimiter(null, pino({ level: 'silent' }), () => Date.UTC(2026, 10, 24, 12));
    const none = source([limit()], false);
    rl.useGuardrails(none);
    expect(rl.check(key())).toBeNull();
    expect(none.calls).toEqual({ peek: 0, policyFor: 0 });
    rl.useGuardrails(source(null));
    const k = key({ rate_limit_requests: 1, rate_limit_interval_s: 60 });
    expect(rl.check(k)).toBeNull();
    expect((rl.check(k) as HttpError).status).toBe(429);
  });

  it('counts the key and its guardrails together; a refusal uses no guardrail room; the latest-ending refusal wins', () => {
    let clock = Date.UTC(2026, 10, 24, 12, 0, 0);
    const rl = new RateLimiter(null, pino({ level: 'silent' }), () => clock);
    rl.useGuardrails(source([limit()]));
    const k = key({ rate_limit_requests: 1, rate_limit_interval_s: 60 });
    expect(rl.check(k)).toBeNull();
    const own = rl.check(k) as HttpError;
    expect(own.status).toBe(429);
    expect(own.metadata).toMatchObject({ limit_source: 'key' });
    clock += 60_000;
    expect(rl.check(k)).toBeNull(); // the guardrail still had room: the refusal above took none of it
    clock += 60_000;
    const both = rl.check(k) as HttpError; // key (1/min) would admit; the guardrail (2/h) refuses
    expect(both.metadata).toMatchObject({ limit_source: 'guardrail', guardrail_id: '1', guardrail_scope: 'workspace', limit: 2 });
    expect(both.message).toContain('guardrail "team" (1) allows 2 requests per 1h for its whole workspace');
    // Another key under the same workspace counter: refused too; a key-scoped counter of another key is apart.
    expect((rl.check(key({ hash: 'e'.repeat(64) })) as HttpError).status).toBe(429);
  });

  it('with Redis unreachable: 503 (fail closed, as spend); with the `local` fail mode, counts key and guardrails on this instance', async () => {
    const rl = new RateLimiter('redis://127.0.0.1:1', pino({ level: 'silent' }));
    rl.useGuardrails(source([limit({ id: 'g:2:key:x', scope: 'key', limit: 2 })]));
    try {
      const got = await Promise.all([rl.check(key()), rl.check(key()), rl.check(key())]);
      expect(got.map((e) => e?.status ?? 200)).toEqual([503, 503, 503]);
    } finally {
      await rl.close();
    }
    const redis = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    redis.on('error', () => undefined);
    const spend = new SpendService({ redis, failMode: 'local' });
    const local = new RateLimiter(spend, pino({ level: 'silent' }));
    local.useGuardrails(source([limit({ id: 'g:2:key:x', scope: 'key', limit: 2 })]));
    try {
      const got = await Promise.all([local.check(key()), local.check(key()), local.check(key())]);
      expect(got.map((e) => e?.status ?? 200)).toEqual([200, 200, 429]);
    } finally {
      await spend.close();
      redis.disconnect();
    }
  });

  it('whether any guardrail has a rate limit: read once, forgotten on a change, unsure (true) until read', async () => {
    let any = false;
    let reads = 0;
    let clock = 0;
    const p = new GuardrailRatePresence(async () => (reads++, any), 1000, () => clock);
    expect(p.maybe()).toBe(true); // unsure: a read starts
    await new Promise((r) => setTimeout(r, 0));
    expect(p.maybe()).toBe(false);
    expect(p.maybe()).toBe(false);
    expect(reads).toBe(1);
    any = true;
    p.forget();
    expect(p.maybe()).toBe(true);
    await new Promise((r) => setTimeout(r, 0));
    expect(p.maybe()).toBe(true);
    any = false;
    clock += 1000; // the TTL: read again
    expect(p.maybe()).toBe(true);
    await new Promise((r) => setTimeout(r, 0));
    expect(p.maybe()).toBe(false);
    expect(reads).toBe(3);
  });

  it('a management key is never checked against guardrails', () => {
    const rl = new RateLimiter(null, pino({ level: 'silent' }));
    const s = source([limit({ limit: 0 })]);
    rl.useGuardrails(s);
    expect(rl.check(key({ kind: 'management' }))).toBeNull();
    expect(s.calls.peek).toBe(0);
  });
});

describe('per-key rate limits on one instance', () => {
  let t: TestGateway;
  let clock = Date.UTC(2026, 10, 22, 10, 0, 10);
  beforeAll(async () => {
    t = await startGateway('sqlite', { gateway: { now: () => clock } });
  });
  afterAll(() => t.close());

  it('is shown on the key and by GET /key; none is null', async () => {
    const k = await createInferenceKey(t, { name: 'limited', rate_limit: { requests: 3, interval: '60s' } });
    expect(k.data.rate_limit).toEqual({ requests: 3, interval: '1m' });
    const got = await t.call('GET', `/keys/${k.hash}`);
    expect(got.body.data.rate_limit).toEqual({ requests: 3, interval: '1m' });
    const self = await t.call('GET', '/key', { key: k.key });
    expect(self.body.data.rate_limit).toMatchObject({ requests: 3, interval: '1m' });
    const plain = await createInferenceKey(t, { name: 'plain' });
    expect(plain.data.rate_limit).toBeNull();
    expect((await t.call('GET', '/key', { key: plain.key })).body.data.rate_limit.requests).toBe(-1);
  });

  it('admits exactly the limit out of a concurrent burst, then 429 with Retry-After and X-RateLimit-*, until the window ends', async () => {
    clock = Date.UTC(2026, 10, 22, 10, 5, 20);
    const k = await createInferenceKey(t, { name: 'burst', rate_limit: { requests: 5, interval: '1m' } });
    const replies = await Promise.all(Array.from({ length: 12 }, () => t.call('GET', '/key', { key: k.key })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(7);
    const r = refused[0];
    expectError(r, 429, { message: '5 requests per 1m' });
    expect(r.body.error.metadata).toMatchObject({ error_type: 'rate_limit_exceeded', limit: 5, interval: '1m', reset_at: '2026-11-22T10:06:00.000Z' });
    expect(r.headers.get('retry-after')).toBe('40');
    expect(r.headers.get('x-ratelimit-limit')).toBe('5');
    expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(r.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2026, 10, 22, 10, 6)));
    // Other keys are not affected; the next window admits the key again.
    expect((await t.call('GET', '/keys')).status).toBe(200);
    clock = Date.UTC(2026, 10, 22, 10, 6, 0);
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200);
  });

  it('a PATCH sets, changes and removes the limit at once', async () => {
    clock = Date.UTC(2026, 10, 22, 11, 0, 0);
    const k = await createInferenceKey(t, { name: 'patched' });
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200); // cached without a limit
    const set = await t.call('PATCH', `/keys/${k.hash}`, { body: { rate_limit: { requests: 1, interval: '1h' } } });
    expect(set.status).toBe(200);
    expect(set.body.data.rate_limit).toEqual({ requests: 1, interval: '1h' });
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200);
    expect((await t.call('GET', '/key', { key: k.key })).status).toBe(429);
    const cleared = await t.call('PATCH', `/keys/${k.hash}`, { body: { rate_limit: null } });
    expect(cleared.body.data.rate_limit).toBeNull();
    for (let i = 0; i < 3; i++) expect((await t.call('GET', '/key', { key: k.key })).status).toBe(200);
  });

  it('refuses bad settings naming the field, and writes nothing', async () => {
    const bad: Array<[unknown, string]> = [
      [{ requests: 0, interval: '1m' }, 'rate_limit.requests'],
      [{ requests: 1.5, interval: '1m' }, 'rate_limit.requests'],
      [{ requests: 10, interval: 'minute' }, 'rate_limit.interval'],
      [{ requests: 10, interval: '31d' }, 'rate_limit.interval'],
      [{ requests: 10 }, 'rate_limit.interval'],
      [{ requests: 10, interval: '1m', burst: 2 }, 'rate_limit'],
      ['10/m', 'rate_limit'],
    ];
    for (const [rate_limit, field] of bad) {
      const before = (await t.call('GET', '/keys')).body.data.length;
      expectError(await t.call('POST', '/keys', { body: { name: 'bad', rate_limit } }), 400, { field });
      expect((await t.call('GET', '/keys')).body.data.length).toBe(before);
    }
    const k = await createInferenceKey(t, { name: 'kept' });
    expectError(await t.call('PATCH', `/keys/${k.hash}`, { body: { rate_limit: { requests: 1, interval: '90d' } } }), 400, { field: 'rate_limit.interval' });
    expect((await t.call('GET', `/keys/${k.hash}`)).body.data.rate_limit).toBeNull();
  });

  it('documents 429 and 503 on authenticated routes in the OpenAPI document', async () => {
    const doc = (await t.call('GET', '/openapi.json')).body;
    expect(doc.paths['/key'].get.responses['429']).toBeDefined();
    expect(doc.paths['/generation'].get.responses['429']).toBeDefined();
    // Redis unreachable: a limited key's request is refused with 503 (GATEWAY_SPEND_REDIS_DOWN=closed).
    expect(doc.paths['/key'].get.responses['503']).toBeDefined();
    expect(doc.components.schemas.ApiKey.properties.rate_limit).toBeDefined();
  });
});

describe('rate limits on the inference APIs', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite');
  });
  afterAll(() => env.close());

  it('chat answers the gateway envelope, messages the Anthropic error shape', async () => {
    const k = await createInferenceKey(env.t, { name: 'chat-limited', rate_limit: { requests: 1, interval: '30d' } });
    const chat = (body: object) => fetch(`${env.t.api}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const ok = await chat({ model: 'test/alpha', messages: [{ role: 'user', content: 'hi' }] });
    expect(ok.status).toBe(200);
    const refused = await chat({ model: 'test/alpha', messages: [{ role: 'user', content: 'hi' }] });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await refused.json()) as { error: unknown }).error).toMatchObject({ code: 429, metadata: { error_type: 'rate_limit_exceeded' } });
    const messages = await fetch(`${env.t.api}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': k.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/alpha', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(messages.status).toBe(429);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });
});

describe('rate limits across two instances (PostgreSQL + Redis)', () => {
  let a: TestGateway;
  let b: TestGateway;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ a, b, close } = await startTwoInstances());
  });
  afterAll(async () => close?.());

  it('one shared window: a burst split over both instances admits exactly the limit', async () => {
    const k = await createInferenceKey(a, { name: 'shared-limit', rate_limit: { requests: 6, interval: '30d' } });
    const replies = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? a : b).call('GET', '/key', { key: k.key })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(6);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(10);
    // Admitted requests are counted (6 so far; a refused request uses no room — counted as leases of the spend
    // ledger, docs/spend.md "Request rate limits"). A limit raised to 10 on A applies on B at once (invalidation), on
    // the same shared count: four more pass, the fifth does not.
    expect((await a.call('PATCH', `/keys/${k.hash}`, { body: { rate_limit: { requests: 10, interval: '30d' } } })).status).toBe(200);
    await invalidationsReached(a, [b]);
    const more = await Promise.all(Array.from({ length: 4 }, () => b.call('GET', '/key', { key: k.key })));
    expect(more.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect((await a.call('GET', '/key', { key: k.key })).status).toBe(429);
  });
});

describe('rate limits with Redis unreachable (as spend: docs/spend.md, "Redis down")', () => {
  for (const mode of ['closed', 'local'] as const) {
    it(`GATEWAY_SPEND_REDIS_DOWN=${mode}: ${mode === 'closed' ? "a limited key's request gets 503" : 'each instance counts alone'}; a key without a limit is served`, async () => {
      const t = await startGateway('sqlite', { env: { GATEWAY_REDIS_URL: 'redis://127.0.0.1:1', GATEWAY_SPEND_REDIS_DOWN: mode } });
      try {
        const limited = await createInferenceKey(t, { name: 'limited', rate_limit: { requests: 2, interval: '1h' } });
        const plain = await createInferenceKey(t, { name: 'plain' });
        const got = [];
        for (let i = 0; i < 3; i++) got.push(await t.call('GET', '/key', { key: limited.key }));
        if (mode === 'closed') {
          for (const r of got) expectError(r, 503, { message: 'Rate limits cannot be checked right now' });
          expect(got[0].body.error.metadata).toMatchObject({ error_type: 'spend_unavailable' });
        } else expect(got.map((r) => r.status)).toEqual([200, 200, 429]);
        expect((await t.call('GET', '/key', { key: plain.key })).status).toBe(200);
      } finally {
        await t.close();
      }
    });
  }
});
