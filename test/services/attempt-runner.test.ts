/**
 * The attempt runner (services/attempts/runner.ts) on its own, without HTTP: order and fallbacks, the attempt log, the
 * health rule applied to each failure, the client going away, an API ending the run after a failure, unavailable
 * targets, and the spend seam (admit before each attempt, settle the served one, release the failed ones).
 */
import { describe, expect, it } from 'vitest';
import type { EndpointDef, ProviderDef } from '../../src/core/catalog-types.js';
import { HttpError } from '../../src/core/errors.js';
import { mapUpstreamStatus, UpstreamError } from '../../src/core/provider-errors.js';
import type { RoutePlan } from '../../src/core/routing.js';
import { runAttempts, runGeneration, type AttemptHooks, type AttemptTarget } from '../../src/services/attempts/runner.js';
import { HealthTracker } from '../../src/services/health.js';

const target = (slug: string): AttemptTarget => ({
  model: 'test/m',
  provider: { slug, name: `P ${slug}` } as ProviderDef,
  endpoint: { model: 'test/m', provider: slug, tag: slug } as EndpointDef,
});
const A = target('a');
const B = target('b');
const C = target('c');
const upstream = (status: number) => mapUpstreamStatus(status, `upstream ${status}`, null, null);

/** An attempt function failing with the given errors in turn, then answering `ok-<slug>`. */
function script(failures: Record<string, unknown>) {
  const tried: string[] = [];
  return {
    tried,
    attempt: async (a: AttemptTarget) => {
      tried.push(a.provider.slug);
      const f = failures[a.provider.slug];
      if (f) throw f;
      return `ok-${a.provider.slug}`;
    },
  };
}

function base(health = new HealthTracker(() => 1000)) {
  return { health, now: () => 1000, served: (a: AttemptTarget, v: string) => ({ result: v, cost: 0.5 }) };
}

describe('runAttempts', () => {
  it('tries the targets in order until one is served; the log lists each attempt', async () => {
    const s = script({ a: upstream(500), b: upstream(429) });
    const out = await runAttempts({ ...base(), targets: [A, B, C], attempt: s.attempt });
    expect(out.ok && out.result).toBe('ok-c');
    expect(s.tried).toEqual(['a', 'b', 'c']);
    expect(out.attempts.map((x) => [x.provider, x.status])).toEqual([
      ['a', 502],
      ['b', 429],
      ['c', 200],
    ]);
  });

  it('applies the health rule to each failure: the endpoint’s own failures count, the request’s do not', async () => {
    const health = new HealthTracker(() => 1000);
    const s = script({ a: upstream(503), b: upstream(400) });
    await runAttempts({ ...base(health), targets: [A, B, C], attempt: s.attempt });
    expect(health.health(A.endpoint)?.consecutiveFailures).toBe(1);
    expect(health.health(B.endpoint)).toBeUndefined();
    expect(health.health(C.endpoint)?.consecutiveFailures).toBe(0);
  });

  it('a network error is mapped (502) and counted; an HttpError (the request’s own) ends the run as is', async () => {
    const health = new HealthTracker(() => 1000);
    const out = await runAttempts({ ...base(health), targets: [A], attempt: script({ a: new TypeError('boom') }).attempt });
    expect(out.ok).toBe(false);
    expect(!out.ok && out.last?.status).toBe(502);
    expect(health.health(A.endpoint)?.consecutiveFailures).toBe(1);
    const refused = new HttpError(400, 'bad field');
    await expect(runAttempts({ ...base(), targets: [A, B], attempt: script({ a: refused }).attempt })).rejects.toBe(refused);
  });

  it('stops when the client went away, without another attempt', async () => {
    const cancel = { aborted: false };
    const s = script({});
    const attempt = async (a: AttemptTarget) => {
      cancel.aborted = true;
      s.tried.push(a.provider.slug);
      throw new UpstreamError(499, 'Request cancelled by the client', 'cancelled', null, null);
    };
    const out = await runAttempts({ ...base(), targets: [A, B], cancel, attempt });
    expect(s.tried).toEqual(['a']);
    expect(!out.ok && out.cancelled).toBe(true);
  });

  it('an API may stop after a failure, or end the run with a result (a stream that already sent content)', async () => {
    const stop = await runAttempts({ ...base(), targets: [A, B], attempt: script({ a: upstream(400) }).attempt, failed: () => 'stop' as const });
    expect(stop.ok).toBe(false);
    expect(stop.attempts).toHaveLength(1);
    const ended = await runAttempts({ ...base(), targets: [A, B], attempt: script({ a: upstream(502) }).attempt, failed: () => ({ result: 'ended', cost: 0.1 }) });
    expect(ended.ok && ended.result).toBe('ended');
  });

  it('an unavailable target is logged as given and skipped, health untouched', async () => {
    const health = new HealthTracker(() => 1000);
    const out = await runAttempts({ ...base(health), targets: [{ unavailable: { provider: 'gone', model: 'test/m', status: 503, message: 'no longer configured' } }, B], attempt: script({}).attempt });
    expect(out.ok && out.result).toBe('ok-b');
    expect(out.attempts.map((x) => x.status)).toEqual([503, 200]);
  });

  it('Retry-After hints are collected from every failure', async () => {
    const limited = mapUpstreamStatus(429, 'slow down', null, 7);
    const out = await runAttempts({ ...base(), targets: [A, B], attempt: script({ a: limited, b: mapUpstreamStatus(429, 'slow', null, 3) }).attempt });
    expect(!out.ok && out.retryHints).toEqual([7, 3]);
  });
});

describe('the spend seam (AttemptHooks)', () => {
  function ledger() {
    const events: string[] = [];
    const hooks: AttemptHooks = {
      admit: async (a) => {
        events.push(`admit ${a.provider.slug}`);
        return { settle: (cost) => events.push(`settle ${a.provider.slug} ${cost}`), release: () => events.push(`release ${a.provider.slug}`) };
      },
    };
    return { events, hooks };
  }

  it('admits before each attempt, releases the failed one, admits the fallback afresh and settles what was served', async () => {
    const { events, hooks } = ledger();
    await runAttempts({ ...base(), hooks, targets: [A, B], attempt: script({ a: upstream(500) }).attempt });
    expect(events).toEqual(['admit a', 'release a', 'admit b', 'settle b 0.5']);
  });

  it('settles a run ended after a failure with its cost; releases when the request itself was refused', async () => {
    const ended = ledger();
    await runAttempts({ ...base(), hooks: ended.hooks, targets: [A], attempt: script({ a: upstream(502) }).attempt, failed: () => ({ result: 'partial', cost: 0.2 }) });
    expect(ended.events).toEqual(['admit a', 'settle a 0.2']);
    const refused = ledger();
    await expect(runAttempts({ ...base(), hooks: refused.hooks, targets: [A], attempt: script({ a: new HttpError(400, 'no') }).attempt })).rejects.toThrow('no');
    expect(refused.events).toEqual(['admit a', 'release a']);
  });

  it('an admission refused (e.g. no budget left) ends the run before the upstream call', async () => {
    const s = script({});
    const hooks: AttemptHooks = {
      admit: () => {
        throw new HttpError(402, 'Spending limit reached');
      },
    };
    await expect(runAttempts({ ...base(), hooks, targets: [A], attempt: s.attempt })).rejects.toMatchObject({ status: 402 });
    expect(s.tried).toEqual([]);
  });
});

describe('runGeneration', () => {
  const plan = (attempts: AttemptTarget[], error?: RoutePlan['error']): RoutePlan => ({ attempts: attempts as RoutePlan['attempts'], strategy: 'direct', considered: [], error });

  it('an empty plan is recorded and refused with its routing error', async () => {
    const recorded: number[] = [];
    const p = plan([], { status: 404, code: 'model_not_found', message: 'no such model' } as RoutePlan['error']);
    await expect(
      runGeneration({ ...base(), plan: p, targets: [], attempt: script({}).attempt, recordUnserved: (u) => recorded.push(u.status) }),
    ).rejects.toMatchObject({ status: 404 });
    expect(recorded).toEqual([404]);
  });

  it('every attempt failed: the last error is recorded and answered, with gateway_metadata when the API gives one', async () => {
    const recorded: number[] = [];
    const p = plan([A, B]);
    const err = await runGeneration({
      ...base(),
      plan: p,
      targets: p.attempts,
      attempt: script({ a: upstream(500), b: upstream(529) }).attempt,
      recordUnserved: (u) => recorded.push(u.status),
      errorMetadata: (attempts) => ({ tried: attempts.length }),
    }).catch((e: unknown) => e as HttpError);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(529);
    expect((err as HttpError).metadata).toMatchObject({ error_type: 'provider_overloaded', provider_name: 'P b', previous_errors: [{ provider: 'a', status: 502 }] });
    expect((err as HttpError).gatewayMetadata).toEqual({ tried: 2 });
    expect(recorded).toEqual([529]);
  });
});
