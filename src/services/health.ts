/**
 * The gateway's own measurements of each endpoint: last failure, consecutive failures, and rolling time-to-first-token
 * and throughput samples (last 5 minutes, at most 256 samples) from which percentiles are read.
 */
import type { EndpointDef } from '../core/catalog-types.js';
import type { EndpointHealth, PercentileStats } from '../core/routing.js';

const WINDOW_MS = 5 * 60_000;
const MAX_SAMPLES = 256;

interface Samples {
  at: number[];
  v: number[];
}

interface Entry {
  /** Percentiles computed at most once per second (routing reads them on every request). */
  view?: { at: number; health: EndpointHealth };
  lastFailureAt?: number;
  consecutiveFailures: number;
  successes: number;
  failures: number;
  ttft: Samples;
  tps: Samples;
  /** Outcomes within the window for uptime: [time, ok]. */
  outcomes: Array<[number, boolean]>;
}

function push(s: Samples, at: number, v: number): void {
  s.at.push(at);
  s.v.push(v);
  if (s.at.length > MAX_SAMPLES) {
    s.at.shift();
    s.v.shift();
  }
}

function percentiles(s: Samples, now: number): PercentileStats | null {
  const vals: number[] = [];
  for (let i = 0; i < s.at.length; i++) if (now - s.at[i] <= WINDOW_MS) vals.push(s.v[i]);
  if (vals.length === 0) return null;
  vals.sort((a, b) => a - b);
  const q = (p: number) => vals[Math.min(vals.length - 1, Math.floor(p * vals.length))];
  return { p50: q(0.5), p75: q(0.75), p90: q(0.9), p99: q(0.99) };
}

export const endpointKey = (e: Pick<EndpointDef, 'model' | 'tag'>) => `${e.model}|${e.tag}`;

export class HealthTracker {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  private entry(e: EndpointDef): Entry {
    const k = endpointKey(e);
    let x = this.entries.get(k);
    if (!x) {
      x = { consecutiveFailures: 0, successes: 0, failures: 0, ttft: { at: [], v: [] }, tps: { at: [], v: [] }, outcomes: [] };
      this.entries.set(k, x);
    }
    return x;
  }

  private outcome(x: Entry, ok: boolean): void {
    const now = this.now();
    x.outcomes.push([now, ok]);
    while (x.outcomes.length > 0 && now - x.outcomes[0][0] > 24 * 3600_000) x.outcomes.shift();
    if (x.outcomes.length > 4096) x.outcomes.shift();
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
    push(x.ttft, now, ttftMs);
    if (tokensPerSecond !== null && Number.isFinite(tokensPerSecond)) push(x.tps, now, tokensPerSecond);
    this.outcome(x, true);
  }

  /** What routing needs to know about an endpoint. */
  health = (e: EndpointDef): EndpointHealth | undefined => {
    const x = this.entries.get(endpointKey(e));
    if (!x) return undefined;
    const now = this.now();
    if (x.view && now - x.view.at < 1000) return x.view.health;
    const health = { lastFailureAt: x.lastFailureAt, consecutiveFailures: x.consecutiveFailures, latencyMs: percentiles(x.ttft, now), throughput: percentiles(x.tps, now) };
    x.view = { at: now, health };
    return health;
  };

  /** Percent of successful attempts over the last `ms`, or null without data. */
  uptime(e: EndpointDef, ms: number): number | null {
    const x = this.entries.get(endpointKey(e));
    if (!x) return null;
    const now = this.now();
    let ok = 0;
    let all = 0;
    for (const [at, good] of x.outcomes) {
      if (now - at > ms) continue;
      all++;
      if (good) ok++;
    }
    return all === 0 ? null : (100 * ok) / all;
  }
}
