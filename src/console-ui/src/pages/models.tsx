/** Models & providers: the catalog with prices, each model's endpoints with their measured status, uptime, latency and throughput. */
import { useState } from 'react';
import { Card, Empty, Field, Link, Page, Query, ms, num, perMillion, useGet, usePath } from '../ui';

interface Model {
  id: string;
  name: string;
  context_length: number;
  pricing: { prompt: string; completion: string; request?: string };
}
interface Endpoint {
  name: string;
  provider_name: string;
  tag: string;
  context_length: number;
  pricing: { prompt: string; completion: string };
  quantization: string | null;
  status: number;
  uptime_last_5m: number | null;
  uptime_last_30m: number | null;
  uptime_last_1d: number | null;
  latency_last_30m: { p50: number; p90: number } | null;
  throughput_last_30m: { p50: number } | null;
}

export function Models() {
  const path = usePath();
  const id = path.startsWith('/models/') ? decodeURIComponent(path.slice('/models/'.length)) : null;
  return (
    <Page title="Models & providers" intro="The catalog this gateway routes to. Prices are per million tokens; status, uptime and latency are measured by this gateway.">
      {id ? <ModelEndpoints id={id} /> : <Catalog />}
    </Page>
  );
}

function Catalog() {
  const models = useGet<{ data: Model[] }>('/models');
  const providers = useGet<{ data: { slug: string; name: string }[] }>('/providers');
  const [filter, setFilter] = useState('');
  return (
    <>
      <Card title="Models">
        <Field label="Search">{(id) => <input id={id} type="search" value={filter} onChange={(e) => setFilter(e.target.value)} placeholder="model id or name" />}</Field>
        <Query q={models}>
          {({ data }) => {
            const rows = data.filter((m) => !filter || m.id.includes(filter) || m.name.toLowerCase().includes(filter.toLowerCase()));
            return rows.length === 0 ? (
              <Empty title="No models.">The catalog is empty: add providers and models to the gateway's config file (docs/configuration.md), or turn the shipped catalog on.</Empty>
            ) : (
              <div className="table-wrap">
                <table data-testid="models">
                  <caption className="sr-only">Models</caption>
                  <thead>
                    <tr>
                      <th scope="col">Model</th>
                      <th scope="col" className="num">Context</th>
                      <th scope="col" className="num">Input / 1M</th>
                      <th scope="col" className="num">Output / 1M</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.slice(0, 300).map((m) => (
                      <tr key={m.id}>
                        <td>
                          <Link to={`/models/${m.id}`}>{m.id}</Link> <span className="muted">{m.name}</span>
                        </td>
                        <td className="num">{num(m.context_length)}</td>
                        <td className="num">{perMillion(m.pricing?.prompt)}</td>
                        <td className="num">{perMillion(m.pricing?.completion)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            );
          }}
        </Query>
      </Card>
      <Card title="Providers">
        <Query q={providers}>
          {({ data }) => (
            <ul className="chips">
              {data.map((p) => (
                <li key={p.slug}>
                  {p.name} <code>{p.slug}</code>
                </li>
              ))}
            </ul>
          )}
        </Query>
      </Card>
    </>
  );
}

const up = (v: number | null) => (v === null ? '—' : `${v.toFixed(1)}%`);

function ModelEndpoints({ id }: { id: string }) {
  const q = useGet<{ data: { name: string; endpoints: Endpoint[] } }>(`/models/${id}/endpoints`);
  return (
    <>
      <p>
        <Link to="/models">← All models</Link>
      </p>
      <Query q={q}>
        {({ data }) => (
          <Card title={`${data.name}: endpoints`}>
            <div className="table-wrap">
              <table data-testid="endpoints">
                <caption className="sr-only">Endpoints of {data.name}</caption>
                <thead>
                  <tr>
                    <th scope="col">Provider</th>
                    <th scope="col">Status</th>
                    <th scope="col" className="num">Uptime 30 min / 1 day</th>
                    <th scope="col" className="num">Latency p50 / p90</th>
                    <th scope="col" className="num">Throughput p50</th>
                    <th scope="col" className="num">Input / 1M</th>
                    <th scope="col" className="num">Output / 1M</th>
                    <th scope="col">Quantization</th>
                  </tr>
                </thead>
                <tbody>
                  {data.endpoints.map((e) => (
                    <tr key={e.tag}>
                      <td>
                        {e.provider_name} <code>{e.tag}</code>
                      </td>
                      <td>{e.status === 0 ? <span className="badge ok">up</span> : <span className="badge bad">degraded ({e.status})</span>}</td>
                      <td className="num">
                        {up(e.uptime_last_30m)} / {up(e.uptime_last_1d)}
                      </td>
                      <td className="num">{e.latency_last_30m ? `${ms(e.latency_last_30m.p50)} / ${ms(e.latency_last_30m.p90)}` : 'no traffic yet'}</td>
                      <td className="num">{e.throughput_last_30m ? `${e.throughput_last_30m.p50.toFixed(0)} tok/s` : '—'}</td>
                      <td className="num">{perMillion(e.pricing?.prompt)}</td>
                      <td className="num">{perMillion(e.pricing?.completion)}</td>
                      <td>{e.quantization ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Card>
        )}
      </Query>
    </>
  );
}
