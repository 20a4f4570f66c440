/**
 * Video test harness: the provider simulator plus a gateway whose catalog routes test video models to simulated
 * providers speaking OpenAI's Videos API (`sim-ov`, `sim-ov2`) and Google Veo (`sim-veo`). Workers poll fast.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { stringify } from 'yaml';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import type { CreateGatewayOptions } from '../../src/gateway.js';
import { createInferenceKey, freshDatabase, startGateway, type Backend, type TestGateway } from '../helpers.js';

export const WEBHOOK_SECRET = 'whsec-test-0123456789abcdef';

const DP = { training: false, retains_prompts: true, zdr: false };

export function videoCatalog(simUrl: string) {
  const provider = (slug: string, protocol: string, version: string) => ({ slug, name: `Sim ${slug}`, protocol, base_url: `${simUrl}/${slug}/${version}`, no_auth: true, data_policy: DP });
  const openaiVideo = {
    resolutions: ['720p', '1080p'],
    aspect_ratios: ['16:9', '9:16'],
    sizes: ['1280x720', '720x1280', '1920x1080', '1080x1920'],
    durations: [4, 8, 12],
    frame_images: ['first_frame'],
    generate_audio: true,
    seed: false,
    allowed_passthrough_parameters: ['quality'],
    default_duration: 4,
  };
  return {
    providers: [provider('sim-ov', 'openai', 'v1'), provider('sim-ov2', 'openai', 'v1'), provider('sim-veo', 'google', 'v1beta'), provider('sim-chat', 'openai', 'v1')],
    models: [
      { id: 'test/sora', name: 'Test Sora (OpenAI Videos API)', input_modalities: ['text', 'image'], output_modalities: ['video'] },
      { id: 'test/veo', name: 'Test Veo (Google Veo)', input_modalities: ['text', 'image'], output_modalities: ['video'] },
      { id: 'test/sora-fallback', name: 'Test Sora with a fallback endpoint', input_modalities: ['text'], output_modalities: ['video'] },
      { id: 'test/chat', name: 'A chat model', context_length: 32000 },
    ],
    endpoints: [
      { model: 'test/sora', provider: 'sim-ov', upstream_model: 'sora-sim', pricing: { video_second: '0.10' }, video: openaiVideo },
      {
        model: 'test/veo',
        provider: 'sim-veo',
        upstream_model: 'veo-sim',
        pricing: { video_second: '0.15' },
        video: {
          resolutions: ['720p', '1080p', '4K'],
          aspect_ratios: ['16:9', '9:16'],
          sizes: null,
          durations: [4, 6, 8],
          frame_images: ['first_frame', 'last_frame'],
          generate_audio: true,
          seed: true,
          allowed_passthrough_parameters: ['negativePrompt', 'sampleCount'],
          default_duration: 8,
          default_resolution: '720p',
          second_price_by_resolution: { '4K': '0.35' },
        },
      },
      // Two endpoints: with `sort: price` the cheaper one (sim-ov) is tried first, sim-ov2 is the fallback.
      { model: 'test/sora-fallback', provider: 'sim-ov', upstream_model: 'sora-a', pricing: { video_second: '0.10' }, video: openaiVideo },
      { model: 'test/sora-fallback', provider: 'sim-ov2', upstream_model: 'sora-b', pricing: { video_second: '0.20' }, video: openaiVideo },
      { model: 'test/chat', provider: 'sim-chat', upstream_model: 'chat-sim', pricing: { prompt: '0.000001', completion: '0.000002' } },
    ],
  };
}

export interface VideoEnv {
  sim: Simulator;
  t: TestGateway;
  key: string;
  keyHash: string;
  /** Starts another gateway on the same database and catalog (a restart, or a second instance). */
  another(env?: Record<string, string>): Promise<TestGateway>;
  call: TestGateway['call'];
  close(): Promise<void>;
}

export const FAST_ENV: Record<string, string> = {
  GATEWAY_VIDEO_POLL_MS: '25',
  GATEWAY_VIDEO_LEASE_MS: '3000',
  GATEWAY_VIDEO_ALLOW_LOOPBACK_CALLBACKS: 'true',
  GATEWAY_WEBHOOK_SECRET: WEBHOOK_SECRET,
  GATEWAY_WEBHOOK_RETRY_MS: '50',
};

/** `gateway`: options of the (first) gateway, e.g. a `now` the test moves forward to pass a job's deadline at once. */
export async function startVideoEnv(
  backend: Backend,
  opts: { env?: Record<string, string>; catalog?: (simUrl: string) => unknown; gateway?: CreateGatewayOptions } = {},
): Promise<VideoEnv> {
  const sim = await createSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'gw-video-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, stringify((opts.catalog ?? videoCatalog)(sim.url)));
  const db = await freshDatabase(backend);
  const baseEnv = { GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false', ...FAST_ENV, ...opts.env };
  const t = await startGateway(backend, { env: baseEnv, databaseUrl: db.url, dropDatabase: db.drop, gateway: opts.gateway });
  const { key, hash } = await createInferenceKey(t, { name: 'video-tests' });
  const others: TestGateway[] = [];
  return {
    sim,
    t,
    key,
    keyHash: hash,
    call: (method, path, o = {}) => t.call(method, path, { key, ...o }),
    async another(env = {}) {
      const g = await startGateway(backend, { env: { ...baseEnv, ...env }, databaseUrl: db.url });
      others.push(g);
      return g;
    },
    close: async () => {
      for (const g of others) await g.stop();
      await t.close();
      await sim.close();
    },
  };
}

/**
 * The video environment of a describe block: started before its tests, closed after them, the simulator's knobs
 * reset before each test. The returned object is filled in once it has started.
 */
export function videoEnvFor(backend: Backend, opts: { env?: Record<string, string> } = {}): VideoEnv {
  const env = {} as VideoEnv;
  beforeAll(async () => {
    Object.assign(env, await startVideoEnv(backend, opts));
  });
  afterAll(async () => {
    await env.close?.();
  });
  beforeEach(() => {
    env.sim.resetKnobs();
  });
  return env;
}

/** Polls GET /videos/{id} (through `t`) until `done(job)` holds; returns every distinct status seen and the last job. */
export async function waitForJob(
  t: TestGateway,
  key: string,
  id: string,
  done: (job: any) => boolean = (j) => ['completed', 'failed', 'cancelled', 'expired'].includes(j.status),
  timeoutMs = 15_000,
): Promise<{ job: any; seen: string[] }> {
  const seen: string[] = [];
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.call('GET', `/videos/${id}`, { key });
    if (res.status !== 200) throw new Error(`GET /videos/${id}: ${res.status} ${JSON.stringify(res.body)}`);
    if (seen[seen.length - 1] !== res.body.status) seen.push(res.body.status);
    if (done(res.body)) return { job: res.body, seen };
    if (Date.now() > end) throw new Error(`job ${id} still ${res.body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

export interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  at: number;
}

/** A webhook receiver on 127.0.0.1: answers `statuses` in turn (then 200), records what it got. */
export async function webhookReceiver(statuses: number[] = []): Promise<{ url: string; received: Received[]; server: Server; close(): Promise<void> }> {
  const received: Received[] = [];
  const queue = [...statuses];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString();
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        /* kept raw */
      }
      received.push({ headers: req.headers, raw, body, at: Date.now() });
      const status = queue.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status === 200 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/video`,
    received,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What a receiver does: recompute the HMAC over "<t>,<raw body>" and compare (also rejecting stale timestamps). */
export function verifySignature(header: string | undefined, raw: string, secret: string, toleranceS = 300): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  const t = Number(m[1]);
  if (Math.abs(Date.now() / 1000 - t) > toleranceS) return false;
  const expected = createHmac('sha256', secret).update(`${t},${raw}`).digest('hex');
  return expected === m[2];
}

/** Upstream job creations the simulator received (POST …/videos or …:predictLongRunning), oldest first. */
export function upstreamCreates(sim: Simulator) {
  return sim.requests.filter((r) => r.method === 'POST' && (r.path === '/v1/videos' || r.path.endsWith(':predictLongRunning')));
}
