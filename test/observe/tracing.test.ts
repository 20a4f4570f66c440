/**
 * OpenTelemetry traces (docs/observability.md): an OTLP/HTTP receiver in the test decodes the gateway's JSON exports
 * and checks the span tree and its GenAI attributes for chat, a streamed chat that falls back, messages and embeddings;
 * the incoming traceparent is the parent, and each attempt's own context reaches the simulator.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectStatus } from '../api/util.js';
import { startObserveEnv, type ObserveEnv } from './util.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number; message?: string };
}

/** An OTLP/HTTP traces receiver (JSON encoding): every span it was sent, and the resources' service names. */
async function receiver(): Promise<{ url: string; spans: OtlpSpan[]; services: Set<string>; headers: Array<Record<string, unknown>>; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const services = new Set<string>();
  const headers: Array<Record<string, unknown>> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      headers.push(req.headers);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        for (const a of rs.resource?.attributes ?? []) if (a.key === 'service.name') services.add(a.value.stringValue);
        for (const ss of rs.scopeSpans ?? []) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, spans, services, headers, close: () => new Promise((r) => server.close(() => r())) };
}

const attr = (s: OtlpSpan, key: string): unknown => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return ((v.arrayValue as { values?: Array<{ stringValue: string }> }).values ?? []).map((x) => x.stringValue);
  return v;
};
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

describe('OpenTelemetry traces (OTLP/HTTP)', () => {
  let env: ObserveEnv;
  let otlp: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    otlp = await receiver();
    env = await startObserveEnv('sqlite', { env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=gw%20test', OTEL_SERVICE_NAME: 'gw-under-test' } });
  });
  afterAll(async () => {
    await env?.close();
    await otlp?.close();
  });
  beforeEach(() => {
    env.advance(31_000);
    env.sim.resetKnobs();
    env.sim.resetStats();
  });

  /** The spans of the trace whose request span has this generation id, after an export. */
  async function traceOf(generationId: string): Promise<{ root: OtlpSpan; children: OtlpSpan[] }> {
    await env.t.gw.svc.tracing!.flush();
    const root = otlp.spans.find((s) => attr(s, 'gen_ai.response.id') === generationId);
    expect(root, `a request span for ${generationId}`).toBeDefined();
    const children = otlp.spans.filter((s) => s.parentSpanId === root!.spanId).sort((a, b) => Number(attr(a, 'gateway.attempt')) - Number(attr(b, 'gateway.attempt')));
    return { root: root!, children };
  }

  it('chat: a SERVER span with the GenAI attributes, child of the incoming traceparent; one CLIENT attempt span; its context sent upstream', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const res = await env.t.call('POST', '/chat/completions', { key: env.key, headers: { traceparent: `00-${traceId}-${parentId}-01` }, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'hi' }] } });
    expectStatus(res, 200);
    const { root, children } = await traceOf(res.body.id);
    expect(root.traceId).toBe(traceId);
    expect(root.parentSpanId).toBe(parentId);
    expect(root.kind).toBe(SERVER);
    expect(attr(root, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(root, 'gen_ai.request.model')).toBe('test/alpha');
    expect(attr(root, 'gen_ai.response.model')).toBe('test/alpha');
    expect(attr(root, 'gen_ai.provider.name')).toBe('sim-a');
    expect(attr(root, 'gen_ai.usage.input_tokens')).toBe(res.body.usage.prompt_tokens);
    expect(attr(root, 'gen_ai.usage.output_tokens')).toBe(res.body.usage.completion_tokens);
    expect(attr(root, 'gen_ai.response.finish_reasons')).toEqual(['stop']);
    // No content: I/O logging is off.
    expect(attr(root, 'gen_ai.input.messages')).toBeUndefined();
    expect(children).toHaveLength(1);
    const [a] = children;
    expect(a!.kind).toBe(CLIENT);
    expect(a!.traceId).toBe(traceId);
    expect(attr(a!, 'gen_ai.provider.name')).toBe('sim-a');
    expect(attr(a!, 'http.response.status_code')).toBe(200);
    expect(typeof attr(a!, 'gateway.endpoint')).toBe('string');
    expect(Number(attr(a!, 'gateway.ttft_ms'))).toBeGreaterThanOrEqual(0);
    // The simulator got the attempt span's context.
    const upstream = env.sim.requests.filter((r) => r.provider === 'sim-a').at(-1)!;
    expect(upstream.headers.traceparent).toBe(`00-${traceId}-${a!.spanId}-01`);
    expect(otlp.services.has('gw-under-test')).toBe(true);
    expect(otlp.headers.some((h) => h['x-tenant'] === 'gw test')).toBe(true);
  });

  it('streamed chat with a fallback: a failed attempt span (ERROR, 503) then a served one, both under the request span', async () => {
    env.sim.setKnobs('sim-a', { errorStatus: 503 });
    const res = await fetch(`${env.t.api}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/alpha', stream: true, messages: [{ role: 'user', content: 'stream please' }], provider: { order: ['sim-a', 'sim-b'] } }),
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    const id = /"id":"(gen-[^"]+)"/.exec(text)![1]!;
    const { root, children } = await traceOf(id);
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.parentSpanId ?? '').toBe('');
    expect(attr(root, 'gen_ai.request.stream')).toBe(true);
    expect(attr(root, 'gen_ai.provider.name')).toBe('sim-b');
    expect(children.map((c) => [attr(c, 'gen_ai.provider.name'), attr(c, 'http.response.status_code'), c.status?.code ?? 0])).toEqual([
      ['sim-a', 503, ERROR],
      ['sim-b', 200, 1],
    ]);
    expect(Number(attr(children[1]!, 'gateway.ttft_ms'))).toBeGreaterThanOrEqual(0);
  });

  it('messages and embeddings: operation names, models and usage; content attributes only when I/O logging keeps the request', async () => {
    const ws = (await env.t.gw.svc.store.getDefaultWorkspace())!;
    await env.t.call('PATCH', `/workspaces/${ws.id}`, { body: { is_observability_io_logging_enabled: true } });
    const m = await env.t.call('POST', '/messages', { key: env.key, body: { model: 'test/claude', max_tokens: 30, messages: [{ role: 'user', content: 'traced content' }] } });
    expectStatus(m, 200);
    await env.t.gw.svc.recorder.flush();
    const gid = (await env.t.call('GET', '/generations?limit=1')).body.data[0].id;
    const { root, children } = await traceOf(gid);
    expect(attr(root, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(root, 'http.route')).toBe('/messages');
    expect(attr(root, 'gen_ai.provider.name')).toBe('sim-anthropic');
    expect(JSON.parse(attr(root, 'gen_ai.input.messages') as string)).toEqual({ messages: [{ role: 'user', content: 'traced content' }] });
    expect(typeof JSON.parse(attr(root, 'gen_ai.output.messages') as string).completion).toBe('string');
    expect(children).toHaveLength(1);
    await env.t.call('PATCH', `/workspaces/${ws.id}`, { body: { is_observability_io_logging_enabled: false } });

    const e = await env.t.call('POST', '/embeddings', { key: env.key, body: { model: 'test/embed', input: 'vector me' } });
    expectStatus(e, 200);
    const emb = await traceOf(e.body.id);
    expect(attr(emb.root, 'gen_ai.operation.name')).toBe('embeddings');
    expect(attr(emb.root, 'gen_ai.request.model')).toBe('test/embed');
    expect(attr(emb.root, 'gen_ai.usage.input_tokens')).toBe(e.body.usage.prompt_tokens);
    expect(attr(emb.root, 'gen_ai.input.messages')).toBeUndefined();
    expect(emb.children.map((c) => attr(c, 'gen_ai.provider.name'))).toEqual(['sim-emb']);
    const upstream = env.sim.requests.filter((r) => r.provider === 'sim-emb').at(-1)!;
    expect(upstream.headers.traceparent).toBe(`00-${emb.root.traceId}-${emb.children[0]!.spanId}-01`);
  });

  it('a refused request still ends its span (an error status, no attempt)', async () => {
    const res = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'nobody/nothing', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(404);
    await env.t.gw.svc.tracing!.flush();
    const span = otlp.spans.filter((s) => attr(s, 'http.route') === '/chat/completions').at(-1)!;
    expect(span.status?.code).toBe(ERROR);
  });
});

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('has no tracer and sends no traceparent upstream', async () => {
    const env = await startObserveEnv('sqlite');
    try {
      expect(env.t.gw.svc.tracing).toBeNull();
      const res = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'hi' }] } });
      expectStatus(res, 200);
      expect(env.sim.requests.at(-1)!.headers.traceparent).toBeUndefined();
    } finally {
      await env.close();
    }
  });
});
