/**
 * Observability destinations: where the gateway broadcasts request traces (GET/POST /observability/destinations,
 * PATCH/DELETE …/{id}; shape of the reference API). On a gateway without the API, says so.
 */
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { del, patch, post, qs } from '../api';
import { Card, Empty, ErrorNote, Field, Link, Loading, Page, Unavailable, useAction, useGet, when } from '../ui';
import { WorkspacePicker } from './keys';

interface Destination {
  id: string;
  name: string;
  type: string;
  enabled: boolean;
  sampling_rate: number;
  privacy_mode: boolean;
  created_at: string;
}
const TYPES = ['webhook', 'otel-collector', 'langfuse', 'langsmith', 'datadog', 'braintrust', 'posthog', 's3', 'sentry', 'arize', 'clickhouse', 'grafana', 'newrelic', 'opik', 'ramp', 'snowflake', 'weave'];

export function Destinations() {
  const [workspace, setWorkspace] = useState('');
  const q = useGet<{ data: Destination[] }>(`/observability/destinations${qs({ workspace_id: workspace, limit: 100 })}`);
  return (
    <Page
      title="Observability"
      intro={
        <>
          Destinations receive a trace of each request when the workspace's broadcast setting is on (<Link to="/workspaces">Workspaces</Link>).
        </>
      }
    >
      {q.error?.missingRoute ? (
        <Unavailable feature="Observability destinations" api="GET /api/v1/observability/destinations" />
      ) : (
        <>
          <div className="toolbar">
            <WorkspacePicker value={workspace} onChange={setWorkspace} />
          </div>
          <AddDestination workspace={workspace} />
          {q.isPending ? <Loading /> : q.error ? <ErrorNote error={q.error} /> : <List rows={q.data!.data} />}
        </>
      )}
    </Page>
  );
}

function List({ rows }: { rows: Destination[] }) {
  const qc = useQueryClient();
  const toggle = useAction(async (d: Destination) => {
    await patch(`/observability/destinations/${d.id}`, { enabled: !d.enabled });
    await qc.invalidateQueries();
  });
  const remove = useAction(async (d: Destination) => {
    if (!confirm(`Delete the destination “${d.name}”?`)) return;
    await del(`/observability/destinations/${d.id}`);
    await qc.invalidateQueries();
  });
  if (rows.length === 0) return <Empty title="No destination yet.">Add one above (a webhook or an OpenTelemetry collector is the quickest start).</Empty>;
  return (
    <>
      <ErrorNote error={toggle.error ?? remove.error} />
      <table>
        <caption className="sr-only">Destinations</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col" className="num">Sampling</th>
            <th scope="col">Status</th>
            <th scope="col">Added</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.id} className={d.enabled ? '' : 'dim'}>
              <td>{d.name}</td>
              <td>{d.type}</td>
              <td className="num">{d.sampling_rate}</td>
              <td>{d.enabled ? <span className="badge ok">enabled</span> : <span className="badge warn">disabled</span>}</td>
              <td>{when(d.created_at)}</td>
              <td className="row-actions">
                <button type="button" className="ghost" onClick={() => void toggle.run(d)}>
                  {d.enabled ? 'Disable' : 'Enable'}
                </button>
                <button type="button" className="ghost danger" onClick={() => void remove.run(d)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function AddDestination({ workspace }: { workspace: string }) {
  const qc = useQueryClient();
  const [f, setF] = useState({ name: '', type: 'webhook', config: '{\n  "url": "https://example.com/hook"\n}' });
  const add = useAction(async () => {
    let config: unknown;
    try {
      config = JSON.parse(f.config);
    } catch {
      throw new Error('Config must be a JSON object');
    }
    await post('/observability/destinations', { name: f.name, type: f.type, config, ...(workspace ? { workspace_id: workspace } : {}) });
    setF({ ...f, name: '' });
    await qc.invalidateQueries();
  });
  return (
    <Card title="Add a destination">
      <form
        className="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          void add.run();
        }}
      >
        <Field label="Name">{(id) => <input id={id} value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} required />}</Field>
        <Field label="Type">
          {(id) => (
            <select id={id} value={f.type} onChange={(e) => setF({ ...f, type: e.target.value })}>
              {TYPES.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Config (JSON)" hint="The type's settings: URL, keys…">
          {(id) => <textarea id={id} rows={4} className="mono" value={f.config} onChange={(e) => setF({ ...f, config: e.target.value })} />}
        </Field>
        <ErrorNote error={add.error} />
        <div className="field-actions">
          <button type="submit" disabled={add.busy}>
            Add destination
          </button>
        </div>
      </form>
    </Card>
  );
}
