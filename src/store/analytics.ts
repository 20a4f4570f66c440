/**
 * Analytics (POST /analytics/query, docs/observability.md) answered from the rollups (store/rollups.ts): one grouped
 * query over the coarsest grain that covers the range exactly, then metrics computed from exact integer sums and
 * ordered here. The metric and dimension names are the API's.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect } from './migrations/index.js';
import { grainFor } from '../core/rollups.js';
import { bucketExpr, metricValue, sumSelections, sumsOf } from './rollups.js';

export const ANALYTICS_METRICS = {
  request_count: { label: 'Request Count', format: 'number', rate: false, percentile: false },
  prompt_tokens: { label: 'Prompt Tokens', format: 'number', rate: false, percentile: false },
  completion_tokens: { label: 'Completion Tokens', format: 'number', rate: false, percentile: false },
  reasoning_tokens: { label: 'Reasoning Tokens', format: 'number', rate: false, percentile: false },
  total_tokens: { label: 'Total Tokens', format: 'number', rate: false, percentile: false },
  total_cost: { label: 'Total Cost (USD)', format: 'currency', rate: false, percentile: false },
  error_count: { label: 'Error Count', format: 'number', rate: false, percentile: false },
  error_rate: { label: 'Error Rate', format: 'percent', rate: true, percentile: false },
  avg_latency_ms: { label: 'Average Latency', format: 'latency', rate: true, percentile: false },
  p50_latency_ms: { label: 'Latency p50', format: 'latency', rate: true, percentile: true },
  p95_latency_ms: { label: 'Latency p95', format: 'latency', rate: true, percentile: true },
  p99_latency_ms: { label: 'Latency p99', format: 'latency', rate: true, percentile: true },
} as const;
export type AnalyticsMetric = keyof typeof ANALYTICS_METRICS;

/** Dimension name → column of `generations`. */
export const ANALYTICS_DIMENSIONS = {
  model: { label: 'Model', column: 'model' },
  provider: { label: 'Provider', column: 'provider_name' },
  api_key_id: { label: 'API Key (hash)', column: 'key_hash' },
  workspace_id: { label: 'Workspace', column: 'workspace_id' },
  api_type: { label: 'API', column: 'api_type' },
  finish_reason: { label: 'Finish Reason', column: 'finish_reason' },
  status: { label: 'HTTP Status', column: 'status' },
} as const;
export type AnalyticsDimension = keyof typeof ANALYTICS_DIMENSIONS;

export const ANALYTICS_GRANULARITIES = { minute: 'Minute', hour: 'Hour', day: 'Day', week: 'Week', month: 'Month' } as const;
export type Granularity = keyof typeof ANALYTICS_GRANULARITIES;

export const ANALYTICS_OPERATORS = { eq: 'scalar', neq: 'scalar', in: 'array', not_in: 'array', gt: 'scalar', gte: 'scalar', lt: 'scalar', lte: 'scalar' } as const;
export type AnalyticsOperator = keyof typeof ANALYTICS_OPERATORS;

export interface AnalyticsFilter {
  field: AnalyticsDimension;
  operator: AnalyticsOperator;
  /** A scalar for eq/neq/gt/gte/lt/lte; a list for in/not_in. */
  value: string | number | Array<string | number>;
}

export interface AnalyticsQuery {
  metrics: AnalyticsMetric[];
  dimensions: AnalyticsDimension[];
  granularity: Granularity | null;
  filters: AnalyticsFilter[];
  /** ISO timestamps: [start, end). */
  start: string;
  end: string;
  /** A metric, a dimension, or `date`. */
  orderBy: { field: string; direction: 'asc' | 'desc' };
  limit: number;
}

export const dateKey = (g: Granularity) => `date__${g}`;

/** Rows of metric and dimension values (`date__<granularity>` for the time bucket), ordered; at most `limit` + 1. */
export async function runAnalytics(db: Kysely<any>, kind: Dialect, q: AnalyticsQuery): Promise<Record<string, string | number | null>[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const startMs = Date.parse(q.start);
  const endMs = Date.parse(q.end);
  const grain = grainFor(startMs, endMs, q.granularity) ?? 'minute';
  let query = db.selectFrom('generation_rollups').where('grain', '=', grain).where('bucket', '>=', q.start).where('bucket', '<', q.end);
  for (const f of q.filters) query = query.where(filterSql(f));
  const withHist = q.metrics.some((m) => ANALYTICS_METRICS[m].percentile) || PERCENTILE_METRICS.has(q.orderBy.field);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let sel: any = query.select(sumSelections(withHist) as any);
  const groups: RawBuilder<unknown>[] = [];
  if (q.granularity) {
    const b = bucketExpr(kind, q.granularity);
    sel = sel.select(b.as(dateKey(q.granularity)));
    groups.push(b);
  }
  for (const d of q.dimensions) {
    const col = sql.ref(ANALYTICS_DIMENSIONS[d].column);
    sel = sel.select(col.as(d));
    groups.push(col);
  }
  if (groups.length) sel = sel.groupBy(groups);
  const raw: Record<string, unknown>[] = await sel.execute();
  const rows: Record<string, string | number | null>[] = [];
  for (const r of raw) {
    const sums = sumsOf(r, withHist);
    if (sums.requests === 0) continue; // no records in the range (an ungrouped sum over nothing)
    const out: Record<string, string | number | null> = {};
    if (q.granularity) out[dateKey(q.granularity)] = r[dateKey(q.granularity)] as string;
    for (const d of q.dimensions) out[d] = dimValue(d, r[d]);
    for (const m of new Set([...q.metrics, 'request_count'])) out[m] = metricValue(m, sums);
    if (PERCENTILE_METRICS.has(q.orderBy.field)) out[q.orderBy.field] = metricValue(q.orderBy.field, sums);
    rows.push(out);
  }
  const orderKey = q.orderBy.field === 'date' && q.granularity ? dateKey(q.granularity) : q.orderBy.field;
  const tie = [...(q.granularity ? [dateKey(q.granularity)] : []), ...q.dimensions];
  const dir = q.orderBy.direction === 'asc' ? 1 : -1;
  rows.sort((a, b) => dir * compare(a[orderKey], b[orderKey]) || tie.reduce((c, k) => c || compare(a[k], b[k]), 0));
  return rows.slice(0, q.limit + 1);
}

const PERCENTILE_METRICS = new Set<string>(Object.entries(ANALYTICS_METRICS).filter(([, m]) => m.percentile).map(([k]) => k));

/** Nulls first, numbers numerically, strings by code point. */
function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : 1;
}

/** A dimension value as the API shows it: none ('' in the rollups) is null; status a number. */
function dimValue(d: AnalyticsDimension, v: unknown): string | number | null {
  if (d === 'status') return v === null || v === undefined ? null : Number(v);
  return v === '' || v === null || v === undefined ? null : String(v);
}

/**
 * A filter over the rollups. eq/in: the value is set and listed; neq/not_in: unset or not listed; gt/gte/lt/lte:
 * set and ordered against the value (numerically for `status`, as text otherwise).
 */
function filterSql(f: AnalyticsFilter) {
  const col = ANALYTICS_DIMENSIONS[f.field].column;
  const numeric = f.field === 'status';
  const conv = (v: string | number) => (numeric ? Number(v) : String(v));
  const values = (Array.isArray(f.value) ? f.value : [f.value]).map(conv);
  const cmp = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (eb: any) => {
    if (f.operator === 'eq' || f.operator === 'in') return numeric ? eb(col, 'in', values) : eb.and([eb(col, '<>', ''), eb(col, 'in', values)]);
    if (f.operator === 'neq' || f.operator === 'not_in') return eb(col, 'not in', values);
    const op = cmp[f.operator];
    return numeric ? eb(col, op, values[0]) : eb.and([eb(col, '<>', ''), eb(col, op, values[0])]);
  };
}
