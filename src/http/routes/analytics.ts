/**
 * GET /analytics/meta and POST /analytics/query (the hosted API's shape, docs/observability.md): metrics grouped by up to
 * two dimensions and a time bucket, from the rollups of the organization's generation records. Management keys only.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../core/errors.js';
import {
  ANALYTICS_DIMENSIONS,
  ANALYTICS_GRANULARITIES,
  ANALYTICS_METRICS,
  ANALYTICS_OPERATORS,
  type AnalyticsFilter,
  type AnalyticsQuery,
} from '../../store/analytics.js';
import { errors, StringEnum } from '../schemas/common.js';
import type { Services } from '../../services/index.js';

const DAY_MS = 24 * 3600_000;
const MINUTE_MS = 60_000;
const METRICS = Object.keys(ANALYTICS_METRICS) as Array<keyof typeof ANALYTICS_METRICS>;
const DIMENSIONS = Object.keys(ANALYTICS_DIMENSIONS) as Array<keyof typeof ANALYTICS_DIMENSIONS>;
const OPERATORS = Object.keys(ANALYTICS_OPERATORS) as Array<keyof typeof ANALYTICS_OPERATORS>;
const GRANULARITIES = Object.keys(ANALYTICS_GRANULARITIES) as Array<keyof typeof ANALYTICS_GRANULARITIES>;

const Meta = Type.Object({
  data: Type.Object({
    metrics: Type.Array(Type.Object({ name: Type.String(), display_label: Type.String(), is_rate: Type.Boolean(), display_format: StringEnum(['number', 'currency', 'percent', 'latency', 'throughput'] as const) })),
    dimensions: Type.Array(Type.Object({ name: Type.String(), display_label: Type.String() })),
    operators: Type.Array(Type.Object({ name: StringEnum(OPERATORS), value_type: StringEnum(['scalar', 'array'] as const) })),
    granularities: Type.Array(Type.Object({ name: StringEnum(GRANULARITIES), display_label: Type.String() })),
  }),
});

const Body = Type.Object(
  {
    metrics: Type.Array(StringEnum(METRICS), { minItems: 1, maxItems: METRICS.length, uniqueItems: true, description: 'Metrics to compute (GET /analytics/meta lists them).' }),
    dimensions: Type.Optional(Type.Array(StringEnum(DIMENSIONS), { maxItems: 2, uniqueItems: true, description: 'Dimensions to group by (up to 2).' })),
    granularity: Type.Optional(StringEnum(GRANULARITIES, { description: 'Time bucket; the rows then carry `date__<granularity>`.' })),
    filters: Type.Optional(
      Type.Array(
        Type.Object(
          {
            field: StringEnum(DIMENSIONS),
            operator: StringEnum(OPERATORS),
            value: Type.Union([Type.String({ maxLength: 200 }), Type.Number(), Type.Array(Type.Union([Type.String({ maxLength: 200 }), Type.Number()]), { minItems: 1, maxItems: 100 })]),
          },
          { additionalProperties: false },
        ),
        { maxItems: 20 },
      ),
    ),
    time_range: Type.Optional(
      Type.Object(
        { start: Type.String({ format: 'date-time' }), end: Type.String({ format: 'date-time' }) },
        { additionalProperties: false, description: '[start, end), rounded out to whole minutes (the finest rollup); default: the last 30 days.' },
      ),
    ),
    order_by: Type.Optional(
      Type.Object(
        { field: Type.String({ minLength: 1, description: 'A requested metric, `request_count`, a requested dimension, or `date`.' }), direction: StringEnum(['asc', 'desc'] as const) },
        { additionalProperties: false },
      ),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, description: 'Maximum rows (default 1000).' })),
  },
  { additionalProperties: false },
);
type BodyT = Static<typeof Body>;

const Result = Type.Object({
  data: Type.Object({
    data: Type.Array(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Null()]), { description: 'Dimension, `date__<granularity>` and metric values.' })),
    metadata: Type.Object({ query_time_ms: Type.Number(), row_count: Type.Integer(), truncated: Type.Boolean() }),
  }),
});

/** The body as a store query, after the checks JSON Schema cannot express (400 naming the field). */
export function toQuery(b: BodyT, now: number): AnalyticsQuery {
  const dimensions = b.dimensions ?? [];
  const filters: AnalyticsFilter[] = (b.filters ?? []).map((f, i) => {
    const wantsArray = ANALYTICS_OPERATORS[f.operator] === 'array';
    if (wantsArray !== Array.isArray(f.value)) throw badRequest(`filters[${i}].value must be ${wantsArray ? 'an array' : 'a string'} for operator ${f.operator}`, { field: `filters[${i}].value` });
    return f;
  });
  // Whole minutes, the finest rollup: the start rounded down, the end up.
  const start = Math.floor((b.time_range ? Date.parse(b.time_range.start) : now - 30 * DAY_MS) / MINUTE_MS) * MINUTE_MS;
  const end = Math.ceil((b.time_range ? Date.parse(b.time_range.end) : now) / MINUTE_MS) * MINUTE_MS;
  if (!(end > start)) throw badRequest('time_range.end must be after time_range.start', { field: 'time_range.end' });
  const orderBy = b.order_by ?? (b.granularity ? { field: 'date', direction: 'asc' as const } : { field: b.metrics[0]!, direction: 'desc' as const });
  const orderable = new Set<string>([...b.metrics, 'request_count', 'p50_latency_ms', 'p95_latency_ms', 'p99_latency_ms', ...dimensions, ...(b.granularity ? ['date'] : [])]);
  if (!orderable.has(orderBy.field)) throw badRequest(`order_by.field must be one of ${[...orderable].join(', ')}`, { field: 'order_by.field' });
  return {
    metrics: b.metrics,
    dimensions,
    granularity: b.granularity ?? null,
    filters,
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    orderBy,
    limit: b.limit ?? 1000,
  };
}

export default async function analyticsRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.get(
    '/analytics/meta',
    {
      config: { auth: 'management' },
      schema: { tags: ['Analytics'], summary: 'Metrics, dimensions, filter operators and granularities of POST /analytics/query', response: { 200: Meta, ...errors(401, 403, 500) } },
    },
    async () => ({
      data: {
        metrics: METRICS.map((name) => ({ name, display_label: ANALYTICS_METRICS[name].label, is_rate: ANALYTICS_METRICS[name].rate, display_format: ANALYTICS_METRICS[name].format })),
        dimensions: DIMENSIONS.map((name) => ({ name, display_label: ANALYTICS_DIMENSIONS[name].label })),
        operators: OPERATORS.map((name) => ({ name, value_type: ANALYTICS_OPERATORS[name] })),
        granularities: GRANULARITIES.map((name) => ({ name, display_label: ANALYTICS_GRANULARITIES[name] })),
      },
    }),
  );

  app.post<{ Body: BodyT }>(
    '/analytics/query',
    {
      config: { auth: 'management' },
      schema: { tags: ['Analytics'], summary: 'Metrics over the generation records, grouped by dimensions and time', body: Body, response: { 200: Result, ...errors(400, 401, 403, 500) } },
    },
    async (req) => {
      const q = toQuery(req.body, Date.now());
      const began = performance.now();
      const rows = await svc.store.analytics(q);
      const page = rows.slice(0, q.limit);
      // request_count is computed for ordering even when not asked for; it is shown only when asked for.
      for (const r of page) for (const m of ['request_count', 'p50_latency_ms', 'p95_latency_ms', 'p99_latency_ms']) if (!(q.metrics as string[]).includes(m)) delete r[m];
      return { data: { data: page, metadata: { query_time_ms: Math.round((performance.now() - began) * 100) / 100, row_count: page.length, truncated: rows.length > q.limit } } };
    },
  );
}
