/**
 * Broadcast destinations (docs/observability.md): CRUD in the hosted API's shape (management keys), credentials
 * encrypted at rest and never returned, SSRF guard, and delivery — OTLP (otel-collector, langfuse) and signed webhooks
 * with retries — gated by the workspace's switch, never slowing requests, errors visible.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createInferenceKey } from '../helpers.js';
import { expectError, expectStatus } from '../api/util.js';
import { findInDatabase, startObserveEnv, type ObserveEnv } from './util.js';

process.env.GATEWAY_ENCRYPTION_KEY ??= 'test-encryption-key-0123456789abcdef-observe';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  raw: string;
}

/** An HTTP receiver whose first `failFirst` requests get a 500. */
async function receiver(failFirst = 0): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (n++ < failFirst) return void res.writeHead(500).end('nope');
      got.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(raw), raw });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, got, close: () => new Promise((r) => server.close(() => r())) };
}

const SECRET_KEY = 'sk-lf-SECRETMARKER-8c1d';
const HEADER_TOKEN = 'Bearer HEADERMARKER-77aa';
const SIGNING = 'whsec-SIGNINGMARKER-0042';

describe.each(BACKENDS)('observability destinations (%s)', (backend) => {
  let env: ObserveEnv;
  let wsId: string;
  let otlp: Awaited<ReturnType<typeof receiver>>;
  let hook: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    otlp = await receiver();
    hook = await receiver(2); // the first two webhook deliveries fail: retried
    env = await startObserveEnv(backend, { env: { GATEWAY_BROADCAST_ALLOW_LOOPBACK: 'true', GATEWAY_BROADCAST_RETRY_MS: '20', GATEWAY_BROADCAST_MAX_ATTEMPTS: '4', GATEWAY_BROADCAST_TIMEOUT_MS: '2000' } });
    wsId = (await env.t.gw.svc.store.getDefaultWorkspace())!.id;
  });
  afterAll(async () => {
    await env?.close();
    await otlp?.close();
    await hook?.close();
  });

  const create = (body: Record<string, unknown>) => env.t.call('POST', '/observability/destinations', { body });

  it('creates, lists, reads, updates and deletes; credentials are masked in every reply and encrypted at rest', async () => {
    const lf = await create({ type: 'langfuse', name: 'LF', config: { baseUrl: otlp.url, publicKey: 'pk-lf-1', secretKey: SECRET_KEY, headers: { 'x-extra': HEADER_TOKEN } } });
    expectStatus(lf, 201);
    expect(lf.body.data).toMatchObject({ type: 'langfuse', name: 'LF', workspace_id: wsId, enabled: true, privacy_mode: false, sampling_rate: 1, api_key_hashes: null });
    expect(lf.body.data.config).toEqual({ baseUrl: otlp.url, publicKey: 'pk-lf-1', secretKey: '********', headers: { 'x-extra': '********' } });
    expect(lf.body.data.delivery).toEqual({ sent: 0, failed: 0, dropped: 0, last_error: null, last_error_at: null, last_success_at: null });
    const id = lf.body.data.id;
    const list = await env.t.call('GET', '/observability/destinations');
    expectStatus(list, 200);
    expect(list.body.total_count).toBe(1);
    expect(JSON.stringify(list.body)).not.toContain('MARKER');
    // A PATCH sending the mask back keeps the secret; a new name is taken.
    const patched = await env.t.call('PATCH', `/observability/destinations/${id}`, { body: { name: 'LF2', config: { secretKey: '********', headers: { 'x-extra': '********' } } } });
    expectStatus(patched, 200);
    expect(patched.body.data.name).toBe('LF2');
    const row = (await env.t.gw.svc.store.getDestination(id))!;
    const { fullConfig } = await import('../../src/services/observability/destinations.js');
    expect(fullConfig(row)).toMatchObject({ secretKey: SECRET_KEY, headers: { 'x-extra': HEADER_TOKEN } });
    // Encrypted at rest: neither secret appears anywhere in the database.
    expect(await findInDatabase(env.t, 'SECRETMARKER')).toEqual([]);
    expect(await findInDatabase(env.t, 'HEADERMARKER')).toEqual([]);
    expectStatus(await env.t.call('GET', `/observability/destinations/${id}`), 200);
    expect((await env.t.call('DELETE', `/observability/destinations/${id}`)).body).toEqual({ deleted: true });
    expectError(await env.t.call('GET', `/observability/destinations/${id}`), 404);
    expect((await env.t.call('GET', '/observability/destinations')).body.total_count).toBe(0);
  });

  it('validates: type, per-type config naming the field, URLs through the SSRF guard, management keys only', async () => {
    expectError(await create({ type: 'carrier-pigeon', name: 'x', config: {} }), 400, { field: 'type' });
    expectError(await create({ type: 'langfuse', name: 'x', config: { publicKey: 'p' } }), 400, { field: 'config.secretKey' });
    expectError(await create({ type: 'webhook', name: 'x', config: { url: 'https://10.0.0.8/hook', secret: SIGNING } }), 400, { field: 'config.url' });
    expectError(await create({ type: 'otel-collector', name: 'x', config: { endpoint: 'http://example.com' } }), 400, { field: 'config.endpoint' });
    expectError(await create({ type: 'webhook', name: 'x', config: { url: 'https://example.com/h' } }), 400, { field: 'config.secret' });
    expectError(await create({ type: 'webhook', name: 'x', config: { url: 'https://example.com/h', secret: SIGNING, colour: 'red' } }), 400, { field: 'config.colour' });
    expectError(await create({ type: 'datadog', name: 'x', config: { apiKey: 'k', mlApp: 'a' }, sampling_rate: 0 }), 400, { field: 'sampling_rate' });
    const inference = await createInferenceKey(env.t, { name: 'no-admin' });
    expectError(await env.t.call('GET', '/observability/destinations', { key: inference.key }), 403);
    expectError(await env.t.call('PATCH', '/observability/destinations/nope', { body: { name: 'x' } }), 404);
  });

  it('delivers each generation: OTLP spans (otel-collector, langfuse with Basic auth) and a signed webhook retried after failures; only with the workspace switch on', async () => {
    const oc = await create({ type: 'otel-collector', name: 'collector', config: { endpoint: `${otlp.url}/collector`, headers: { authorization: HEADER_TOKEN } } });
    const lf = await create({ type: 'langfuse', name: 'lf', config: { baseUrl: otlp.url, publicKey: 'pk-lf-1', secretKey: SECRET_KEY } });
    const wh = await create({ type: 'webhook', name: 'hook', config: { url: `${hook.url}/gen`, secret: SIGNING } });
    for (const r of [oc, lf, wh]) expectStatus(r, 201);

    // Switch off: nothing is sent.
    const off = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'off' }] } });
    expectStatus(off, 200);
    await env.t.gw.svc.recorder.flush();
    await env.t.gw.svc.broadcast.idle();
    expect(otlp.got).toHaveLength(0);

    await env.t.call('PATCH', `/workspaces/${wsId}`, { body: { is_observability_broadcast_enabled: true } });
    const on = await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'on' }] } });
    expectStatus(on, 200);
    await env.t.gw.svc.recorder.flush();
    await env.t.gw.svc.broadcast.idle();

    const collector = otlp.got.filter((g) => g.path === '/collector/v1/traces');
    expect(collector).toHaveLength(1);
    expect(collector[0]!.headers.authorization).toBe(HEADER_TOKEN);
    const span = collector[0]!.body.resourceSpans[0].scopeSpans[0].spans[0];
    const attrs = Object.fromEntries(span.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]));
    expect(attrs).toMatchObject({ 'gen_ai.response.id': on.body.id, 'gen_ai.request.model': 'test/alpha', 'gen_ai.provider.name': 'sim-a', 'gen_ai.operation.name': 'chat' });
    expect(attrs['gen_ai.input.messages']).toBeUndefined(); // I/O logging off: no content

    const langfuse = otlp.got.filter((g) => g.path === '/api/public/otel/v1/traces');
    expect(langfuse).toHaveLength(1);
    expect(langfuse[0]!.headers.authorization).toBe(`Basic ${Buffer.from(`pk-lf-1:${SECRET_KEY}`).toString('base64')}`);

    // The webhook failed twice, then was delivered once, signed.
    expect(hook.got).toHaveLength(1);
    const w = hook.got[0]!;
    expect(w.body).toMatchObject({ type: 'generation.completed', data: { id: on.body.id, model: 'test/alpha', status: 200 } });
    const [t, v1] = String(w.headers['x-gateway-signature']).split(',').map((p) => p.split('=')[1]);
    expect(v1).toBe(createHmac('sha256', SIGNING).update(`${t},${w.raw}`).digest('hex'));

    const views = (await env.t.call('GET', '/observability/destinations')).body.data;
    for (const d of views) expect(d.delivery).toMatchObject({ sent: 1, failed: 0, last_error: null });
    await env.t.call('PATCH', `/workspaces/${wsId}`, { body: { is_observability_broadcast_enabled: false } });
    for (const d of views) await env.t.call('DELETE', `/observability/destinations/${d.id}`);
  });

  it('a failing destination never slows requests; its errors are counted and shown', async () => {
    await env.t.call('PATCH', `/workspaces/${wsId}`, { body: { is_observability_broadcast_enabled: true } });
    // A closed port: every delivery is refused.
    const dead = await receiver();
    await dead.close();
    const d = await create({ type: 'otel-collector', name: 'dead', config: { endpoint: dead.url } });
    expectStatus(d, 201);
    const started = performance.now();
    for (let i = 0; i < 10; i++) expectStatus(await env.t.call('POST', '/chat/completions', { key: env.key, body: { model: 'test/alpha', messages: [{ role: 'user', content: `r${i}` }] } }), 200);
    const elapsed = performance.now() - started;
    await env.t.gw.svc.recorder.flush();
    await env.t.gw.svc.broadcast.idle();
    const view = (await env.t.call('GET', `/observability/destinations/${d.body.data.id}`)).body.data;
    expect(view.delivery.failed).toBeGreaterThanOrEqual(1);
    expect(view.delivery.sent).toBe(0);
    expect(view.delivery.last_error).toMatch(/fetch failed|ECONNREFUSED|refused/i);
    expect(elapsed).toBeLessThan(5_000);
    await env.t.call('PATCH', `/workspaces/${wsId}`, { body: { is_observability_broadcast_enabled: false } });
  });
});
