/** Presets: each preset's designated version and its history, any two versions side by side. */
import { useEffect, useState } from 'react';
import { qs } from '../api';
import { Card, Empty, Field, Json, Link, Page, Query, useGet, usePath, when } from '../ui';
import { WorkspacePicker } from './keys';

interface Version {
  id: string;
  version: number;
  config: Record<string, unknown>;
  system_prompt: string | null;
  created_at: string;
}
interface Preset {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  designated_version: Version;
  updated_at: string;
}

export function Presets() {
  const path = usePath();
  const slug = path.startsWith('/presets/') ? decodeURIComponent(path.slice('/presets/'.length)) : null;
  const [workspace, setWorkspace] = useState('');
  const q = useGet<{ data: Preset[] }>(`/presets${qs({ workspace_id: workspace, limit: 100 })}`);
  return (
    <Page title="Presets" intro="A preset is a saved request configuration (model, routing, parameters, system prompt) that clients call as model: @preset/slug.">
      <div className="toolbar">
        <WorkspacePicker value={workspace} onChange={setWorkspace} />
      </div>
      <Query q={q}>
        {({ data }) =>
          data.length === 0 ? (
            <Empty title="No presets yet.">
              Save one with <code>POST /api/v1/presets/&lt;slug&gt;/chat/completions</code> and a request body; each save adds a version you can compare here.
            </Empty>
          ) : (
            <div className="two-col">
              <ul className="picker" aria-label="Presets">
                {data.map((p) => (
                  <li key={p.id}>
                    <Link to={`/presets/${p.slug}`} current={p.slug === slug}>
                      {p.name} <span className="muted">v{p.designated_version.version}</span>
                    </Link>
                  </li>
                ))}
              </ul>
              <div>{slug ? <Versions slug={slug} workspace={workspace} preset={data.find((p) => p.slug === slug)} /> : <p className="muted">Select a preset to see its versions.</p>}</div>
            </div>
          )
        }
      </Query>
    </Page>
  );
}

function Versions({ slug, workspace, preset }: { slug: string; workspace: string; preset?: Preset }) {
  const q = useGet<{ data: Version[] }>(`/presets/${encodeURIComponent(slug)}/versions${qs({ workspace_id: workspace, limit: 100 })}`);
  const [left, setLeft] = useState(0);
  const [right, setRight] = useState(0);
  useEffect(() => {
    const vs = q.data?.data ?? [];
    if (vs.length) {
      setRight(vs[vs.length - 1].version);
      setLeft(vs[Math.max(vs.length - 2, 0)].version);
    }
  }, [q.data]);
  return (
    <Query q={q}>
      {({ data }) => {
        const pick = (v: number) => data.find((x) => x.version === v);
        const side = (label: string, v: number, set: (n: number) => void) => (
          <div>
            <Field label={label}>
              {(id) => (
                <select id={id} value={v} onChange={(e) => set(Number(e.target.value))}>
                  {data.map((x) => (
                    <option key={x.id} value={x.version}>
                      v{x.version} · {when(x.created_at)}
                      {preset?.designated_version.version === x.version ? ' (designated)' : ''}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {pick(v) ? <Json value={{ system_prompt: pick(v)!.system_prompt, ...pick(v)!.config }} label={`Version ${v}`} /> : null}
          </div>
        );
        return (
          <Card title={`${preset?.name ?? slug}: ${data.length} version${data.length === 1 ? '' : 's'}`}>
            {preset?.description ? <p className="muted">{preset.description}</p> : null}
            <div className="split">
              {side('Left', left, setLeft)}
              {side('Right', right, setRight)}
            </div>
          </Card>
        );
      }}
    </Query>
  );
}
