/**
 * Playground: a streamed chat completion with an inference key (management keys cannot call models), with the
 * routing metadata the gateway adds when asked (`X-Gateway-Metadata: enabled`) shown beside the answer. The
 * inference key is held in this tab's session storage, like the management key.
 */
import { useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { API, ApiError, playgroundKey, post, request, storePlaygroundKey } from '../api';
import { Card, ErrorNote, Field, Json, Link, Page, useAction, useGet, usd } from '../ui';

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  cost?: number;
}

/** Reads an SSE body, calling `onEvent` with each `data:` payload parsed as JSON (`[DONE]` ends it). */
async function readSse(body: ReadableStream<Uint8Array>, onEvent: (data: any) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.search(/\r?\n\r?\n/)) !== -1) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, '');
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (!data) continue;
      if (data === '[DONE]') return;
      onEvent(JSON.parse(data));
    }
  }
}

export function Playground() {
  const [key, setKey] = useState(playgroundKey() ?? '');
  const catalog = useGet<{ data: { id: string }[] }>('/models');
  // The models this inference key can reach (its guardrails and the organization's rules applied), else the catalog.
  const reachable = useQuery<{ data: { id: string }[] }, ApiError>({ queryKey: ['models/user', key], queryFn: () => request('GET', '/models/user', undefined, key), enabled: key.startsWith('sk-'), retry: false });
  const models = reachable.data ? reachable : catalog;
  const [model, setModel] = useState('');
  const [system, setSystem] = useState('');
  const [prompt, setPrompt] = useState('');
  const [answer, setAnswer] = useState('');
  const [meta, setMeta] = useState<unknown>(null);
  const [usage, setUsage] = useState<Usage | null>(null);
  const [generation, setGeneration] = useState<string | null>(null);
  const [streaming, setStreaming] = useState(false);
  const stop = useRef<AbortController | null>(null);

  const createKey = useAction(async () => {
    const res = await post<{ key: string }>('/keys', { name: 'Console playground' });
    storePlaygroundKey(res.key);
    setKey(res.key);
  });

  const send = useAction(async () => {
    setAnswer('');
    setMeta(null);
    setUsage(null);
    setGeneration(null);
    storePlaygroundKey(key || null);
    const chosen = model || models.data?.data[0]?.id;
    if (!chosen) throw new ApiError(400, 'No model to call: the catalog is empty');
    const messages = [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: prompt }];
    stop.current = new AbortController();
    setStreaming(true);
    try {
      const res = await fetch(`${API}/chat/completions`, {
        method: 'POST',
        signal: stop.current.signal,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-gateway-metadata': 'enabled' },
        body: JSON.stringify({ model: chosen, messages, stream: true, stream_options: { include_usage: true } }),
      });
      if (!res.ok || !res.body) {
        const body = await res.json().catch(() => null);
        throw new ApiError(res.status, body?.error?.message ?? `HTTP ${res.status}`, body);
      }
      await readSse(res.body, (chunk) => {
        if (chunk.error) throw new ApiError(chunk.error.code ?? 502, chunk.error.message ?? 'The stream ended with an error', chunk);
        if (chunk.id) setGeneration(chunk.id);
        const delta = chunk.choices?.[0]?.delta?.content;
        if (typeof delta === 'string') setAnswer((a) => a + delta);
        if (chunk.gateway_metadata) setMeta(chunk.gateway_metadata);
        if (chunk.usage) setUsage(chunk.usage);
      });
    } finally {
      setStreaming(false);
      stop.current = null;
    }
  });

  return (
    <Page title="Playground" intro="Send a chat to any model your inference key can reach; the answer streams in, with the gateway's routing metadata.">
      <div className="two-col wide-right">
        <Card title="Request">
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void send.run();
            }}
          >
            <Field label="Inference key" hint="Management keys cannot call models. Kept in this tab only.">
              {(id) => <input id={id} type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} placeholder="sk-gw-v1-…" required />}
            </Field>
            <p>
              <button type="button" className="ghost" onClick={() => void createKey.run()} disabled={createKey.busy}>
                Create a playground key
              </button>
            </p>
            <ErrorNote error={createKey.error} />
            <Field label="Model">
              {(id) => (
                <select id={id} value={model} onChange={(e) => setModel(e.target.value)}>
                  {(models.data?.data ?? []).map((m) => (
                    <option key={m.id} value={m.id}>
                      {m.id}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="System prompt">{(id) => <textarea id={id} rows={2} value={system} onChange={(e) => setSystem(e.target.value)} />}</Field>
            <Field label="Message">{(id) => <textarea id={id} rows={4} value={prompt} onChange={(e) => setPrompt(e.target.value)} required />}</Field>
            <ErrorNote error={send.error} />
            <div className="field-actions">
              <button type="submit" disabled={streaming || !key || !prompt}>
                {streaming ? 'Streaming…' : 'Send'}
              </button>
              {streaming ? (
                <button type="button" className="ghost" onClick={() => stop.current?.abort()}>
                  Stop
                </button>
              ) : null}
            </div>
          </form>
        </Card>
        <div className="stack">
          <Card title="Answer">
            <div className="answer" aria-live="polite" data-testid="answer">
              {answer || <span className="muted">{streaming ? 'Waiting for the first token…' : 'The answer appears here as it streams.'}</span>}
            </div>
            {usage ? (
              <p className="muted small" data-testid="usage">
                {usage.prompt_tokens} tokens in · {usage.completion_tokens} out{usage.cost !== undefined ? ` · ${usd(usage.cost, 6)}` : ''}
                {generation ? (
                  <>
                    {' · '}
                    <Link to={`/requests/${encodeURIComponent(generation)}`}>see it in Requests</Link>
                  </>
                ) : null}
              </p>
            ) : null}
          </Card>
          <Card title="gateway_metadata">{meta ? <Json value={meta} label="gateway_metadata" /> : <p className="muted">Routing metadata (endpoints considered, attempts) appears after the answer.</p>}</Card>
        </div>
      </div>
    </Page>
  );
}
