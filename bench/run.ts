/**
 * `npm run bench`: the gateway against the bare pass-through proxy (../shared/bench) and the direct upstream, side by
 * side in one run on this machine, all in one process tree. The upstream is the project's simulator with no added
 * delay. Prints, for each target: p50/p99 at concurrency 1, throughput at concurrency 64 (plain and streaming),
 * time to first byte of a stream, the gap between stream chunks, CPU time per request and peak RSS; then the added
 * latency (minus direct) and the ratios to the bare proxy; then 256 concurrent streams (stalls) and an RSS soak.
 *
 * Env: BENCH_SECONDS (each load phase, default 5), BENCH_ROUNDS (interleaved throughput rounds, default 3), BENCH_SOAK_SECONDS (default 60), BENCH_SERIAL (default 2000),
 * PEER_DIR (a folder whose node_modules has @portkey-ai/gateway, default ../bench-run) to add the peer gateway,
 * BENCH_LOG_LEVEL (gateway log level, default info), BENCH_GATEWAY_NODE_FLAGS (the gateway's node flags, default
 * `--max-semi-space-size=64` as `npm start` and the image run it; '' for none), BENCH_PIN (1: where `taskset` exists and there are at least
 * 2 CPUs: the load generator and the simulator run on CPU 0, each target on CPU 1, as ../shared/bench/README.md advises
 * for steadier CPU figures — but the load generator then caps the bare proxy; default 0: the OS places every process),
 * BENCH_WORK_SECONDS (each phase of the work-size table, default 3), BENCH_ONLY=work (only the work-size table),
 * BENCH_WORK (only the work-size rows whose name contains it, e.g. `chunk`; `=name`: the row of that exact name), BENCH_PORT_OFFSET (added to every port, so that
 * two runs on one machine do not collide; default 0), BENCH_BURSTS (chunks per upstream write of the paced stream
 * rows, default 1,16,128), BENCH_BURST_GAP_MS (the pause after each such write, default 1 ms per 32 chunks, at least 1).
 *
 * The work-size table (issue 18): gateway ÷ bare CPU per request for 1 KB, 100 KB and 1 MB bodies, a 1,000-message
 * conversation (~1 MB) and a 10,000-chunk stream (per chunk) on the same-protocol path (chat → an OpenAI-compatible
 * upstream), and 1,000-message conversations on the Messages API (→ Anthropic protocol) and the Responses API
 * (→ Responses protocol), and 10,000-chunk streams translated between
 * protocols (Anthropic Messages in → chat upstream, chat in → Anthropic Messages upstream, Gemini in → OpenAI Responses
 * upstream); the two targets loaded in alternation in each of BENCH_ROUNDS rounds (median). Every stream row is run
 * again paced (`…, K per read`): the simulator writes K chunks per write with a pause after each, so that both
 * targets read the upstream in the same reads — unpaced, a read carries whatever arrived while the relay was busy, so
 * a faster relay pays more reads (a system call and a write to the client each) for the same stream. The read and
 * write system calls per stream of each target are printed (/proc/PID/io) to show that the pattern held.
 * For a translated stream row the bare proxy relays the client's protocol where the
 * simulator takes it from the bare proxy (Gemini to Gemini, chat to chat), else the upstream's (Messages in: the bare
 * proxy forwards no `anthropic-version`, so it relays the chat stream); either way 10,000 content events, and the
 * gateway's extra work is the translation. Streams are read to their end (see streamLoad).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { request } from 'undici';
import { procIo, procStats, vendorBareProxy, waitUp, writeGatewayConfig } from './common.js';
import { pacedWorks, workTarget, WORK_LIST, type Work } from './works.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const SOAK = Number(process.env.BENCH_SOAK_SECONDS ?? 60);
const SERIAL = Number(process.env.BENCH_SERIAL ?? 2000);
const PEER_DIR = resolve(root, process.env.PEER_DIR ?? '../bench-run');
const ADMIN = 'sk-gw-v1-' + 'b'.repeat(64);
const WORK_SECONDS = Number(process.env.BENCH_WORK_SECONDS ?? 3);
const ONLY_WORK = process.env.BENCH_ONLY === 'work';
const PORT_OFFSET = Number(process.env.BENCH_PORT_OFFSET ?? 0);
/** Chunks per upstream write (and so per socket read) of the paced stream rows (works.ts), and the pause after each write. */
const BURSTS = (process.env.BENCH_BURSTS ?? '1,16,128').split(',').map(Number).filter((k) => k > 0);
/**
 * 1 ms up to 32 chunks per write, then 1 ms per 32 chunks: a larger write takes longer to arrive and to relay, and a
 * pause shorter than that joins two writes in one read of the slower side (and a fast reader splits a write that is
 * still arriving: at 128 per write and 1 ms, one run read 108 times per stream through the bare proxy, 78 through the
 * gateway, for 79 writes).
 */
const burstGapMs = (k: number) => (process.env.BENCH_BURST_GAP_MS ? Number(process.env.BENCH_BURST_GAP_MS) : Math.max(1, Math.ceil(k / 32)));
const PORTS = { sim: 19100 + PORT_OFFSET, bare: 19200 + PORT_OFFSET, gateway: 19300 + PORT_OFFSET, peer: 19787 + PORT_OFFSET };

const PIN = process.env.BENCH_PIN === '1' && availableParallelism() >= 2 && spawnSync('taskset', ['-V']).status === 0;
if (PIN) spawnSync('taskset', ['-p', '-c', '0', String(process.pid)]); // the load generator (this process) on CPU 0

const kids: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Starts a process; with pinning, on `cpu` (the simulator shares CPU 0 with the load generator, targets get CPU 1). */
function start(name: string, cmd: string, args: string[], env: Record<string, string>, cwd = root, cpu = 1): ChildProcess {
  const [c, a] = PIN ? ['taskset', ['-c', String(cpu), cmd, ...args]] : [cmd, args];
  const k = spawn(c, a, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'], cwd });
  k.stderr?.on('data', (d: Buffer) => {
    if (process.env.BENCH_DEBUG) process.stderr.write(`[${name}] ${d}`);
  });
  kids.push(k);
  return k;
}
const killAll = () => kids.forEach((k) => k.kill('SIGKILL'));
process.on('exit', killAll);
process.on('SIGINT', () => process.exit(130));

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  model: string;
  pid?: number;
}

const body = (t: Target, stream: boolean) => JSON.stringify({ model: t.model, messages: [{ role: 'user', content: 'hello' }], stream });

function load(t: Target, connections: number, stream: boolean, seconds = SECONDS): Promise<autocannon.Result> {
  return new Promise((res, rej) => {
    autocannon(
      { url: t.url, method: 'POST', connections, duration: seconds, headers: { 'content-type': 'application/json', ...t.headers }, body: body(t, stream) },
      (e, r) => (e ? rej(e) : res(r)),
    );
  });
}

const WORKS: Work[] = [...WORK_LIST, ...pacedWorks(BURSTS)].filter((w) => !process.env.BENCH_WORK || (process.env.BENCH_WORK.startsWith('=') ? w.name === process.env.BENCH_WORK.slice(1) : w.name.includes(process.env.BENCH_WORK)));

/** CPU µs of `t`'s process per request (or per chunk) under `w` for `seconds`, with the request count and errors. */
async function workCpu(t: Target, w: Work, seconds: number): Promise<{ cpu: number; requests: number; errors: number; reads: number; writes: number }> {
  const via = w.via?.[t.name as 'bare-proxy' | 'gateway'];
  const { url, model } = via ? { url: new URL(via.path, t.url).href, model: via.model } : workTarget(t, w.api);
  const body = w.body(model);
  const cpu0 = procStats(t.pid!).cpu;
  const io0 = procIo(t.pid!);
  const headers = { 'content-type': 'application/json', ...t.headers };
  const r = w.chunks
    ? await streamLoad(url, headers, body, w.connections, seconds)
    : await new Promise<{ requests: { total: number }; non2xx: number; errors: number }>((res, rej) =>
        autocannon({ url, method: 'POST', connections: w.connections, duration: seconds, headers, body }, (e, x) => (e ? rej(e) : res(x))),
      );
  const cpu1 = procStats(t.pid!).cpu;
  const io1 = procIo(t.pid!);
  if (r.non2xx > 0 && process.env.BENCH_DEBUG) {
    const probe = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body });
    console.error(`${t.name} ${w.name}: ${probe.statusCode} ${(await probe.body.text()).slice(0, 300)}`);
  }
  const units = Math.max(1, r.requests.total) * (w.chunks ?? 1);
  const n = Math.max(1, r.requests.total);
  return { cpu: ((cpu1 - cpu0) * 1e6) / units, requests: r.requests.total, errors: r.non2xx + r.errors, reads: (io1.reads - io0.reads) / n, writes: (io1.writes - io0.writes) / n };
}

/**
 * Long streams, `connections` at a time for `seconds`: a stream is started while time remains and every started one
 * is read to its end, so that the CPU measured around the call is that of whole streams only (autocannon counts only
 * the streams that ended in its window, and a stream of several seconds would leave much of the CPU it caused
 * uncounted or charged to the others).
 */
async function streamLoad(url: string, headers: Record<string, string>, body: string, connections: number, seconds: number) {
  const end = Date.now() + seconds * 1000;
  let total = 0;
  let non2xx = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        try {
          const r = await request(url, { method: 'POST', headers, body });
          for await (const _part of r.body);
          if (r.statusCode === 200) total++;
          else non2xx++;
        } catch {
          errors++;
        }
      }
    }),
  );
  return { requests: { total }, non2xx, errors };
}

/** The work-size table: bare proxy and gateway alternately under each workload, median of ROUNDS rounds. */
async function workTable(targets: Target[], knobs: (body: object | null) => Promise<void>) {
  const pair = ['bare-proxy', 'gateway'].map((n) => targets.find((t) => t.name === n)!);
  const rows: Array<Record<string, string | number>> = [];
  for (const w of WORKS) {
    const stream = w.chunks ? { chunkGapMs: 0, completionTokens: w.chunks } : null;
    await knobs(stream);
    // Warm-up (a paced row's unpaced: a 1-per-read stream lasts 10 s and more).
    for (const t of pair) await workCpu(t, { ...w, burst: undefined }, 1).catch(() => null);
    if (w.burst) await knobs({ ...stream, chunkGapMs: burstGapMs(w.burst), burstChunks: w.burst });
    const got = new Map<string, Array<{ cpu: number; requests: number; errors: number; reads: number; writes: number }>>();
    for (let round = 0; round < ROUNDS; round++) for (const t of pair) got.set(t.name, [...(got.get(t.name) ?? []), await workCpu(t, w, WORK_SECONDS)]);
    const med = (n: string) => quantile(got.get(n)!.map((x) => x.cpu), 0.5);
    const total = (n: string, k: 'requests' | 'errors') => got.get(n)!.reduce((a, x) => a + x[k], 0);
    const io = (n: string, k: 'reads' | 'writes') => Math.round(quantile(got.get(n)!.map((x) => x[k]), 0.5));
    const unit = w.chunks ? 'µs/chunk' : 'µs/req';
    rows.push({
      work: w.name,
      conns: w.connections,
      [`bare`]: `${med('bare-proxy').toFixed(w.chunks ? 2 : 0)} ${unit}`,
      [`gateway`]: `${med('gateway').toFixed(w.chunks ? 2 : 0)} ${unit}`,
      'gateway ÷ bare': +(med('gateway') / med('bare-proxy')).toFixed(2),
      'requests (bare / gw)': `${total('bare-proxy', 'requests')} / ${total('gateway', 'requests')}`,
      'errors (bare / gw)': `${total('bare-proxy', 'errors')} / ${total('gateway', 'errors')}`,
      ...(w.chunks ? { 'reads/stream (bare / gw)': `${io('bare-proxy', 'reads')} / ${io('gateway', 'reads')}`, 'writes/stream (bare / gw)': `${io('bare-proxy', 'writes')} / ${io('gateway', 'writes')}` } : {}),
    });
  }
  await knobs(null);
  console.log(`\nWork sizes, same-protocol paths (chat → OpenAI-compatible, messages → Anthropic, responses → Responses upstream) unless a row names a translation: CPU per request (stream: per chunk), median of ${ROUNDS} rounds of ${WORK_SECONDS} s`);
  console.table(rows);
}

/** Latencies (ms) of `n` requests one after the other. */
async function serial(t: Target, n: number): Promise<number[]> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const r = await request(t.url, { method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: body(t, false) });
    await r.body.arrayBuffer();
    if (r.statusCode !== 200) throw new Error(`${t.name}: status ${r.statusCode}`);
    xs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return xs;
}

/** Time to first byte and the gaps between body parts of a stream. */
/** Time to first byte and the gaps between body parts of `n` streams, one after the other (raw samples, ms). */
async function streamTiming(t: Target, n: number): Promise<{ first: number[]; gaps: number[] }> {
  const first: number[] = [];
  const gaps: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const r = await request(t.url, { method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: body(t, true) });
    let prev: bigint | null = null;
    for await (const _part of r.body) {
      const now = process.hrtime.bigint();
      if (prev === null) first.push(Number(now - t0) / 1e6);
      else gaps.push(Number(now - prev) / 1e6);
      prev = now;
    }
    if (r.statusCode !== 200) throw new Error(`${t.name}: stream status ${r.statusCode}`);
  }
  return { first, gaps };
}

const quantile = (samples: number[], p: number) => {
  const xs = [...samples].sort((a, b) => a - b);
  return xs[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;
};

/** Many concurrent streams: every one must finish with [DONE], and no gap between parts may exceed `stallMs`. */
async function concurrentStreams(t: Target, n: number, stallMs: number) {
  let done = 0;
  let maxGap = 0;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: n }, async () => {
      const r = await request(t.url, { method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: body(t, true) });
      let prev = Date.now();
      let text = '';
      for await (const part of r.body) {
        const now = Date.now();
        maxGap = Math.max(maxGap, now - prev);
        prev = now;
        text += part.toString();
      }
      if (r.statusCode === 200 && text.includes('data: [DONE]')) done++;
    }),
  );
  return { completed: done, of: n, maxGapMs: maxGap, seconds: (Date.now() - t0) / 1000, stalled: maxGap > stallMs };
}

async function main() {
  const scratch = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  if (!existsSync(join(root, 'dist/bin.js'))) throw new Error('dist/ is missing: run `npm run build` first');

  // The simulator, with no added delay, in its own process.
  const sim = start('sim', process.execPath, [join(root, 'dist/sim/main.js')], { SIM_PORT: String(PORTS.sim) }, root, 0);
  console.log(PIN ? 'Pinned: load generator and simulator on CPU 0, each target on CPU 1.' : 'Not pinned: the OS places every process.');
  // The bare pass-through proxy from ../shared/bench, copied where our node_modules (undici) resolves.
  const bareScript = vendorBareProxy(root);
  const bare = start('bare', process.execPath, [bareScript], { PORT: String(PORTS.bare), UPSTREAM: `http://127.0.0.1:${PORTS.sim}` });

  // The gateway, as a user runs it: the built CLI with `npm start`'s node flags (BENCH_GATEWAY_NODE_FLAGS replaces
  // them; '' for none), SQLite, a config file routing bench/model to the simulator.
  const config = writeGatewayConfig(scratch, `http://127.0.0.1:${PORTS.sim}/v1`);
  const nodeFlags = (process.env.BENCH_GATEWAY_NODE_FLAGS ?? '--max-semi-space-size=64').split(' ').filter(Boolean);
  console.log(`Gateway node flags: ${nodeFlags.join(' ') || '(none)'}`);
  const gateway = start('gateway', process.execPath, [...nodeFlags, join(root, 'dist/bin.js'), 'serve'], {
    PORT: String(PORTS.gateway),
    HOST: '127.0.0.1',
    GATEWAY_DATABASE_URL: `sqlite:${join(scratch, 'gw.db')}`,
    GATEWAY_ADMIN_KEY: ADMIN,
    GATEWAY_CONFIG: config,
    GATEWAY_DEFAULT_CATALOG: 'false',
    GATEWAY_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  });

  const simUrl = `http://127.0.0.1:${PORTS.sim}`;
  await waitUp(`${simUrl}/_sim/health`);
  await waitUp(`http://127.0.0.1:${PORTS.bare}/v1/models`).catch(() => undefined);
  await waitUp(`http://127.0.0.1:${PORTS.gateway}/health`, 90_000); // start-up can take tens of seconds on a loaded machine
  const created = await request(`http://127.0.0.1:${PORTS.gateway}/api/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const key = ((await created.body.json()) as { key: string }).key;

  const targets: Target[] = [
    { name: 'direct', url: `${simUrl}/v1/chat/completions`, headers: {}, model: 'bench-model', pid: sim.pid },
    { name: 'bare-proxy', url: `http://127.0.0.1:${PORTS.bare}/v1/chat/completions`, headers: {}, model: 'bench-model', pid: bare.pid },
    { name: 'gateway', url: `http://127.0.0.1:${PORTS.gateway}/api/v1/chat/completions`, headers: { authorization: `Bearer ${key}` }, model: 'bench/model', pid: gateway.pid },
  ];
  const peerStart = join(PEER_DIR, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  if (existsSync(peerStart)) {
    const peer = start('portkey', process.execPath, [peerStart, `--port=${PORTS.peer}`, '--headless'], {}, PEER_DIR);
    await sleep(3000);
    targets.push({
      name: 'portkey',
      url: `http://127.0.0.1:${PORTS.peer}/v1/chat/completions`,
      headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${simUrl}/v1`, authorization: 'Bearer x' },
      model: 'bench-model',
      pid: peer.pid,
    });
  } else {
    console.log(`(peer gateway not installed at ${PEER_DIR}; see ../shared/bench/README.md to add it)`);
  }

  const knobs = (body: object | null) =>
    request(`${simUrl}/_sim/knobs${body ? '/default' : ''}`, { method: body ? 'POST' : 'DELETE', headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined }).then((r) => r.body.dump());

  await workTable(targets, knobs);
  if (ONLY_WORK) {
    killAll();
    process.exit(0);
  }
  const rows: Array<Record<string, string | number>> = [];
  // Warm-up of every path measured below, plain and streamed: the figures are of warm processes (a JIT that has not
  // yet optimized the stream path's per-request code would otherwise weigh on the first stream-timing round).
  for (const t of targets) for (const stream of [false, true]) await load(t, 4, stream, 2).catch(() => null);
  // Stream timing with chunks 2 ms apart (each chunk its own TCP write, so that gaps can be measured), in interleaved
  // rounds like everything below (pooled samples per target).
  const streamSamples = new Map<string, { first: number[]; gaps: number[] }>();
  await knobs({ chunkGapMs: 2, completionTokens: 20 });
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const got = await streamTiming(t, Math.ceil(100 / ROUNDS));
      const all = streamSamples.get(t.name) ?? { first: [], gaps: [] };
      streamSamples.set(t.name, { first: all.first.concat(got.first), gaps: all.gaps.concat(got.gaps) });
    }
  }
  await knobs(null);
  // Latency at concurrency 1, in interleaved rounds too (pooled samples per target).
  const c1Samples = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) c1Samples.set(t.name, [...(c1Samples.get(t.name) ?? []), ...(await serial(t, Math.ceil(SERIAL / ROUNDS)))]);
  }
  // Throughput in interleaved rounds (every target once per round), median per target: a shared machine's speed
  // drifts over minutes, and interleaving keeps most of that drift out of the ratios.
  const runs = new Map<string, Array<{ rps: number; srps: number; cpu: number; errors: number; serrors: number }>>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const cpu0 = t.pid ? procStats(t.pid).cpu : 0;
      const c64 = await load(t, 64, false);
      const cpu1 = t.pid ? procStats(t.pid).cpu : 0;
      const s64 = await load(t, 64, true);
      const list = runs.get(t.name) ?? [];
      list.push({
        rps: c64.requests.average,
        srps: s64.requests.average,
        cpu: ((cpu1 - cpu0) * 1e6) / Math.max(1, c64.requests.total),
        errors: c64.non2xx + c64.errors,
        serrors: s64.non2xx + s64.errors,
      });
      runs.set(t.name, list);
    }
  }
  for (const t of targets) {
    const st = streamSamples.get(t.name)!;
    const c1 = { p50: quantile(c1Samples.get(t.name)!, 0.5), p99: quantile(c1Samples.get(t.name)!, 0.99) };
    const r = runs.get(t.name)!;
    const ps = t.pid ? procStats(t.pid) : { hwmMb: NaN };
    rows.push({
      target: t.name,
      'c1 p50 ms': +c1.p50.toFixed(3),
      'c1 p99 ms': +c1.p99.toFixed(3),
      'c64 req/s': Math.round(quantile(r.map((x) => x.rps), 0.5)),
      'c64 errors': r.reduce((a, x) => a + x.errors, 0),
      'stream c64 req/s': Math.round(quantile(r.map((x) => x.srps), 0.5)),
      'stream errors': r.reduce((a, x) => a + x.serrors, 0),
      'ttfb p50 ms': +quantile(st.first, 0.5).toFixed(3),
      'chunk gap p50 ms': +quantile(st.gaps, 0.5).toFixed(3),
      'chunk gap p99 ms': +quantile(st.gaps, 0.99).toFixed(3),
      'cpu µs/req (c64)': Math.round(quantile(r.map((x) => x.cpu), 0.5)),
      'peak RSS MB': +ps.hwmMb.toFixed(1),
    });
  }
  if (ROUNDS > 1) {
    console.log(`\nThroughput per round (c64 req/s, plain / streaming; medians below):`);
    for (const t of targets) console.log(`  ${t.name.padEnd(12)} ${runs.get(t.name)!.map((x) => `${Math.round(x.rps)} / ${Math.round(x.srps)}`).join('   ')}`);
  }
  const direct = rows.find((r) => r.target === 'direct')!;
  const base = rows.find((r) => r.target === 'bare-proxy')!;
  const summary = rows.map((r) => ({
    target: r.target,
    'added c1 p99 ms': +((r['c1 p99 ms'] as number) - (direct['c1 p99 ms'] as number)).toFixed(3),
    'added ttfb ms': +((r['ttfb p50 ms'] as number) - (direct['ttfb p50 ms'] as number)).toFixed(3),
    'added chunk gap p99 ms': +((r['chunk gap p99 ms'] as number) - (direct['chunk gap p99 ms'] as number)).toFixed(3),
    'req/s ÷ bare': +((r['c64 req/s'] as number) / (base['c64 req/s'] as number)).toFixed(2),
    'stream ÷ bare': +((r['stream c64 req/s'] as number) / (base['stream c64 req/s'] as number)).toFixed(2),
    'cpu/req ÷ bare': +((r['cpu µs/req (c64)'] as number) / (base['cpu µs/req (c64)'] as number)).toFixed(2),
  }));
  console.log('\nPer target (upstream: simulator, no added delay)');
  console.table(rows);
  console.log('Added over direct, and ratios to the bare pass-through');
  console.table(summary);

  // 256 concurrent streams through the gateway, each 20 chunks 10 ms apart: all must finish, none may stall.
  await knobs({ chunkGapMs: 10, completionTokens: 20 });
  const gw = targets.find((t) => t.name === 'gateway')!;
  const streams = await concurrentStreams(gw, 256, 1000);
  console.log('256 concurrent streams through the gateway (20 chunks, 10 ms apart):', streams);
  await knobs(null);

  // RSS over a sustained run: sampled every 5 s under concurrency-64 load (half plain, half streaming).
  if (SOAK > 0 && gw.pid) {
    const samples: number[] = [];
    const timer = setInterval(() => samples.push(+procStats(gw.pid!).rssMb.toFixed(1)), 5000);
    await Promise.all([load(gw, 32, false, SOAK), load(gw, 32, true, SOAK)]);
    clearInterval(timer);
    const firstHalf = samples.slice(0, Math.ceil(samples.length / 2));
    const secondHalf = samples.slice(Math.ceil(samples.length / 2));
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    console.log(`RSS over a ${SOAK}-second run (MB, every 5 s):`, samples.join(' '));
    console.log(`  first half avg ${avg(firstHalf).toFixed(1)} MB, second half avg ${avg(secondHalf).toFixed(1)} MB`);
  }
  killAll();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  killAll();
  process.exit(1);
});
