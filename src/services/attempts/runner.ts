/**
 * The one attempt runner of every inference API (docs/architecture.md): chat completions, responses and messages
 * (plain and streamed), embeddings, rerank, transcriptions, speech, token counting and the video worker's
 * submissions. A service plans the route and says how one attempt is built, sent and read (through the protocol
 * registry, providers/registry.ts); the runner does the rest the same way for all of them:
 *
 *   for each planned endpoint: admit (spend seam) → attempt (build → send → parse or relay)
 *     → success: attempt log, health sample, served (render, record), settle
 *     → failure: attempt log, the health rule (core/health-rule.ts), release, retry hint, stop or next
 *
 * `runAttempts` is the loop; `runGeneration` adds what every request that keeps a generation record shares: the
 * refusal of an empty plan, and the error reply (and its record) once every attempt failed.
 */
import type { EndpointDef, ProviderDef } from '../../core/catalog-types.js';
import { HttpError } from '../../core/errors.js';
import { countsAgainstHealth } from '../../core/health-rule.js';
import { UpstreamError } from '../../core/provider-errors.js';
import type { RoutePlan } from '../../core/routing.js';
import { networkError } from '../../providers/http.js';
import type { HealthTracker } from '../health.js';
import { attemptsHttpError, planHttpError, type AttemptLog } from './errors.js';

/** One endpoint to try (a routing Attempt satisfies it). */
export interface AttemptTarget {
  model: string;
  endpoint: EndpointDef;
  provider: ProviderDef;
}

/**
 * The spend seam: what an admission hook reserved for one attempt. `settle` once the attempt's record (and cost) is
 * known; `release` when the attempt failed (the next endpoint, with its own price, is admitted afresh).
 */
export interface Admission {
  /** `tokens`: what the attempt used (token rate limits); absent: unknown, what was reserved counts. */
  settle(costUsd: number | null, tokens?: number): void;
  release(): void;
}

/**
 * Hooks around each attempt. `admit` runs after routing picked the endpoint and before its upstream call; it may
 * refuse by throwing an HttpError, synchronously or as a rejection (the run ends with it). It may answer without a
 * promise (the spend gate does when a lease has room). Without hooks nothing is reserved (today's behaviour: the
 * key's limit is checked once, when the request is prepared).
 */
export interface AttemptHooks<A extends AttemptTarget = AttemptTarget> {
  admit(a: A): Admission | Promise<Admission>;
}

/** What a served attempt (or one that ends the run after a failure) gives back, and what it cost. */
export interface Served<R> {
  result: R;
  cost: number | null;
  /** Tokens used (prompt + completion), when known: settled against token rate limits. */
  tokens?: number;
}

/** A planned target that cannot be tried at all (e.g. no longer configured): logged as it says, health untouched. */
export interface UnavailableTarget {
  unavailable: AttemptLog;
}

/**
 * Watches each attempt (I/O logging's provider errors, tracing's attempt spans): told when an attempt starts and how
 * it ended. Absent when neither is on (nothing is called). Must not throw.
 */
export interface AttemptObserver<A extends AttemptTarget = AttemptTarget> {
  started(a: A, index: number): void;
  failed(a: A, e: UpstreamError | HttpError): void;
  succeeded(a: A): void;
}

export interface AttemptSpec<A extends AttemptTarget, T, R> {
  /** See AttemptObserver; undefined when nothing watches. */
  observer?: AttemptObserver<A>;
  targets: readonly (A | UnavailableTarget)[];
  /**
   * What a target needs that is looked up only when its turn comes (a video job's BYOK credential secret): the target
   * to try, or why it cannot be tried (logged as a planned unavailable target is). Absent: targets are tried as given.
   */
  resolve?(a: A): Promise<A | UnavailableTarget>;
  /** Set when the client went away: no further attempt starts. */
  cancel?: { readonly aborted: boolean };
  /** Where successes and counted failures are reported; null when the API leaves endpoint health alone. */
  health: HealthTracker | null;
  now(): number;
  hooks?: AttemptHooks<A>;
  /**
   * One attempt: build the upstream request, send it, read or relay the answer. Throws UpstreamError (anything else
   * is mapped as a network error) — except an HttpError, which is the request's own fault and ends the run as is.
   */
  attempt(a: A, index: number, t0: number): Promise<T>;
  /** The health sample of a success: time to the first token (or byte) and output rate. Default: elapsed, none. */
  sample?(value: T, t0: number): { ttftMs: number; tokensPerSecond: number | null };
  /** false: a success is not logged here (the video worker logs a job's success when the job completes). */
  logSuccess?: boolean;
  /** A successful attempt, logged: render and record the answer. */
  served(a: A, value: T, index: number, attempts: AttemptLog[]): Served<R>;
  /**
   * A failed attempt, logged and judged by the health rule: 'stop' tries no more endpoints; a Served value ends the
   * run with it (e.g. a stream that had already sent content); undefined moves on to the next endpoint.
   */
  failed?(e: UpstreamError, a: A, attempts: AttemptLog[]): 'stop' | Served<R> | undefined;
}

export type AttemptsOutcome<A, R> =
  | { ok: true; result: R; attempts: AttemptLog[] }
  | { ok: false; last: UpstreamError | null; lastAttempt: A | null; attempts: AttemptLog[]; retryHints: number[]; cancelled: boolean };

/** The attempts of one request, in order, until one is served or the run stops. */
export function runAttempts<A extends AttemptTarget, T, R>(spec: AttemptSpec<A, T, R>, attempts: AttemptLog[] = []): Promise<AttemptsOutcome<A, R>> {
  return attemptLoop(spec, attempts, null) as Promise<AttemptsOutcome<A, R>>;
}

/**
 * The loop of `runAttempts`; with `gen` (a request with a generation record), what `runGeneration` does once no
 * attempt was served runs here too, and a served result is returned as is: one async function per request, not two.
 */
async function attemptLoop<A extends AttemptTarget, T, R>(spec: AttemptSpec<A, T, R>, attempts: AttemptLog[], gen: GenerationSpec<A, T, R> | null): Promise<AttemptsOutcome<A, R> | R> {
  let last: UpstreamError | null = null;
  let lastAttempt: A | null = null;
  const retryHints: number[] = [];
  for (let i = 0; i < spec.targets.length; i++) {
    if (spec.cancel?.aborted) break;
    let t = spec.targets[i];
    if (spec.resolve && !('unavailable' in t)) t = await spec.resolve(t);
    if ('unavailable' in t) {
      attempts.push(t.unavailable);
      continue;
    }
    const a = t;
    let admission: Admission | null = null;
    try {
      // Synchronous when the limits' counters answer from memory (docs/spend.md): no extra turn of the event loop.
      const admitted = spec.hooks ? spec.hooks.admit(a) : null;
      admission = admitted instanceof Promise ? await admitted : admitted;
    } catch (err) {
      // A fallback the limits have no room for (a dearer endpoint): logged, and the run ends with the last failure.
      if (!(err instanceof HttpError) || last === null) throw err;
      attempts.push({ provider: a.provider.slug, model: a.model, status: err.status, message: err.message });
      break;
    }
    const t0 = spec.now();
    spec.observer?.started(a, i);
    let value: T;
    try {
      value = await spec.attempt(a, i, t0);
    } catch (err) {
      if (err instanceof HttpError) {
        spec.observer?.failed(a, err);
        admission?.release();
        throw err;
      }
      const e = err instanceof UpstreamError ? err : networkError(err);
      spec.observer?.failed(a, e);
      attempts.push({ provider: a.provider.slug, model: a.model, status: e.status, message: e.message });
      if (spec.health && countsAgainstHealth(e)) spec.health.failure(a.endpoint);
      last = e;
      lastAttempt = a;
      if (e.retryAfter !== null) retryHints.push(e.retryAfter);
      // The API decides (stop, end the run with a result, or the next one); the client gone: no more attempts, but
      // what was already produced is billed (the API's result for it).
      let next: ReturnType<NonNullable<typeof spec.failed>>;
      try {
        next = spec.failed?.(e, a, attempts);
      } catch (thrown) {
        admission?.release();
        throw thrown;
      }
      if (next && next !== 'stop') {
        admission?.settle(next.cost, next.tokens);
        return gen ? next.result : { ok: true, result: next.result, attempts };
      }
      admission?.release();
      if (next === 'stop' || e.type === 'cancelled' || spec.cancel?.aborted) break;
      continue;
    }
    spec.observer?.succeeded(a);
    if (spec.logSuccess !== false) attempts.push({ provider: a.provider.slug, model: a.model, status: 200 });
    if (spec.health) {
      const s = spec.sample ? spec.sample(value, t0) : { ttftMs: Math.round(spec.now() - t0), tokensPerSecond: null };
      spec.health.success(a.endpoint, s.ttftMs, s.tokensPerSecond);
    }
    let served: Served<R>;
    try {
      served = spec.served(a, value, i, attempts);
    } catch (thrown) {
      admission?.release();
      throw thrown;
    }
    admission?.settle(served.cost, served.tokens);
    return gen ? served.result : { ok: true, result: served.result, attempts };
  }
  const cancelled = spec.cancel?.aborted === true;
  return gen ? unserved(gen, last, lastAttempt, attempts, retryHints, cancelled) : { ok: false, last, lastAttempt, attempts, retryHints, cancelled };
}

/** What a request's attempts run with besides its plan: endpoint health, the clock and the spend hooks. */
export interface RunContext {
  health: HealthTracker;
  now: () => number;
  hooks?: AttemptHooks;
}

/** The spec fields every routed request shares: its plan, the plan's attempts in order, the client's cancellation. */
export function planned(plan: RoutePlan, cancel: { readonly aborted: boolean }, ctx: RunContext) {
  return { plan, targets: plan.attempts, cancel, health: ctx.health, now: ctx.now, hooks: ctx.hooks };
}

/** A request that was not served, as its generation record takes it. */
export interface Unserved<A> {
  /** The last attempt tried (null when the plan had none). */
  lastAttempt: A | null;
  /** 499 when the client went away, else the error's status. */
  status: number;
  error: HttpError;
  cancelled: boolean;
}

export interface GenerationSpec<A extends AttemptTarget, T, R> extends AttemptSpec<A, T, R> {
  plan: RoutePlan;
  /** Headers added to the error replies (e.g. `x-generation-id`). */
  errorHeaders?: Record<string, string>;
  /** Records a request that was not served: an empty plan, every attempt failed, or the client gone. */
  recordUnserved(u: Unserved<A>, attempts: AttemptLog[]): void;
  /** gateway_metadata for an error reply (undefined: none, e.g. not asked for); `lastAttempt`: the one that failed last. */
  errorMetadata?(attempts: AttemptLog[], lastAttempt: A | null): Record<string, unknown> | undefined;
  /** Every attempt failed (recorded already): a result instead of throwing `error`, e.g. for a reply already committed. */
  exhausted?(error: HttpError, cancelled: boolean, lastAttempt: A | null, attempts: AttemptLog[]): { result: R } | undefined;
}

/**
 * A request with a generation record: an empty plan is recorded and refused; the attempts run; when none was served,
 * the last error is recorded and answered (`attemptsHttpError`), with gateway_metadata when asked.
 */
export function runGeneration<A extends AttemptTarget, T, R>(spec: GenerationSpec<A, T, R>): Promise<R> {
  if (spec.plan.error) return refusedPlan(spec);
  return attemptLoop(spec, [], spec) as Promise<R>;
}

/** An empty plan: recorded and refused (a rejection, as from the run). */
async function refusedPlan<A extends AttemptTarget, T, R>(spec: GenerationSpec<A, T, R>): Promise<R> {
  const attempts: AttemptLog[] = [];
  const err = planHttpError(spec.plan, spec.errorHeaders);
  spec.recordUnserved({ lastAttempt: null, status: err.status, error: err, cancelled: false }, attempts);
  throw withMetadata(err, spec, attempts, null);
}

/** No attempt was served: the last error recorded and answered (or the API's result instead, `exhausted`). */
function unserved<A extends AttemptTarget, T, R>(spec: GenerationSpec<A, T, R>, last: UpstreamError | null, lastAttempt: A | null, attempts: AttemptLog[], retryHints: number[], cancelled: boolean): R {
  const error = attemptsHttpError(last, lastAttempt, attempts, retryHints, spec.errorHeaders);
  spec.recordUnserved({ lastAttempt, status: cancelled ? 499 : error.status, error, cancelled }, attempts);
  const instead = spec.exhausted?.(error, cancelled, lastAttempt, attempts);
  if (instead) return instead.result;
  throw withMetadata(error, spec, attempts, lastAttempt);
}

function withMetadata<A extends AttemptTarget, T, R>(err: HttpError, spec: GenerationSpec<A, T, R>, attempts: AttemptLog[], lastAttempt: A | null): HttpError {
  const metadata = spec.errorMetadata?.(attempts, lastAttempt);
  if (metadata) err.gatewayMetadata = metadata;
  return err;
}
