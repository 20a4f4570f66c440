/**
 * Analytics rollups (docs/observability.md), the pure part: generation records summed per minute, hour and day and per
 * dimension values, with exact integer sums (tokens, nano-dollars, milliseconds) and a bounded latency histogram per
 * bucket (LATENCY_BUCKETS log-spaced bins) from which percentiles are read.
 */
import { usdToNano } from './money.js';

export const ROLLUP_GRAINS = ['minute', 'hour', 'day'] as const;
export type RollupGrain = (typeof ROLLUP_GRAINS)[number];

/** Latency histogram: bin 0 holds ≤ 1 ms, bin i holds (RATIO^(i-1), RATIO^i] ms, the last bin everything above. */
export const LATENCY_BUCKETS = 48;
export const LATENCY_RATIO = 1.3;
const LOG_RATIO = Math.log(LATENCY_RATIO);

export function latencyBin(ms: number): number {
  if (!(ms > 1)) return 0;
  return Math.min(LATENCY_BUCKETS - 1, Math.ceil(Math.log(ms) / LOG_RATIO - 1e-9));
}

/** The upper bound (ms) of bin i (the last bin: its lower bound times the ratio). */
export function binUpper(i: number): number {
  return i === 0 ? 1 : LATENCY_RATIO ** i;
}

/**
 * The p-quantile (0 < p ≤ 1) of a histogram, by nearest rank, interpolated linearly inside the bin that holds it; null
 * when empty. Within one bin of the exact value: at most a factor LATENCY_RATIO off.
 */
export function histogramQuantile(hist: ArrayLike<number>, p: number): number | null {
  let total = 0;
  for (let i = 0; i < hist.length; i++) total += Number(hist[i]);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    const n = Number(hist[i]);
    if (n === 0) continue;
    if (seen + n >= rank) {
      const lo = i === 0 ? 0 : binUpper(i - 1);
      const hi = binUpper(i);
      return Math.round((lo + ((hi - lo) * (rank - seen)) / n) * 100) / 100;
    }
    seen += n;
  }
  return null;
}

/** The dimension values a rollup row is keyed by ('' for none: unique keys need a value). */
export const ROLLUP_DIMENSIONS = ['workspace_id', 'key_hash', 'model', 'provider_name', 'endpoint_tag', 'api_type', 'finish_reason'] as const;

export interface RollupDelta {
  grain: RollupGrain;
  /** ISO timestamp of the bucket's start (UTC). */
  bucket: string;
  workspace_id: string;
  key_hash: string;
  model: string;
  provider_name: string;
  endpoint_tag: string;
  api_type: string;
  finish_reason: string;
  status: number;
  is_byok: boolean;
  /** Whether the records cost something (GET /activity counts served or billed requests). */
  billed: boolean;
  requests: number;
  tokens_prompt: number;
  tokens_completion: number;
  tokens_reasoning: number;
  /** Sum of total_cost in nano-dollars (exact). */
  cost_nano: number;
  /** Sum of upstream_inference_cost in nano-dollars. */
  upstream_cost_nano: number;
  latency_ms_sum: number;
  /** LATENCY_BUCKETS counts. */
  hist: number[];
}

/** What a record contributes (a GenerationRow satisfies it). */
export interface RollupSource {
  created_at: string;
  workspace_id: string;
  key_hash: string;
  model: string | null;
  provider_name: string | null;
  endpoint_tag: string | null;
  api_type: string;
  finish_reason: string | null;
  status: number;
  is_byok: boolean;
  tokens_prompt: number;
  tokens_completion: number;
  native_tokens_reasoning: number;
  total_cost: number | null;
  upstream_inference_cost: number | null;
  latency_ms: number;
}

/** Per grain: the length of an ISO timestamp's prefix that names its bucket, and what completes the bucket's start. */
const CUT: Record<RollupGrain, [number, string]> = { minute: [16, ':00.000Z'], hour: [13, ':00:00.000Z'], day: [10, 'T00:00:00.000Z'] };

/** A batch's records of one set of dimension values: each grain's deltas by bucket, and the last one each grain added to. */
interface Group {
  billed: boolean;
  byBucket: Array<Map<string, RollupDelta>>;
  /** Per grain: the bucket prefix (`YYYY-MM-DDTHH:MM`, `…THH`, `YYYY-MM-DD`) of `lastDelta`. */
  lastPrefix: string[];
  lastDelta: Array<RollupDelta | null>;
}

/** Whether two records have the same dimension values (null and '' are told apart: a miss only costs the keyed lookup). */
function sameDims(a: RollupSource, b: RollupSource): boolean {
  return (
    a.key_hash === b.key_hash &&
    a.model === b.model &&
    a.provider_name === b.provider_name &&
    a.status === b.status &&
    a.finish_reason === b.finish_reason &&
    a.endpoint_tag === b.endpoint_tag &&
    a.workspace_id === b.workspace_id &&
    a.api_type === b.api_type &&
    a.is_byok === b.is_byok
  );
}

/**
 * A batch of records summed per grain, bucket and dimension values, in the order the records first reach each. A
 * record with the same dimension values as the one before it (the usual case: one key, one model) reuses its group
 * without building or hashing a key, and a record in the same minute, hour or day as the group's last one reuses that
 * delta without building the bucket's timestamp: per record, only the sums are added.
 */
export function rollupDeltas(rows: readonly RollupSource[]): RollupDelta[] {
  const groups = new Map<string, Group>();
  const out: RollupDelta[] = [];
  let prev: RollupSource | null = null;
  let group: Group | null = null;
  for (const r of rows) {
    const billed = r.total_cost !== null && r.total_cost > 0;
    if (group === null || prev === null || group.billed !== billed || !sameDims(prev, r)) {
      const key: string = `${r.workspace_id}\u0000${r.key_hash}\u0000${r.model ?? ''}\u0000${r.provider_name ?? ''}\u0000${r.endpoint_tag ?? ''}\u0000${r.api_type}\u0000${r.finish_reason ?? ''}\u0000${r.status}\u0000${r.is_byok ? 1 : 0}\u0000${billed ? 1 : 0}`;
      group = groups.get(key) ?? null;
      if (group === null) groups.set(key, (group = { billed, byBucket: ROLLUP_GRAINS.map(() => new Map()), lastPrefix: ['', '', ''], lastDelta: [null, null, null] }));
    }
    prev = r;
    const iso = r.created_at.length === 24 && r.created_at.endsWith('Z') ? r.created_at : new Date(r.created_at).toISOString();
    const bin = latencyBin(r.latency_ms);
    const cost = r.total_cost === null ? 0 : usdToNano(r.total_cost);
    const upstream = r.upstream_inference_cost === null ? 0 : usdToNano(r.upstream_inference_cost);
    const latency = Math.round(r.latency_ms);
    for (let g = 0; g < ROLLUP_GRAINS.length; g++) {
      let d = group.lastDelta[g] ?? null;
      if (d === null || !iso.startsWith(group.lastPrefix[g]!)) {
        const [len, tail] = CUT[ROLLUP_GRAINS[g]!];
        const prefix = iso.slice(0, len);
        const bucket = prefix + tail;
        d = group.byBucket[g]!.get(bucket) ?? null;
        if (d === null) {
          d = newDelta(ROLLUP_GRAINS[g]!, bucket, r, billed);
          group.byBucket[g]!.set(bucket, d);
          out.push(d);
        }
        group.lastPrefix[g] = prefix;
        group.lastDelta[g] = d;
      }
      d.requests++;
      d.tokens_prompt += r.tokens_prompt;
      d.tokens_completion += r.tokens_completion;
      d.tokens_reasoning += r.native_tokens_reasoning;
      d.cost_nano += cost;
      d.upstream_cost_nano += upstream;
      d.latency_ms_sum += latency;
      d.hist[bin]!++;
    }
  }
  return out;
}

function newDelta(grain: RollupGrain, bucket: string, r: RollupSource, billed: boolean): RollupDelta {
  return {
    grain,
    bucket,
    workspace_id: r.workspace_id,
    key_hash: r.key_hash,
    model: r.model ?? '',
    provider_name: r.provider_name ?? '',
    endpoint_tag: r.endpoint_tag ?? '',
    api_type: r.api_type,
    finish_reason: r.finish_reason ?? '',
    status: r.status,
    is_byok: r.is_byok,
    billed,
    requests: 0,
    tokens_prompt: 0,
    tokens_completion: 0,
    tokens_reasoning: 0,
    cost_nano: 0,
    upstream_cost_nano: 0,
    latency_ms_sum: 0,
    hist: new Array<number>(LATENCY_BUCKETS).fill(0),
  };
}

/**
 * The rollup grain that answers a range and a time bucket exactly: the coarsest whose buckets both ends fall on
 * and no coarser than the bucket asked for (week and month buckets are made of days); null when the range does not
 * fall on whole minutes.
 */
export function grainFor(start: number, end: number, granularity: string | null): RollupGrain | null {
  const fits = (ms: number) => start % ms === 0 && end % ms === 0;
  const cap = granularity === 'minute' ? 0 : granularity === 'hour' ? 1 : 2;
  const order: Array<[RollupGrain, number]> = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  for (const [g, ms] of order) if (ROLLUP_GRAINS.indexOf(g) <= cap && fits(ms)) return g;
  return null;
}
