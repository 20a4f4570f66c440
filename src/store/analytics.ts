/**
 * Analytics (POST /analytics/query, docs/observability.md) answered from the generation records with one grouped,
 * indexed query over the time range. The metric and dimension names are the API's; their SQL lives here.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Dialect } from './migrations/index.js';

export const ANALYTICS_METRICS = {
  request_count: { label: 'Request Count', format: 'number', rate: false },
  prompt_tokens: { label: 'Prompt Tokens', format: 'number', rate: false },
  completion_tokens: { label: 'Completion Tokens', format: 'number', rate: false },
  reasoning_tokens: { label: 'Reasoning Tokens', format: 'number', rate: false },
  total_tokens: { label: 'Total Tokens', format: 'number', rate: false },
  total_cost: { label: 'Total Cost (USD)', format: 'currency', rate: false },
  error_count: { label: 'Error Count', format: 'number', rate: false },
  error_rate: { label: 'Error Rate', format: 'percent', rate: true },
  avg_latency_ms: { label: 'Average Latency', format: 'latency', rate: true },
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
} as const;
export type AnalyticsDimension = keyof typeof ANALYTICS_DIMENSIONS;

export const ANALYTICS_GRANULARITIES = { minute: 'Minute', hour: 'Hour', day: 'Day' } as const;
export type Granularity = keyof typeof ANALYTICS_GRANULARITIES;

export const ANALYTICS_OPERATORS = { eq: 'scalar', neq: 'scalar', in: 'array', not_in: 'array' } as const;
export type AnalyticsOperator = keyof typeof ANALYTICS_OPERATORS;

export interface AnalyticsFilter {
  field: AnalyticsDimension;
  operator: AnalyticsOperator;
  /** A string for eq/neq; a list for in/not_in. */
  value: string | string[];
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

const METRIC_SQL: Record<AnalyticsMetric, RawBuilder<unknown>> = {
  request_count: sql`count(*)`,
  prompt_tokens: sql`sum(tokens_prompt)`,
  completion_tokens: sql`sum(tokens_completion)`,
  reasoning_tokens: sql`sum(native_tokens_reasoning)`,
  total_tokens: sql`sum(tokens_prompt + tokens_completion)`,
  total_cost: sql`sum(coalesce(total_cost, 0))`,
  error_count: sql`sum(case when status >= 400 then 1 else 0 end)`,
  error_rate: sql`sum(case when status >= 400 then 1.0 else 0.0 end) / count(*)`,
  avg_latency_ms: sql`avg(latency_ms)`,
};

/** The start of the record's minute, hour or day (UTC) as an ISO timestamp. */
function bucket(kind: Dialect, g: Granularity): RawBuilder<string> {
  if (kind === 'sqlite') {
    const [len, tail] = g === 'minute' ? [16, ':00.000Z'] : g === 'hour' ? [13, ':00:00.000Z'] : [10, 'T00:00:00.000Z'];
    return sql<string>`substr(created_at, 1, ${sql.lit(len)}) || ${sql.lit(tail)}`;
  }
  return sql<string>`to_char(date_trunc(${sql.lit(g)}, created_at at time zone 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

export const dateKey = (g: Granularity) => `date__${g}`;

/** Rows of metric and dimension values (`date__<granularity>` for the time bucket); at most `limit` + 1. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function runAnalytics(db: Kysely<any>, kind: Dialect, q: AnalyticsQuery): Promise<Record<string, string | number | null>[]> {
  let query = db.selectFrom('generations').where('created_at', '>=', q.start).where('created_at', '<', q.end);
  for (const f of q.filters) {
    const col = ANALYTICS_DIMENSIONS[f.field].column;
    const values = Array.isArray(f.value) ? f.value : [f.value];
    if (f.operator === 'eq' || f.operator === 'in') query = query.where(col, 'in', values);
    else query = query.where((eb) => eb.or([eb(col, 'is', null), eb(col, 'not in', values)]));
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let sel: any = query;
  const groups: RawBuilder<unknown>[] = [];
  if (q.granularity) {
    const b = bucket(kind, q.granularity);
    sel = sel.select(b.as(dateKey(q.granularity)));
    groups.push(b);
  }
  for (const d of q.dimensions) {
    const col = sql.ref(ANALYTICS_DIMENSIONS[d].column);
    sel = sel.select(col.as(d));
    groups.push(col);
  }
  const metrics = new Set<AnalyticsMetric>([...q.metrics, ...(q.orderBy.field === 'request_count' ? ['request_count' as const] : [])]);
  for (const m of metrics) sel = sel.select(METRIC_SQL[m].as(m));
  if (groups.length) sel = sel.groupBy(groups);
  const orderKey = q.orderBy.field === 'date' && q.granularity ? dateKey(q.granularity) : q.orderBy.field;
  sel = sel.orderBy(sql.ref(orderKey), q.orderBy.direction);
  // A stable order among equal values: the groups themselves.
  for (const g of groups) sel = sel.orderBy(g);
  const rows: Record<string, unknown>[] = await sel.limit(q.limit + 1).execute();
  return rows.map((r) => {
    const out: Record<string, string | number | null> = {};
    for (const [k, v] of Object.entries(r)) out[k] = k in ANALYTICS_METRICS ? (v === null ? 0 : Number(v)) : (v as string | null);
    return out;
  });
}
