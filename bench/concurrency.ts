/**
 * `npm run bench:concurrency`: what concurrency costs the gateway, in one run on this machine.
 *
 * 1. CPU per request at concurrency 64 and 1,024 (small non-streamed bodies), the gateway and the bare pass-through
 *    proxy (../shared/bench) side by side, against ../shared/bench/mock-upstream.mjs: the c1024 ÷ c64 ratio.
 * 2. Many concurrent slow streams to one provider (each 20 chunks 1 s apart, arriving over 10 s so that all are open
 *    together for the last 10 s): over HTTP/2 (`http2: true`, 10,000
 *    streams by default) and over HTTP/1.1 (one connection each; BENCH_H1_STREAMS, default 9,000 — the gateway then
 *    holds two sockets per stream, and this machine allows 20,000 open files per process). The upstream (bench/mock-h2.mjs)
 *    stamps its first chunk with the time it sent it: each stream's start delay is the time from that stamp to the
 *    client seeing it. Reports the delays (p50, p99, max), streams finished, errors and the gateway's peak RSS.
 *
 * Env: BENCH_SECONDS (each load phase, default 5), BENCH_STREAMS (HTTP/2 streams, default 10000), BENCH_H1_STREAMS,
 * BENCH_RAMP_SECONDS (default 10), BENCH_STREAM_CHUNKS (default 20) (0 streams: skip that part),
 * BENCH_GATEWAY_NODE_OPTIONS (NODE_OPTIONS of the gateway process; default `--max-semi-space-size=64`, as `npm start`),
 * BENCH_PORT_OFFSET (added to every port), BENCH_GATEWAY_DIST (another checkout's dist/ as the gateway, for an A/B),
 * BENCH_CPU=0 (skip part 1).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, Pool, request } from 'undici';
import { procStats, waitUp } from './common.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The shared bench kit (read-only): next to the checkout, or at /work/shared/bench for a worktree. */
const kit = [resolve(root, '../shared/bench'), resolve(root, '../../shared/bench')].find((d) => existsSync(join(d, 'bare-proxy.mjs')));
if (!kit) throw new Error('../shared/bench (the bare proxy and mock upstream) not found');
// Copied inside the project (ignored .scratch/), where `undici` resolves for the bare proxy.
const vendor = join(root, '.scratch/bench');
mkdirSync(vendor, { recursive: true });
for (const f of ['bare-proxy.mjs', 'mock-upstream.mjs']) copyFileSync(join(kit, f), join(vendor, f));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const H2_STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
const H1_STREAMS = Number(process.env.BENCH_H1_STREAMS ?? 9_000);
/** Streams arrive over this many seconds (default 10); each lasts STREAM_CHUNKS + 1 seconds (default 21). */
const RAMP_S = Number(process.env.BENCH_RAMP_SECONDS ?? 10);
const STREAM_CHUNKS = Number(process.env.BENCH_STREAM_CHUNKS ?? 20);
const ADMIN = 'sk-gw-v1-' + 'c'.repeat(64);
const PORT_OFFSET = Number(process.env.BENCH_PORT_OFFSET ?? 0);
const PORTS = { mock: 19410 + PORT_OFFSET, bare: 19420 + PORT_OFFSET, gateway: 19430 + PORT_OFFSET, h2: 19443 + PORT_OFFSET, h1: 19444 + PORT_OFFSET };
/** BENCH_GATEWAY_DIST: another checkout's built dist/ to run as the gateway (an A/B against it); default this one's. */
const GATEWAY_DIST = resolve(process.env.BENCH_GATEWAY_DIST ?? join(root, 'dist'));
/** BENCH_CPU=0: skip the c64/c1024 part. */
const CPU_PART = process.env.BENCH_CPU !== '0';

const kids: ChildProcess[] = [];
function start(name: string, args: string[], env: Record<string, string>): ChildProcess {
  const k = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'], cwd: root });
  k.stderr?.on('data', (d: Buffer) => process.env.BENCH_DEBUG && process.stderr.write(`[${name}] ${d}`));
  kids.push(k);
  return k;
}
process.on('exit', () => kids.forEach((k) => k.kill('SIGKILL')));
process.on('SIGINT', () => process.exit(130));

const quantile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

/**
 * CPU µs per request of `pid` under `connections` concurrent requests, each in a loop over its own kept-alive
 * connection. The connections are opened and warmed first and CPU is counted only after: at c1024 a fresh load
 * generator's connection set-up would otherwise be spread over a few requests each and counted as their cost.
 */
async function cpuPerRequest(url: string, headers: Record<string, string>, model: string, connections: number, pid: number) {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] });
  let stopAt = 0;
  let n = 0;
  let errors = 0;
  const loop = async () => {
    while (Date.now() < stopAt) {
      const r = await pool.request({ path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).catch(() => null);
      if (!r) {
        errors++;
        continue;
      }
      await r.body.dump();
      if (r.statusCode === 200) n++;
      else errors++;
    }
  };
  stopAt = Date.now() + 2_000; // warm-up: every connection opened and used
  await Promise.all(Array.from({ length: connections }, loop));
  n = errors = 0;
  const before = procStats(pid).cpu;
  const t0 = Date.now();
  stopAt = t0 + SECONDS * 1000;
  await Promise.all(Array.from({ length: connections }, loop));
  const cpu = procStats(pid).cpu - before;
  const secs = (Date.now() - t0) / 1000;
  await pool.close();
  return { rps: Math.round(n / secs), us: n ? (cpu * 1e6) / n : NaN, errors };
}

/** `n` concurrent streams at once: start delays after the upstream's first byte, finished streams, errors. */
async function slowStreams(url: string, key: string, model: string, n: number, gatewayPid: number) {
  const client = new Agent({ connections: null, keepAliveTimeout: 1_000, headersTimeout: 120_000, bodyTimeout: 120_000, connect: { timeout: 60_000 } });
  let open = 0;
  let peakOpen = 0;
  const delays: number[] = [];
  const ttfb: number[] = [];
  /** Per second of the ramp (by arrival): streams that started more than 1 s late. */
  const lateBySecond: number[] = [];
  let finished = 0;
  const errors = new Map<string, number>();
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      // Arrivals spread evenly over RAMP_S seconds; each stream outlasts the ramp, so all n are open together at its end.
      await new Promise((r) => setTimeout(r, (i * RAMP_S * 1000) / n));
      open++;
      peakOpen = Math.max(peakOpen, open);
      try {
        const sent = Date.now();
        const r = await request(url, { dispatcher: client, method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
        let text = '';
        let seen = false;
        for await (const part of r.body) {
          text += part;
          if (!seen) {
            const m = /t=(\d+)/.exec(text);
            if (m) {
              seen = true;
              const d = Date.now() - Number(m[1]);
              delays.push(d);
              ttfb.push(Date.now() - sent);
              const s = Math.floor((sent - t0) / 1000);
              if (d > 1000) lateBySecond[s] = (lateBySecond[s] ?? 0) + 1;
            }
          }
        }
        if (r.statusCode === 200 && text.includes('[DONE]')) finished++;
        else errors.set(`status ${r.statusCode}`, (errors.get(`status ${r.statusCode}`) ?? 0) + 1);
      } catch (err) {
        const code = (err as { code?: string }).code ?? (err as Error).message;
        errors.set(code, (errors.get(code) ?? 0) + 1);
      }
      open--;
    }),
  );
  await client.close();
  return {
    streams: n,
    peak_open: peakOpen,
    finished,
    errors: Object.fromEntries(errors),
    start_delay_ms: { p50: quantile(delays, 0.5), p99: quantile(delays, 0.99), max: Math.max(...delays) },
    first_chunk_after_request_ms: { p50: quantile(ttfb, 0.5), p99: quantile(ttfb, 0.99), max: Math.max(...ttfb) },
    over_1s: delays.filter((d) => d > 1000).length,
    over_1s_by_arrival_second: Array.from(lateBySecond, (x) => x ?? 0).join(' '),
    wall_s: (Date.now() - t0) / 1000,
    gateway_peak_rss_mb: Math.round(procStats(gatewayPid).hwmMb),
  };
}

type Target = { url: string; headers: Record<string, string>; model: string; pid: number };

/** c64 and c1024, the gateway then the bare proxy, twice (the second round is reported: JIT warm). */
async function cpuPart(gw: Target, br: Target) {
  await cpuPerRequest(gw.url, gw.headers, gw.model, 64, gw.pid);
  await cpuPerRequest(br.url, br.headers, br.model, 64, br.pid);
  const rows: Record<string, unknown>[] = [];
  for (const c of [64, 1024, 64, 1024]) {
    const g = await cpuPerRequest(gw.url, gw.headers, gw.model, c, gw.pid);
    const b = await cpuPerRequest(br.url, br.headers, br.model, c, br.pid);
    rows.push({ concurrency: c, gateway_rps: g.rps, gateway_cpu_us: Math.round(g.us), bare_rps: b.rps, bare_cpu_us: Math.round(b.us), gateway_over_bare: +(g.us / b.us).toFixed(2), errors: g.errors + b.errors });
  }
  rows.splice(0, 2);
  console.log(`CPU per request by concurrency (small body, not streamed; ${SECONDS} s after a 2 s warm-up on the same connections):`);
  console.table(rows);
  const [c64, c1024] = rows as Array<{ gateway_cpu_us: number; bare_cpu_us: number }>;
  console.log(`gateway c1024 ÷ c64 CPU per request: ${(c1024.gateway_cpu_us / c64.gateway_cpu_us).toFixed(2)}× (bare proxy: ${(c1024.bare_cpu_us / c64.bare_cpu_us).toFixed(2)}×)`);

}

async function main() {
  if (spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' }).status !== 0) throw new Error('npm run build failed');
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-conc-'));
  spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  const tls = { TLS_KEY: join(dir, 'key.pem'), TLS_CERT: join(dir, 'cert.pem'), MOCK_CHUNKS: String(STREAM_CHUNKS), MOCK_CHUNK_GAP_MS: '1000' };
  start('mock', [join(vendor, 'mock-upstream.mjs')], { PORT: String(PORTS.mock) });
  start('mock-h2', [join(root, 'bench/mock-h2.mjs')], { ...tls, PORT: String(PORTS.h2) });
  // HTTP/1.1 without TLS: one TLS handshake per stream would make the single-threaded mock the bottleneck.
  start('mock-h1', [join(root, 'bench/mock-h2.mjs')], { MOCK_CHUNKS: tls.MOCK_CHUNKS, MOCK_CHUNK_GAP_MS: tls.MOCK_CHUNK_GAP_MS, PORT: String(PORTS.h1) });
  const bare = start('bare', [join(vendor, 'bare-proxy.mjs')], { PORT: String(PORTS.bare), UPSTREAM: `http://127.0.0.1:${PORTS.mock}` });
  const config = join(dir, 'gateway.yaml');
  writeFileSync(
    config,
    [
      'providers:',
      `  - { slug: mock, name: Mock, protocol: openai, base_url: "http://127.0.0.1:${PORTS.mock}/v1", no_auth: true }`,
      `  - { slug: mock-h2, name: Mock HTTP/2, protocol: openai, base_url: "https://127.0.0.1:${PORTS.h2}/v1", no_auth: true, http2: true }`,
      `  - { slug: mock-h1, name: Mock HTTP/1.1, protocol: openai, base_url: "http://127.0.0.1:${PORTS.h1}/v1", no_auth: true }`,
      'models:',
      '  - { id: bench/model, name: Bench, context_length: 32000 }',
      '  - { id: bench/h2, name: Bench h2, context_length: 32000 }',
      '  - { id: bench/h1, name: Bench h1, context_length: 32000 }',
      'endpoints:',
      '  - { model: bench/model, provider: mock, upstream_model: m, pricing: { prompt: "0.000001", completion: "0.000002" } }',
      '  - { model: bench/h2, provider: mock-h2, upstream_model: m, pricing: { prompt: "0.000001", completion: "0.000002" } }',
      '  - { model: bench/h1, provider: mock-h1, upstream_model: m, pricing: { prompt: "0.000001", completion: "0.000002" } }',
    ].join('\n'),
  );
  const gateway = start('gateway', [join(GATEWAY_DIST, 'bin.js'), 'serve'], {
    PORT: String(PORTS.gateway),
    HOST: '127.0.0.1',
    GATEWAY_DATABASE_URL: `sqlite:${join(dir, 'gw.db')}`,
    GATEWAY_ADMIN_KEY: ADMIN,
    GATEWAY_CONFIG: config,
    GATEWAY_DEFAULT_CATALOG: 'false',
    GATEWAY_LOG_LEVEL: 'warn',
    // As `npm start` and the image run it (docs/operations.md#sizing).
    NODE_OPTIONS: process.env.BENCH_GATEWAY_NODE_OPTIONS ?? '--max-semi-space-size=64',
    NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem'),
  });
  await waitUp(`http://127.0.0.1:${PORTS.gateway}/health`, 60_000);
  await waitUp(`http://127.0.0.1:${PORTS.bare}/`);
  const created = await request(`http://127.0.0.1:${PORTS.gateway}/api/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{"name":"bench"}' });
  const key = ((await created.body.json()) as { key: string }).key;
  const gw = { url: `http://127.0.0.1:${PORTS.gateway}/api/v1/chat/completions`, headers: { authorization: `Bearer ${key}` }, model: 'bench/model', pid: gateway.pid! };
  const br = { url: `http://127.0.0.1:${PORTS.bare}/v1/chat/completions`, headers: {}, model: 'bench/model', pid: bare.pid! };

  if (CPU_PART) await cpuPart(gw, br);

  if (H2_STREAMS + H1_STREAMS === 0) return;
  const shape = `${STREAM_CHUNKS} chunks 1 s apart, arriving over ${RAMP_S} s`;
  if (H2_STREAMS > 0) {
    console.log(`\n${H2_STREAMS} concurrent slow streams to one provider over HTTP/2 (${shape}):`);
    console.log(await slowStreams(gw.url, key, 'bench/h2', H2_STREAMS, gw.pid));
  }
  if (H1_STREAMS > 0) {
    console.log(`\n${H1_STREAMS} concurrent slow streams to one provider over HTTP/1.1, one connection each (${shape}):`);
    console.log(await slowStreams(gw.url, key, 'bench/h1', H1_STREAMS, gw.pid));
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
