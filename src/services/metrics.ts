/**
 * Prometheus metrics (`GET /metrics`, docs/metrics.md): what the gateway served, from the generation records — every
 * request of every API (chat, responses, messages, speech, embeddings, video) is one record, so one observer sees them
 * all — plus the record queue and Node's process metrics (prom-client's default collectors).
 *
 * Hot path: `observe(row)` runs once per request. It only adds numbers into plain per-series objects found by one
 * string key (no label hashing, no prom-client call); prom-client's registry reads the series when scraped, through
 * metric objects whose `get()` builds the values then. Labels are bounded: the served model and provider come from
 * the catalog (never the requested model, which is caller input), statuses are HTTP codes, `api` is a fixed set.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { GenerationRow } from '../store/types.js';
import type { GenerationRecorder } from './generations.js';

/** Upper bounds (seconds) of the request duration histogram: up to ten-minute reasoning streams. */
export const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Upper bounds (seconds) of the time-to-first-token histogram. */
export const TTFT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A histogram's cumulative counts per bucket (plus +Inf), sum and count. */
class Hist {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(v: number): void {
    let i = 0;
    while (i < this.bounds.length && v > this.bounds[i]) i++;
    this.counts[i]++;
    this.sum += v;
    this.count++;
  }
}

interface Series {
  labels: { api: string; model: string; provider: string };
  /** Requests by status. */
  byStatus: Map<number, number>;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  cost: number;
  /** Requests served (status 200) with no known price. */
  unpriced: number;
  duration: Hist;
  ttft: Hist;
}

/** One sample as prom-client's registry prints it (`metricName` for a histogram's _bucket, _sum and _count lines). */
interface Sample {
  metricName?: string;
  labels: Record<string, string>;
  value: number;
}
type Values = Sample[];

/** A prom-client metric whose values are built when scraped. */
function scraped(name: string, help: string, type: 'counter' | 'gauge' | 'histogram', values: () => Values, aggregator: 'sum' | 'min' = 'sum') {
  return {
    name,
    help,
    type,
    // How the workers' values add up in /metrics under GATEWAY_WORKERS (services/cluster-metrics.ts).
    get: async () => ({ name, help, type, values: values(), aggregator }),
  };
}

/** Node's process metrics (CPU, memory, event loop lag, GC): one registry per process, started on first use. */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class GatewayMetrics {
  /** The gateway's own metrics (this instance's requests). */
  readonly registry = new Registry();
  /** Series by api, model and provider: nested maps, so that finding one allocates nothing. */
  private readonly index = new Map<string, Map<string, Map<string, Series>>>();
  /** Upstream attempts by provider and status (a fallback is a failed attempt followed by another). */
  private readonly attemptIndex = new Map<string, Map<number, { labels: { provider: string; status: string }; count: number }>>();
  /** Response cache lookups by API and result (hits make no generation record, so they are counted here). */
  private readonly cacheIndex = new Map<string, { labels: { api: string; result: 'hit' | 'miss' }; count: number }>();

  constructor(recorder: GenerationRecorder | null, redisUp: (() => boolean | null) | null = null) {
    const r = this.registry;
    const each = <T>(fn: (s: Series) => T[]): T[] => [...this.index.values()].flatMap((byModel) => [...byModel.values()].flatMap((byProvider) => [...byProvider.values()].flatMap(fn)));
    r.registerMetric(
      scraped('gateway_requests_total', 'Requests handled, by API, served model, provider and HTTP status (model and provider empty when none served).', 'counter', () =>
        each((s) => [...s.byStatus].map(([status, value]) => ({ labels: { ...s.labels, status: String(status) }, value }))),
      ) as never,
    );
    r.registerMetric(
      scraped('gateway_tokens_total', 'Tokens of served requests by kind: prompt (cached included), completion (reasoning included), reasoning, cached (prompt tokens read from the provider cache).', 'counter', () =>
        each((s) =>
          (
            [
              ['prompt', s.promptTokens],
              ['completion', s.completionTokens],
              ['reasoning', s.reasoningTokens],
              ['cached', s.cachedTokens],
            ] as const
          ).map(([kind, value]) => ({ labels: { ...s.labels, kind }, value })),
        ),
      ) as never,
    );
    r.registerMetric(scraped('gateway_cost_usd_total', 'Cost of served requests in USD, at the endpoints’ prices.', 'counter', () => each((s) => [{ labels: s.labels, value: s.cost }])) as never);
    r.registerMetric(
      scraped('gateway_unpriced_requests_total', 'Served requests whose endpoint has no known price (not in gateway_cost_usd_total).', 'counter', () =>
        each((s) => (s.unpriced > 0 ? [{ labels: s.labels, value: s.unpriced }] : [])),
      ) as never,
    );
    r.registerMetric(scraped('gateway_request_duration_seconds', 'Time from the request to its end (the whole stream when streamed).', 'histogram', () => each((s) => histValues('gateway_request_duration_seconds', s.labels, s.duration))) as never);
    r.registerMetric(scraped('gateway_time_to_first_token_seconds', 'Time from the request to its first output: the first streamed token or audio byte, or the provider’s whole answer when not streamed.', 'histogram', () => each((s) => (s.ttft.count > 0 ? histValues('gateway_time_to_first_token_seconds', s.labels, s.ttft) : []))) as never);
    r.registerMetric(
      scraped('gateway_upstream_attempts_total', 'Attempts sent to providers, by provider and the status the gateway mapped their outcome to.', 'counter', () =>
        [...this.attemptIndex.values()].flatMap((byStatus) => [...byStatus.values()].map((a) => ({ labels: a.labels, value: a.count }))),
      ) as never,
    );
    r.registerMetric(
      scraped('gateway_cache_lookups_total', 'Response cache lookups (X-Gateway-Cache), by API and result: a hit is answered without a provider call or a generation record.', 'counter', () =>
        [...this.cacheIndex.values()].map((c) => ({ labels: c.labels, value: c.count })),
      ) as never,
    );
    if (redisUp && redisUp() !== null) {
      r.registerMetric(scraped('gateway_redis_up', 'Whether Redis (GATEWAY_REDIS_URL) is connected: 0 while this instance runs in the degraded mode (its own counters and caches).', 'gauge', () => [{ labels: {}, value: redisUp() ? 1 : 0 }], 'min') as never);
    }
    if (recorder) {
      r.registerMetric(scraped('gateway_generation_records_queued', 'Generation records accepted but not yet written to the store.', 'gauge', () => [{ labels: {}, value: recorder.queued }]) as never);
      r.registerMetric(scraped('gateway_generation_flush_failures_total', 'Failed writes of generation batches (each is retried).', 'counter', () => [{ labels: {}, value: recorder.flushFailures }]) as never);
      r.registerMetric(
        scraped('gateway_generation_records_dead_lettered_total', 'Generation records the database refused, moved to the generation_dead_letters table (their usage still counts).', 'counter', () => [
          { labels: {}, value: recorder.deadLettered },
        ]) as never,
      );
    }
  }

  private seriesOf(api: string, model: string, provider: string): Series {
    let byModel = this.index.get(api);
    if (!byModel) this.index.set(api, (byModel = new Map()));
    let byProvider = byModel.get(model);
    if (!byProvider) byModel.set(model, (byProvider = new Map()));
    let s = byProvider.get(provider);
    if (!s) {
      s = {
        labels: { api, model, provider },
        byStatus: new Map(),
        promptTokens: 0,
        completionTokens: 0,
        reasoningTokens: 0,
        cachedTokens: 0,
        cost: 0,
        unpriced: 0,
        duration: new Hist(DURATION_BUCKETS),
        ttft: new Hist(TTFT_BUCKETS),
      };
      byProvider.set(provider, s);
    }
    return s;
  }

  /** One finished request (its generation record). */
  observe = (row: GenerationRow): void => {
    const s = this.seriesOf(row.api_type, row.model ?? '', row.provider_name ?? '');
    s.byStatus.set(row.status, (s.byStatus.get(row.status) ?? 0) + 1);
    s.promptTokens += row.tokens_prompt;
    s.completionTokens += row.tokens_completion;
    s.reasoningTokens += row.native_tokens_reasoning;
    s.cachedTokens += row.native_tokens_cached;
    if (row.total_cost !== null) s.cost += row.total_cost;
    else if (row.status === 200) s.unpriced++;
    s.duration.observe(row.latency_ms / 1000);
    if (row.ttft_ms !== null) s.ttft.observe(row.ttft_ms / 1000);
    const attempts = row.attempts;
    for (let i = 0; i < attempts.length; i++) {
      const a = attempts[i];
      let byStatus = this.attemptIndex.get(a.provider);
      if (!byStatus) this.attemptIndex.set(a.provider, (byStatus = new Map()));
      const entry = byStatus.get(a.status);
      if (entry) entry.count++;
      else byStatus.set(a.status, { labels: { provider: a.provider, status: String(a.status) }, count: 1 });
    }
  };

  /** One response cache lookup. */
  cacheLookup(api: string, hit: boolean): void {
    const id = `${api}|${hit ? 'hit' : 'miss'}`;
    const entry = this.cacheIndex.get(id);
    if (entry) entry.count++;
    else this.cacheIndex.set(id, { labels: { api, result: hit ? 'hit' : 'miss' }, count: 1 });
  }

  /** Under GATEWAY_WORKERS: the whole cluster's text, from the primary (services/cluster-metrics.ts). */
  cluster: (() => Promise<string>) | null = null;

  /** This process's registries: the gateway's metrics and Node's process metrics. */
  get registries(): Registry[] {
    return [this.registry, processMetrics()];
  }

  /** One of GATEWAY_WORKERS' processes: `text()` is the cluster's, and `gateway_workers` counts the workers reporting. */
  joinCluster(clusterText: () => Promise<string>): void {
    this.cluster = clusterText;
    this.registry.registerMetric(scraped('gateway_workers', 'Worker processes serving this port that answered this scrape (GATEWAY_WORKERS).', 'gauge', () => [{ labels: {}, value: 1 }]) as never);
  }

  /** The exposition text (Prometheus text format 0.0.4): the gateway's metrics, then the process's (every worker's). */
  async text(): Promise<string> {
    if (this.cluster) return this.cluster();
    const [own, proc] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return `${own}\n${proc}`;
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

function histValues(name: string, labels: Record<string, string>, h: Hist): Values {
  const out: Values = [];
  let cumulative = 0;
  for (let i = 0; i <= h.bounds.length; i++) {
    cumulative += h.counts[i];
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: i < h.bounds.length ? String(h.bounds[i]) : '+Inf' }, value: cumulative });
  }
  out.push({ metricName: `${name}_sum`, labels, value: h.sum });
  out.push({ metricName: `${name}_count`, labels, value: h.count });
  return out;
}
