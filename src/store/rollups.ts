/**
 * Analytics rollups (docs/observability.md): `generation_rollups` rows — one per grain (minute, hour, day), bucket and
 * dimension values — added to as generation batches are written (off the request path), and read by POST
 * /analytics/query and GET /activity. Sums are integers (tokens, nano-dollars, milliseconds); latency percentiles come
 * from the per-row histogram (core/rollups.ts).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { histogramQuantile, LATENCY_BUCKETS, rollupDeltas, type RollupDelta, type RollupGrain, type RollupSource } from '../core/rollups.js';
import { nanoToUsd } from '../core/money.js';
import type { Dialect } from './migrations/index.js';
import type { ActivityRow } from './types.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

export const HIST_COLUMNS = Array.from({ length: LATENCY_BUCKETS }, (_, i) => `h${i}`);
const SUMS = ['requests', 'tokens_prompt', 'tokens_completion', 'tokens_reasoning', 'cost_nano', 'upstream_cost_nano', 'latency_ms_sum', ...HIST_COLUMNS];
export const ROLLUP_KEY = ['grain', 'bucket', 'workspace_id', 'key_hash', 'model', 'provider_name', 'endpoint_tag', 'api_type', 'finish_reason', 'status', 'is_byok', 'billed'];

function rowOf(d: RollupDelta, dialect: Dialect): Record<string, unknown> {
  const row: Record<string, unknown> = {
    grain: d.grain,
    bucket: d.bucket,
    workspace_id: d.workspace_id,
    key_hash: d.key_hash,
    model: d.model,
    provider_name: d.provider_name,
    endpoint_tag: d.endpoint_tag,
    api_type: d.api_type,
    finish_reason: d.finish_reason,
    status: d.status,
    is_byok: dialect === 'sqlite' ? (d.is_byok ? 1 : 0) : d.is_byok,
    billed: dialect === 'sqlite' ? (d.billed ? 1 : 0) : d.billed,
    requests: d.requests,
    tokens_prompt: d.tokens_prompt,
    tokens_completion: d.tokens_completion,
    tokens_reasoning: d.tokens_reasoning,
    cost_nano: d.cost_nano,
    upstream_cost_nano: d.upstream_cost_nano,
    latency_ms_sum: d.latency_ms_sum,
  };
  for (let i = 0; i < LATENCY_BUCKETS; i++) row[`h${i}`] = d.hist[i];
  return row;
}

/** A batch's deltas in one order everywhere: two instances' batches lock the rows they share in the same order (no deadlock). */
function orderedDeltas(rows: readonly RollupSource[]): RollupDelta[] {
  const key = (d: RollupDelta) => `${d.grain}\u0000${d.bucket}\u0000${d.workspace_id}\u0000${d.key_hash}\u0000${d.model}\u0000${d.provider_name}\u0000${d.endpoint_tag}\u0000${d.api_type}\u0000${d.finish_reason}\u0000${d.status}\u0000${+d.is_byok}${+d.billed}`;
  return rollupDeltas(rows)
    .map((d) => [key(d), d] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([, d]) => d);
}

/**
 * SQLite's rollup upsert as one prepared statement (the batch writer, store/sqlite-writer.ts): positional values in
 * the order of `sqliteRollupValues`. Built once; a Kysely upsert of 67 columns costs far more to compile than to run,
 * and the rollups are written with every generation batch.
 */
export const SQLITE_ROLLUP_UPSERT =
  `insert into generation_rollups (${[...ROLLUP_KEY, ...SUMS].join(', ')}) values (${[...ROLLUP_KEY, ...SUMS].map(() => '?').join(', ')}) ` +
  `on conflict (${ROLLUP_KEY.join(', ')}) do update set ${SUMS.map((c) => `${c} = generation_rollups.${c} + excluded.${c}`).join(', ')}`;

/** A batch's rollup deltas as the positional values of SQLITE_ROLLUP_UPSERT. */
export function sqliteRollupValues(rows: readonly RollupSource[]): Array<Array<string | number>> {
  return orderedDeltas(rows).map((d) => [
    d.grain,
    d.bucket,
    d.workspace_id,
    d.key_hash,
    d.model,
    d.provider_name,
    d.endpoint_tag,
    d.api_type,
    d.finish_reason,
    d.status,
    d.is_byok ? 1 : 0,
    d.billed ? 1 : 0,
    d.requests,
    d.tokens_prompt,
    d.tokens_completion,
    d.tokens_reasoning,
    d.cost_nano,
    d.upstream_cost_nano,
    d.latency_ms_sum,
    ...d.hist,
  ]);
}

/** Adds a batch's records to the rollups (upserts: safe with several instances writing). */
export async function addRollups(db: Db, dialect: Dialect, rows: readonly RollupSource[]): Promise<void> {
  const deltas = orderedDeltas(rows);
  // 67 columns a row: 100 rows a statement (6,700 parameters) stays under SQLite's (32,766) and PostgreSQL's (65,535) limits.
  for (let i = 0; i < deltas.length; i += 100) {
    await db
      .insertInto('generation_rollups')
      .values(deltas.slice(i, i + 100).map((d) => rowOf(d, dialect)))
      .onConflict((oc) => oc.columns(ROLLUP_KEY).doUpdateSet(Object.fromEntries(SUMS.map((c) => [c, sql`generation_rollups.${sql.ref(c)} + excluded.${sql.ref(c)}`]))))
      .execute();
  }
}

/** The time bucket of a rollup row for a query's granularity (week: from Monday; month: from the 1st; UTC). */
export function bucketExpr(dialect: Dialect, granularity: string): RawBuilder<string> {
  if (dialect === 'sqlite') {
    if (granularity === 'week') return sql<string>`date(bucket, 'weekday 0', '-6 days') || 'T00:00:00.000Z'`;
    if (granularity === 'month') return sql<string>`substr(bucket, 1, 7) || '-01T00:00:00.000Z'`;
    const [len, tail] = granularity === 'minute' ? [16, ':00.000Z'] : granularity === 'hour' ? [13, ':00:00.000Z'] : [10, 'T00:00:00.000Z'];
    return sql<string>`substr(bucket, 1, ${sql.lit(len)}) || ${sql.lit(tail)}`;
  }
  return sql<string>`to_char(date_trunc(${sql.lit(granularity)}, bucket at time zone 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** The sums of a rollup query, turned into the API's metrics (exact: integer sums, one division at the end). */
export interface RollupSums {
  requests: number;
  errors: number;
  tokens_prompt: number;
  tokens_completion: number;
  tokens_reasoning: number;
  cost_nano: number;
  latency_ms_sum: number;
  hist: number[] | null;
}

export function metricValue(metric: string, s: RollupSums): number | null {
  switch (metric) {
    case 'request_count':
      return s.requests;
    case 'prompt_tokens':
      return s.tokens_prompt;
    case 'completion_tokens':
      return s.tokens_completion;
    case 'reasoning_tokens':
      return s.tokens_reasoning;
    case 'total_tokens':
      return s.tokens_prompt + s.tokens_completion;
    case 'total_cost':
      return nanoToUsd(s.cost_nano);
    case 'error_count':
      return s.errors;
    case 'error_rate':
      return s.requests > 0 ? s.errors / s.requests : 0;
    case 'avg_latency_ms':
      return s.requests > 0 ? s.latency_ms_sum / s.requests : 0;
    case 'p50_latency_ms':
      return s.hist ? histogramQuantile(s.hist, 0.5) : null;
    case 'p95_latency_ms':
      return s.hist ? histogramQuantile(s.hist, 0.95) : null;
    case 'p99_latency_ms':
      return s.hist ? histogramQuantile(s.hist, 0.99) : null;
    default:
      return null;
  }
}

/** The sum columns of a grouped rollup query (histogram bins only when a percentile is asked for). */
export function sumSelections(withHist: boolean): RawBuilder<unknown>[] {
  const cols: RawBuilder<unknown>[] = [
    sql`sum(requests)`.as('requests') as unknown as RawBuilder<unknown>,
    sql`sum(case when status >= 400 then requests else 0 end)`.as('errors') as unknown as RawBuilder<unknown>,
  ];
  for (const c of ['tokens_prompt', 'tokens_completion', 'tokens_reasoning', 'cost_nano', 'latency_ms_sum', ...(withHist ? HIST_COLUMNS : [])]) {
    cols.push(sql`sum(${sql.ref(c)})`.as(c) as unknown as RawBuilder<unknown>);
  }
  return cols;
}

export function sumsOf(r: Record<string, unknown>, withHist: boolean): RollupSums {
  const n = (k: string) => Number(r[k] ?? 0);
  return {
    requests: n('requests'),
    errors: n('errors'),
    tokens_prompt: n('tokens_prompt'),
    tokens_completion: n('tokens_completion'),
    tokens_reasoning: n('tokens_reasoning'),
    cost_nano: n('cost_nano'),
    latency_ms_sum: n('latency_ms_sum'),
    hist: withHist ? HIST_COLUMNS.map(n) : null,
  };
}

/** GET /activity from the day rollups: served (200) or billed requests, per day, model, provider and endpoint. */
export async function rollupActivity(db: Db, dialect: Dialect, q: { from: string; to: string; keyHashes: string[] | null; workspaceId: string | null; byWorkspace: boolean }): Promise<ActivityRow[]> {
  if (q.keyHashes && q.keyHashes.length === 0) return [];
  const yes = dialect === 'sqlite' ? 1 : true;
  const day = sql<string>`substr(${dialect === 'sqlite' ? sql.ref('bucket') : sql`to_char(bucket at time zone 'UTC', 'YYYY-MM-DD')`}, 1, 10)`;
  let query = db
    .selectFrom('generation_rollups')
    .select([
      day.as('date'),
      'model',
      'provider_name',
      'endpoint_tag',
      sql<number>`sum(case when is_byok = ${yes} then 0 else cost_nano end)`.as('usage'),
      sql<number>`sum(case when is_byok = ${yes} then upstream_cost_nano else 0 end)`.as('byok_usage_inference'),
      sql<number>`sum(requests)`.as('requests'),
      sql<number>`sum(tokens_prompt)`.as('prompt_tokens'),
      sql<number>`sum(tokens_completion)`.as('completion_tokens'),
      sql<number>`sum(tokens_reasoning)`.as('reasoning_tokens'),
    ])
    .where('grain', '=', 'day' satisfies RollupGrain)
    .where('bucket', '>=', q.from)
    .where('bucket', '<', q.to)
    .where('model', '<>', '')
    .where('provider_name', '<>', '')
    .where((eb) => eb.or([eb('status', '=', 200), eb('billed', '=', yes)]));
  if (q.keyHashes) query = query.where('key_hash', 'in', q.keyHashes);
  if (q.workspaceId) query = query.where('workspace_id', '=', q.workspaceId);
  let grouped = query.groupBy([day, 'model', 'provider_name', 'endpoint_tag']);
  if (q.byWorkspace) grouped = grouped.select('workspace_id').groupBy('workspace_id');
  const rows = await grouped.orderBy(day).orderBy('model').orderBy('provider_name').orderBy('endpoint_tag').execute();
  return rows.map((r) => {
    const out: ActivityRow = {
      date: r.date as string,
      model: r.model as string,
      provider_name: r.provider_name as string,
      endpoint_tag: r.endpoint_tag as string,
      usage: nanoToUsd(Number(r.usage)),
      byok_usage_inference: nanoToUsd(Number(r.byok_usage_inference)),
      requests: Number(r.requests),
      prompt_tokens: Number(r.prompt_tokens),
      completion_tokens: Number(r.completion_tokens),
      reasoning_tokens: Number(r.reasoning_tokens),
    };
    if (q.byWorkspace) out.workspace_id = (r as unknown as { workspace_id: string }).workspace_id;
    return out;
  });
}
