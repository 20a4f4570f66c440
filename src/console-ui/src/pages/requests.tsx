/**
 * Requests: the request log (GET /generations, filtered, cursor-paged) and one request's detail (GET /generation):
 * attempts and fallbacks, cost, timing, the logged input/output (GET /generation/content, when the gateway serves it
 * and I/O logging kept it) and feedback (POST /generation/feedback).
 */
import { useState, type FormEvent } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { ApiError, get, post, qs, type Generation } from '../api';
import { Card, Empty, ErrorNote, Field, Json, Link, Loading, Page, Query, StatusBadge, Unavailable, ms, navigate, num, usd, useAction, useGet, useNames, usePath, when } from '../ui';

interface Filters {
  model: string;
  provider: string;
  status: string;
  api_key_hash: string;
  from: string;
  to: string;
}
const NO_FILTERS: Filters = { model: '', provider: '', status: '', api_key_hash: '', from: '', to: '' };

export function Requests() {
  const path = usePath();
  const id = path.startsWith('/requests/') ? decodeURIComponent(path.slice('/requests/'.length)) : null;
  return (
    <Page title="Requests" intro="Every request the gateway served or refused, newest first. Select one to see its attempts, cost, timing and content.">
      {id ? <Detail id={id} /> : <Log />}
    </Page>
  );
}

function Log() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const q = useInfiniteQuery<{ data: Generation[]; next_cursor: string | null }, ApiError>({
    queryKey: ['generations', filters],
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) =>
      get(
        `/generations${qs({
          ...filters,
          from: filters.from ? new Date(filters.from).toISOString() : '',
          to: filters.to ? new Date(filters.to).toISOString() : '',
          cursor: pageParam as string | null,
          limit: 50,
        })}`,
      ),
    getNextPageParam: (last) => last.next_cursor,
    refetchInterval: 5_000,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setFilters(draft);
  };
  const set = (k: keyof Filters) => (e: { target: { value: string } }) => setDraft({ ...draft, [k]: e.target.value });
  const rows = q.data?.pages.flatMap((p) => p.data) ?? [];
  const names = useNames();
  return (
    <>
      <form className="toolbar filters" onSubmit={submit} aria-label="Filters">
        <Field label="Model">{(id) => <input id={id} value={draft.model} onChange={set('model')} placeholder="e.g. openai/gpt-4o" />}</Field>
        <Field label="Provider">{(id) => <input id={id} value={draft.provider} onChange={set('provider')} placeholder="provider slug" />}</Field>
        <Field label="Status">{(id) => <input id={id} value={draft.status} onChange={set('status')} inputMode="numeric" placeholder="e.g. 402" size={6} />}</Field>
        <Field label="Key hash">{(id) => <input id={id} value={draft.api_key_hash} onChange={set('api_key_hash')} placeholder="hash" />}</Field>
        <Field label="From">{(id) => <input id={id} type="datetime-local" value={draft.from} onChange={set('from')} />}</Field>
        <Field label="To">{(id) => <input id={id} type="datetime-local" value={draft.to} onChange={set('to')} />}</Field>
        <div className="field-actions">
          <button type="submit">Apply</button>
          <button
            type="button"
            className="ghost"
            onClick={() => {
              setDraft(NO_FILTERS);
              setFilters(NO_FILTERS);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      {q.error ? <ErrorNote error={q.error} /> : null}
      {q.isPending ? (
        <Loading />
      ) : rows.length === 0 ? (
        <Empty title={filters === NO_FILTERS ? 'No requests yet.' : 'No request matches these filters.'}>
          Requests appear here as soon as they are served. Create an inference key on the <Link to="/keys">Keys</Link> page and call <code>/api/v1/chat/completions</code>, or send one from the{' '}
          <Link to="/playground">Playground</Link>.
        </Empty>
      ) : (
        <div className="table-wrap">
          <table data-testid="request-log">
            <caption className="sr-only">Request log</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Status</th>
                <th scope="col">Model</th>
                <th scope="col">Provider</th>
                <th scope="col">API</th>
                <th scope="col" className="num">Tokens in / out</th>
                <th scope="col" className="num">Cost</th>
                <th scope="col" className="num">Latency</th>
                <th scope="col">Key</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((g) => (
                <tr key={g.id}>
                  <td>
                    <Link to={`/requests/${encodeURIComponent(g.id)}`}>{when(g.created_at)}</Link>
                  </td>
                  <td>
                    <StatusBadge status={g.status} />
                  </td>
                  <td>{g.model ?? g.requested_model ?? '—'}</td>
                  <td>{g.provider_name ?? '—'}</td>
                  <td>
                    {g.api_type}
                    {g.streamed ? ' · stream' : ''}
                  </td>
                  <td className="num">
                    {num(g.tokens_prompt)} / {num(g.tokens_completion)}
                  </td>
                  <td className="num">{usd(g.total_cost)}</td>
                  <td className="num">{ms(g.latency)}</td>
                  <td title={g.api_key_hash}>{names.key(g.api_key_hash)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {q.hasNextPage ? (
            <button type="button" className="ghost" onClick={() => q.fetchNextPage()} disabled={q.isFetchingNextPage}>
              {q.isFetchingNextPage ? 'Loading…' : 'Load older requests'}
            </button>
          ) : null}
        </div>
      )}
    </>
  );
}

function Detail({ id }: { id: string }) {
  const g = useGet<{ data: Generation & Record<string, any> }>(`/generation${qs({ id })}`);
  return (
    <>
      <p>
        <button type="button" className="ghost" onClick={() => navigate('/requests')}>
          ← Back to the log
        </button>
      </p>
      <Query q={g}>
        {({ data: r }) => (
          <div className="detail" data-testid="request-detail">
            <Card title="Summary">
              <dl className="facts">
                <dt>Generation</dt>
                <dd>
                  <code>{r.id}</code>
                </dd>
                <dt>Status</dt>
                <dd>
                  <StatusBadge status={r.status} /> {r.finish_reason ?? ''} {r.cancelled ? '(cancelled by the client)' : ''}
                </dd>
                <dt>Model</dt>
                <dd>
                  {r.model ?? 'none'}
                  {r.requested_model && r.requested_model !== r.model ? ` (asked for ${r.requested_model})` : ''}
                </dd>
                <dt>Provider</dt>
                <dd>{r.provider_name ?? 'none (refused before any attempt)'}</dd>
                <dt>API</dt>
                <dd>
                  {r.api_type}
                  {r.streamed ? ', streamed' : ''}
                </dd>
                <dt>Key</dt>
                <dd>
                  <KeyName hash={r.api_key_hash} /> <code>{r.api_key_hash}</code>
                </dd>
                <dt>Request id</dt>
                <dd>
                  <code>{r.request_id}</code>
                </dd>
                {r.error ? (
                  <>
                    <dt>Error</dt>
                    <dd className="bad-text">{typeof r.error === 'string' ? r.error : JSON.stringify(r.error)}</dd>
                  </>
                ) : null}
              </dl>
            </Card>
            <Card title="Attempts and fallbacks">
              {Array.isArray(r.provider_responses) && r.provider_responses.length ? (
                <ol className="attempts">
                  {r.provider_responses.map((a: { provider: string; model?: string; status: number }, i: number) => (
                    <li key={i}>
                      <StatusBadge status={a.status} /> {a.provider} {a.model ? `· ${a.model}` : ''} {i < r.provider_responses.length - 1 ? '→ fell back' : ''}
                    </li>
                  ))}
                </ol>
              ) : (
                <p className="muted">No upstream attempt: the gateway answered before calling a provider.</p>
              )}
            </Card>
            <Card title="Cost">
              <dl className="facts">
                <dt>Total cost</dt>
                <dd>{usd(r.total_cost, 6)}</dd>
                <dt>Upstream inference cost</dt>
                <dd>{usd(r.upstream_inference_cost, 6)}</dd>
                <dt>Cache discount</dt>
                <dd>{usd(r.cache_discount, 6)}</dd>
                <dt>BYOK</dt>
                <dd>{r.is_byok ? 'yes' : 'no'}</dd>
                <dt>Tokens</dt>
                <dd>
                  {num(r.tokens_prompt)} in · {num(r.tokens_completion)} out · {num(r.native_tokens_reasoning ?? 0)} reasoning · {num(r.native_tokens_cached ?? 0)} cached
                </dd>
              </dl>
            </Card>
            <Card title="Timing">
              <dl className="facts">
                <dt>Received</dt>
                <dd>{when(r.created_at)}</dd>
                <dt>Latency</dt>
                <dd>{ms(r.latency)}</dd>
                <dt>Time to first token</dt>
                <dd>{ms(r.time_to_first_token)}</dd>
                <dt>Generation time</dt>
                <dd>{ms(r.generation_time)}</dd>
              </dl>
            </Card>
            <Content id={r.id} />
            <Feedback id={r.id} />
          </div>
        )}
      </Query>
    </>
  );
}

function KeyName({ hash }: { hash: string }) {
  return <>{useNames().key(hash)}</>;
}

function Content({ id }: { id: string }) {
  const q = useQuery<{ data: { input: unknown; output: unknown; error?: unknown } }, ApiError>({ queryKey: ['content', id], queryFn: () => get(`/generation/content${qs({ id })}`) });
  return (
    <Card title="Input and output" className="wide">
      {q.isPending ? (
        <Loading />
      ) : q.error?.missingRoute ? (
        <Unavailable feature="Logged request content" api="GET /api/v1/generation/content" />
      ) : q.error?.status === 404 ? (
        <p className="muted">Not kept: I/O logging was off for this request's workspace or key (turn it on in the workspace's settings on the Workspaces page).</p>
      ) : q.error ? (
        <ErrorNote error={q.error} />
      ) : (
        <div className="split">
          <div>
            <h3>Input</h3>
            <Json value={q.data!.data.input} label="Logged input" />
          </div>
          <div>
            <h3>Output</h3>
            <Json value={q.data!.data.output} label="Logged output" />
          </div>
        </div>
      )}
    </Card>
  );
}

const CATEGORIES = ['latency', 'incoherence', 'incorrect_response', 'formatting', 'billing', 'api_error', 'other'];

function Feedback({ id }: { id: string }) {
  const [category, setCategory] = useState('other');
  const [comment, setComment] = useState('');
  const [sent, setSent] = useState(false);
  const send = useAction(async () => {
    await post('/generation/feedback', { generation_id: id, category, ...(comment ? { comment } : {}) });
    setSent(true);
  });
  return (
    <Card title="Feedback">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void send.run();
        }}
      >
        <Field label="Category">
          {(fid) => (
            <select id={fid} value={category} onChange={(e) => setCategory(e.target.value)}>
              {CATEGORIES.map((c) => (
                <option key={c} value={c}>
                  {c.replace(/_/g, ' ')}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Comment">{(fid) => <textarea id={fid} rows={2} value={comment} onChange={(e) => setComment(e.target.value)} />}</Field>
        <ErrorNote error={send.error} />
        {sent ? (
          <p className="ok-text" role="status">
            Feedback recorded.
          </p>
        ) : null}
        <button type="submit" disabled={send.busy}>
          Send feedback
        </button>
      </form>
    </Card>
  );
}
