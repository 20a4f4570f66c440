/**
 * Overview: spend, requests, tokens, error rate and latency over time, and a breakdown by model, provider, key or
 * workspace, from POST /analytics/query. Latency percentiles are drawn when GET /analytics/meta lists them (metrics
 * whose name has p50/p95); otherwise the average latency is.
 */
import { useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { post, type ApiError } from '../api';
import { TimeChart, type Series } from '../chart';
import { Card, Empty, ErrorNote, Field, Link, Loading, Page, Query, ms, num, pct, usd, useGet, useNames } from '../ui';

const RANGES = [
  { id: '1h', label: 'Last hour', ms: 3600e3, granularity: 'minute' },
  { id: '24h', label: 'Last 24 hours', ms: 24 * 3600e3, granularity: 'hour' },
  { id: '7d', label: 'Last 7 days', ms: 7 * 24 * 3600e3, granularity: 'day' },
  { id: '30d', label: 'Last 30 days', ms: 30 * 24 * 3600e3, granularity: 'day' },
];
const STEP: Record<string, number> = { minute: 60e3, hour: 3600e3, day: 24 * 3600e3 };
const DIMENSIONS = [
  { id: 'model', label: 'Model' },
  { id: 'provider', label: 'Provider' },
  { id: 'api_key_id', label: 'Key' },
  { id: 'workspace_id', label: 'Workspace' },
];

interface Meta {
  metrics: { name: string; display_label: string; display_format: string }[];
  granularities: { name: string; display_label: string }[];
}
type Row = Record<string, number | string | null>;

/** The latency metrics to draw: p50/p95 when the gateway offers them, else the average. */
function latencyMetrics(meta: Meta): { name: string; label: string }[] {
  const names = meta.metrics.map((m) => m.name);
  const p = ['p50', 'p95'].map((q) => names.find((n) => n.includes(q) && n.includes('latency'))).filter((n): n is string => !!n);
  if (p.length) return p.map((n) => ({ name: n, label: meta.metrics.find((m) => m.name === n)!.display_label }));
  return names.includes('avg_latency_ms') ? [{ name: 'avg_latency_ms', label: 'Average latency' }] : [];
}

function useAnalytics(body: object | null) {
  return useQuery<{ data: { data: Row[] } }, ApiError>({ queryKey: ['analytics', body], queryFn: () => post('/analytics/query', body), enabled: body !== null });
}

export function Overview() {
  const meta = useGet<{ data: Meta }>('/analytics/meta');
  return (
    <Page title="Overview" intro="What the gateway served: spend, requests, tokens, errors and latency, from the request records.">
      <Query q={meta}>{(m) => <Dashboard meta={m.data} />}</Query>
    </Page>
  );
}

function Dashboard({ meta }: { meta: Meta }) {
  const [range, setRange] = useState(RANGES[1]);
  const [granularity, setGranularity] = useState(range.granularity);
  const [dimension, setDimension] = useState('model');
  // The window is fixed when the pickers change (not on every render), aligned to the granularity.
  const window = useMemo(() => {
    const step = STEP[granularity];
    const end = Math.ceil(Date.now() / step) * step;
    return { start: new Date(end - Math.ceil(range.ms / step) * step).toISOString(), end: new Date(end).toISOString() };
  }, [range, granularity]);
  const latency = latencyMetrics(meta);
  const base = ['request_count', 'total_cost', 'total_tokens', 'error_rate'];
  const series = useAnalytics({ metrics: [...base, ...latency.map((l) => l.name)], granularity, time_range: window, limit: 10000 });
  const totals = useAnalytics({ metrics: [...base, 'error_count', ...latency.map((l) => l.name)], time_range: window });
  const breakdown = useAnalytics({ metrics: [...base, ...latency.map((l) => l.name)], dimensions: [dimension], time_range: window, order_by: { field: 'total_cost', direction: 'desc' }, limit: 20 });

  return (
    <>
      <div className="toolbar" role="group" aria-label="Time range">
        <Field label="Range">
          {(id) => (
            <select
              id={id}
              value={range.id}
              onChange={(e) => {
                const r = RANGES.find((x) => x.id === e.target.value)!;
                setRange(r);
                setGranularity(r.granularity);
              }}
            >
              {RANGES.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Granularity">
          {(id) => (
            <select id={id} value={granularity} onChange={(e) => setGranularity(e.target.value)}>
              {meta.granularities.map((g) => (
                <option key={g.name} value={g.name}>
                  {g.display_label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Totals q={totals} latency={latency} />
      {series.error ? <ErrorNote error={series.error} /> : series.isPending ? <Loading /> : <Charts rows={series.data!.data.data} granularity={granularity} window={window} latency={latency} />}
      <Card title="Breakdown">
        <div className="toolbar">
          <Field label="Group by">
            {(id) => (
              <select id={id} value={dimension} onChange={(e) => setDimension(e.target.value)}>
                {DIMENSIONS.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        {breakdown.error ? <ErrorNote error={breakdown.error} /> : breakdown.isPending ? <Loading /> : <Breakdown rows={breakdown.data!.data.data} dimension={dimension} latency={latency} />}
      </Card>
    </>
  );
}

function Totals({ q, latency }: { q: ReturnType<typeof useAnalytics>; latency: { name: string; label: string }[] }) {
  if (q.error) return <ErrorNote error={q.error} />;
  const r: Row = q.data?.data.data[0] ?? {};
  const tiles = [
    { label: 'Spend', value: usd(r.total_cost as number | null, 4) },
    { label: 'Requests', value: num((r.request_count as number) ?? 0) },
    { label: 'Tokens', value: num((r.total_tokens as number) ?? 0) },
    { label: 'Error rate', value: pct(r.error_rate as number | null) },
    ...latency.map((l) => ({ label: l.label, value: ms(r[l.name] as number | null) })),
  ];
  return (
    <dl className="tiles" data-testid="totals">
      {tiles.map((t) => (
        <div className="tile" key={t.label}>
          <dt>{t.label}</dt>
          <dd>{q.isPending ? '…' : t.value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Charts({ rows, granularity, window, latency }: { rows: Row[]; granularity: string; window: { start: string; end: string }; latency: { name: string; label: string }[] }) {
  const data = useMemo(() => {
    const step = STEP[granularity];
    const start = Date.parse(window.start);
    const end = Date.parse(window.end);
    const times: number[] = [];
    for (let t = start; t < end; t += step) times.push(t / 1000);
    const at = new Map(rows.map((r) => [Date.parse(String(r[`date__${granularity}`])) / 1000, r]));
    const col = (name: string, zero: boolean) => times.map((t) => (at.has(t) ? ((at.get(t)![name] as number | null) ?? null) : zero ? 0 : null));
    const s = (label: string, name: string, zero = true): Series => ({ label, values: col(name, zero) });
    return {
      times,
      requests: [s('Requests', 'request_count')],
      cost: [s('Spend', 'total_cost')],
      tokens: [s('Tokens', 'total_tokens')],
      errors: [s('Error rate', 'error_rate', false)],
      latency: latency.map((l) => s(l.label, l.name, false)),
    };
  }, [rows, granularity, window, latency]);
  if (rows.length === 0)
    return (
      <Empty title="No requests in this range yet.">
        Create an inference key on the <Link to="/keys">Keys</Link> page, then send a request to <code>/api/v1/chat/completions</code> (or try the <Link to="/playground">Playground</Link>); it appears here within a second.
      </Empty>
    );
  return (
    <div className="charts" data-testid="charts">
      <TimeChart title="Requests" times={data.times} series={data.requests} format={fmtCount} />
      <TimeChart title="Spend (USD)" times={data.times} series={data.cost} format={fmtUsd} />
      <TimeChart title="Tokens" times={data.times} series={data.tokens} format={fmtCount} />
      <TimeChart title="Error rate" times={data.times} series={data.errors} format={fmtPct} />
      {data.latency.length ? <TimeChart title="Latency" times={data.times} series={data.latency} format={fmtMs} /> : null}
    </div>
  );
}
const fmtCount = (v: number) => (Number.isInteger(v) ? num(v) : v.toFixed(1));
const fmtUsd = (v: number) => (v > 0 && v < 0.01 ? `$${Number(v.toPrecision(2))}` : `$${v.toFixed(2)}`);
const fmtPct = (v: number) => `${(v * 100).toFixed(0)}%`;
const fmtMs = (v: number) => ms(v);

function Breakdown({ rows, dimension, latency }: { rows: Row[]; dimension: string; latency: { name: string; label: string }[] }) {
  const names = useNames();
  const label = (v: unknown) => (dimension === 'api_key_id' ? names.key(v as string) : dimension === 'workspace_id' ? names.workspace(v as string) : String(v ?? '—'));
  if (rows.length === 0) return <p className="muted">Nothing to break down in this range.</p>;
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">{DIMENSIONS.find((d) => d.id === dimension)?.label}</th>
            <th scope="col" className="num">Requests</th>
            <th scope="col" className="num">Spend</th>
            <th scope="col" className="num">Tokens</th>
            <th scope="col" className="num">Error rate</th>
            {latency.map((l) => (
              <th scope="col" className="num" key={l.name}>
                {l.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              <td title={String(r[dimension] ?? '')}>{label(r[dimension])}</td>
              <td className="num">{num(r.request_count as number)}</td>
              <td className="num">{usd(r.total_cost as number)}</td>
              <td className="num">{num(r.total_tokens as number)}</td>
              <td className="num">{pct(r.error_rate as number)}</td>
              {latency.map((l) => (
                <td className="num" key={l.name}>
                  {ms(r[l.name] as number | null)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
