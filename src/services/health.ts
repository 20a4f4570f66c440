/**
 * The gateway's own measurements of each endpoint: last failure, consecutive failures, and rolling time-to-first-token
 * and throughput samples (last 5 minutes, at most 256 samples) from which percentiles are read.
 */
import type { EndpointDef } from '../core/catalog-types.js';
import type { EndpointHealth, PercentileStats } from '../core/routing.js';

const WINDOW_MS = 5 * 60_000;
const MAX_SAMPLES = 256;
const MAX_OUTCOMES = 4096;

/** The last `size` (time, value) samples in a ring: recording one allocates nothing (this runs on every request). */
class Ring {
  private readonly at: Float64Array;
  private readonly v: Float64Array;
  private next = 0;
  private count = 0;
  constructor(private readonly size: number) {
    this.at = new Float64Array(size);
    this.v = new Float64Array(size);
  }
  push(at: number, v: number): void {
    this.at[this.next] = at;
    this.v[this.next] = v;
    this.next = (this.next + 1) % this.size;
    if (this.count < this.size) this.count++;
  }
  /** The values of samples taken within `ms` before `now`. */
  since(now: number, ms: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.count; i++) if (now - this.at[i] <= ms) out.push(this.v[i]);
    return out;
  }
}

interface Entry {
  /** Percentiles computed at most once per second (routing reads them on every request). */
  view?: { at: number; health: EndpointHealth };
  lastFailureAt?: number;
  consecutiveFailures: number;
  successes: number;
  failures: number;
  ttft: Ring;
  tps: Ring;
  /** Outcomes for uptime: 1 = success, 0 = failure. */
  outcomes: Ring;
}

function percentiles(s: Ring, now: number): PercentileStats | null {
  const vals = s.since(now, WINDOW_MS);
  if (vals.length === 0) return null;
  vals.sort((a, b) => a - b);
  const q = (p: number) => vals[Math.min(vals.length - 1, Math.floor(p * vals.length))];
  return { p50: q(0.5), p75: q(0.75), p90: q(0.9), p99: q(0.99) };
}

export const endpointKey = (e: Pick<EndpointDef, 'model' | 'tag'>) => `${e.model}|${e.tag}`;

export class HealthTracker {
  private readonly entries = new Map<string, Entry>();
  /** The entry of each catalog endpoint object, found without building its key (a reloaded catalog shares entries). */
  private readonly byEndpoint = new WeakMap<EndpointDef, Entry>();

  /** `now` is the gateway's clock: endpoint listings read it too, so that their status agrees with routing's. */
  constructor(readonly now: () => number = Date.now) {}

  private find(e: EndpointDef): Entry | undefined {
    let x = this.byEndpoint.get(e);
    if (!x) {
      x = this.entries.get(endpointKey(e));
      if (x) this.byEndpoint.set(e, x);
    }
    return x;
  }

  private entry(e: EndpointDef): Entry {
    let x = this.find(e);
    if (!x) {
      x = { consecutiveFailures: 0, successes: 0, failures: 0, ttft: new Ring(MAX_SAMPLES), tps: new Ring(MAX_SAMPLES), outcomes: new Ring(MAX_OUTCOMES) };
      this.entries.set(endpointKey(e), x);
      this.byEndpoint.set(e, x);
    }
    return x;
  }

  private outcome(x: Entry, ok: boolean): void {
    x.outcomes.push(this.now(), ok ? 1 : 0);
  }

  /** A failed attempt (rate limits count too: the endpoint is skipped for a while). */
  failure(e: EndpointDef): void {
    const x = this.entry(e);
    x.lastFailureAt = this.now();
    x.view = undefined;
    x.consecutiveFailures++;
    x.failures++;
    this.outcome(x, false);
  }

  /** A successful attempt with its time to first token and, when known, its output rate. */
  success(e: EndpointDef, ttftMs: number, tokensPerSecond: number | null): void {
    const x = this.entry(e);
    const now = this.now();
    if (x.consecutiveFailures !== 0) x.view = undefined;
    x.consecutiveFailures = 0;
    x.successes++;
    x.ttft.push(now, ttftMs);
    if (tokensPerSecond !== null && Number.isFinite(tokensPerSecond)) x.tps.push(now, tokensPerSecond);
    this.outcome(x, true);
  }

  /** What routing needs to know about an endpoint. */
  health = (e: EndpointDef): EndpointHealth | undefined => {
    const x = this.find(e);
    if (!x) return undefined;
    const now = this.now();
    if (x.view && now - x.view.at < 1000) return x.view.health;
    const health = { lastFailureAt: x.lastFailureAt, consecutiveFailures: x.consecutiveFailures, latencyMs: percentiles(x.ttft, now), throughput: percentiles(x.tps, now) };
    x.view = { at: now, health };
    return health;
  };

  /** Percent of successful attempts over the last `ms`, or null without data. */
  uptime(e: EndpointDef, ms: number): number | null {
    const x = this.find(e);
    if (!x) return null;
    const seen = x.outcomes.since(this.now(), ms);
    if (seen.length === 0) return null;
    let ok = 0;
    for (const good of seen) ok += good;
    return (100 * ok) / seen.length;
  }
}
