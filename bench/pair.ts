/**
 * `npm run bench:pair -- <A> <B>`: two builds of the gateway measured side by side in one run, each under its own load,
 * for changes smaller than this machine's drift between runs (a shared VM's speed moves ±30 % over minutes, so two runs
 * of `npm run bench` cannot tell 5 % apart). Both gateways share the simulator and the machine's state; what is
 * compared is each one's CPU time per request.
 *
 * A and B are checkouts with `dist/` built and their own `node_modules` (e.g. the current one and an older commit:
 * `git worktree add ../gw-old <ref> && (cd ../gw-old && npm ci && npm run build)`, then
 * `npm run bench:pair -- ../gw-old .`).
 *
 * Two ways to compare (PAIR_MODE). `interleaved` (default): both gateways started once and warmed up (PAIR_WARMUP s,
 * twice each, and on until PAIR_WARMUP_REQUESTS requests, default 10,000), then PAIR_ROUNDS rounds (default 7) of
 * PAIR_SECONDS (default 6): A, B, B, A loaded one at a time for half of it each, so the machine's drift within a round weighs on both alike; B/A per round, then the median, quartiles and range.
 * `concurrent`: fresh gateways each round (default 3 rounds of 10 s), both loaded at the same time.
 *
 * PAIR_NOISE=1 (interleaved only) shows the noise in the same run: a second instance of A (A′) is started beside A and
 * B, each round loads A, B, A′, A′, B, A, and A′/A — the same build against itself — is printed per round and
 * summarized like B/A. A regression "beyond noise" is a B/A median outside A′/A's range.
 *
 * Env: PAIR_PORT (the simulator's port; the gateways take + 201, + 202 and + 203; a taken one is an error; default: free
 * ports picked, so runs at once do not collide), PAIR_ROUNDS, PAIR_SECONDS, PAIR_CONNECTIONS (per gateway, default
 * 32), PAIR_STREAM (1: streamed requests), PAIR_NODE_OPTIONS_B (node options for B only, e.g. a GC flag to try),
 * PAIR_ENV_B (environment variables for B only, as `NAME=value,NAME=value`, e.g. `GATEWAY_METRICS=off`), PAIR_KEY_B (the JSON
 * body B's key is created with, e.g. `{"limit":1000}` for a key with a spending limit).
 *
 * `npm run bench:spend` is the spend-control comparison of issue 17, one build against itself: A a single instance on
 * SQLite with a key without limits, B the same build with Redis (GATEWAY_REDIS_URL, default redis://127.0.0.1:6379)
 * and a key with a spending limit ($1,000) — B/A is the CPU cost of reservations through Redis leases.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { request } from 'undici';
import { benchPorts, procStats, waitUp, writeGatewayConfig } from './common.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** `interleaved` (default): one pair of gateways, rounds of A, B, B, A loaded in turn; `concurrent`: both at once, fresh gateways each round. */
const MODE = process.env.PAIR_MODE === 'concurrent' ? 'concurrent' : 'interleaved';
const ROUNDS = Math.max(1, Number(process.env.PAIR_ROUNDS ?? (MODE === 'interleaved' ? 7 : 3)));
const SECONDS = Number(process.env.PAIR_SECONDS ?? (MODE === 'interleaved' ? 6 : 10));
/** Interleaved mode: seconds of load each gateway takes, twice, before the first round (the JIT's warm-up)… */
const WARMUP = Number(process.env.PAIR_WARMUP ?? 4);
/**
 * …and at least this many requests in all (PAIR_WARMUP_REQUESTS): on a loaded machine a few seconds are a few hundred
 * requests, and the first rounds then measure the JIT's tier-up (streamed CPU per request fell 1,200 → 250 µs over
 * the first three rounds of such a run).
 */
const WARMUP_REQUESTS = Number(process.env.PAIR_WARMUP_REQUESTS ?? 10_000);
const CONNECTIONS = Number(process.env.PAIR_CONNECTIONS ?? 32);
const STREAM = process.env.PAIR_STREAM === '1';
const ADMIN = 'sk-gw-v1-' + 'c'.repeat(64);
/** PAIR_PORT: the simulator's port; the gateways take PAIR_PORT + 201, + 202 and + 203; unset: free ports. */
const BASE_PORT = process.env.PAIR_PORT ? Number(process.env.PAIR_PORT) : null;
/** Interleaved mode: a second instance of A loaded in each round too, and A′/A printed as the run's noise. */
const NOISE = process.env.PAIR_NOISE === '1' && MODE === 'interleaved';

const kids = new Set<ChildProcess>();
process.on('exit', () => kids.forEach((k) => k.kill('SIGKILL')));

function start(cmd: string[], env: Record<string, string>): ChildProcess {
  const k = spawn(process.execPath, cmd, { env: { ...process.env, ...env }, stdio: 'ignore' });
  kids.add(k);
  return k;
}

function stop(k: ChildProcess): Promise<void> {
  kids.delete(k);
  return new Promise((r) => {
    k.once('exit', () => r());
    k.kill('SIGKILL');
  });
}

function load(url: string, key: string, seconds: number): Promise<autocannon.Result> {
  const body = JSON.stringify({ model: 'bench/model', messages: [{ role: 'user', content: 'hello' }], stream: STREAM });
  return new Promise((res, rej) =>
    autocannon(
      { url, method: 'POST', connections: CONNECTIONS, duration: seconds, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body },
      (e, r) => (e ? rej(e) : res(r)),
    ),
  );
}

async function gateway(dir: string, port: number, config: string, scratch: string, nodeOptions = '', extraEnv: Record<string, string> = {}, keyBody: Record<string, unknown> = {}): Promise<{ proc: ChildProcess; url: string; key: string }> {
  const proc = start([join(dir, 'dist/bin.js'), 'serve'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    GATEWAY_DATABASE_URL: `sqlite:${join(scratch, `gw-${port}.db`)}`,
    GATEWAY_ADMIN_KEY: ADMIN,
    GATEWAY_CONFIG: config,
    GATEWAY_DEFAULT_CATALOG: 'false',
    GATEWAY_LOG_LEVEL: 'info',
    NODE_OPTIONS: nodeOptions,
    ...extraEnv,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUp(`${base}/health`, 90_000); // a loaded machine can take long to start two gateways
  const res = await request(`${base}/api/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'pair', ...keyBody }) });
  const { key } = (await res.body.json()) as { key: string };
  return { proc, url: `${base}/api/v1/chat/completions`, key };
}

type Phase = { cpu: number; requests: number; errors: number };

/** Median, quartiles and range of per-round ratios, one line. */
function summary(name: string, ratios: number[]): string {
  const sorted = [...ratios].sort((x, y) => x - y);
  const q = (f: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(f * (sorted.length - 1))))];
  return `${name} CPU per request: median ${q(0.5).toFixed(3)}, quartiles ${q(0.25).toFixed(3)}–${q(0.75).toFixed(3)}, range ${sorted[0].toFixed(3)}–${sorted[sorted.length - 1].toFixed(3)} over ${ratios.length} rounds (${MODE}); in order: ${ratios.map((r) => r.toFixed(3)).join(', ')}`;
}

const load1 = () => loadavg().map((x) => x.toFixed(2)).join(' ');

async function main() {
  const [a, b] = process.argv.slice(2).map((d) => resolve(d));
  if (!a || !b) throw new Error('usage: npm run bench:pair -- <checkout A> <checkout B>');
  for (const d of [a, b]) if (!existsSync(join(d, 'dist/bin.js'))) throw new Error(`${d}/dist/bin.js is missing: build that checkout first`);
  if (BASE_PORT !== null && !(Number.isInteger(BASE_PORT) && BASE_PORT > 0 && BASE_PORT + 203 < 65536)) throw new Error(`PAIR_PORT=${process.env.PAIR_PORT}: not a port`);
  const scratch = mkdtempSync(join(tmpdir(), 'gw-pair-'));
  const [simPort, portA, portB, portA2] = await benchPorts(BASE_PORT, 4);
  const sim = start([join(root, 'dist/sim/main.js')], { SIM_PORT: String(simPort) });
  await waitUp(`http://127.0.0.1:${simPort}/_sim/health`, 90_000);
  const config = writeGatewayConfig(scratch, `http://127.0.0.1:${simPort}/v1`);
  console.log(`A = ${a}\nB = ${b}\nports: simulator ${simPort}, A ${portA}, B ${portB}${NOISE ? `, A′ ${portA2}` : ''}`);
  console.log(`${STREAM ? 'streamed' : 'plain'} requests, ${CONNECTIONS} connections each, ${SECONDS} s per round; load average at start ${load1()}`);
  const keyB = JSON.parse(process.env.PAIR_KEY_B ?? '{}') as Record<string, unknown>;
  const envB = Object.fromEntries((process.env.PAIR_ENV_B ?? '').split(',').filter((x) => x.includes('=')).map((x) => [x.slice(0, x.indexOf('=')).trim(), x.slice(x.indexOf('=') + 1)]));
  const startB = () => gateway(b, portB, config, scratch, process.env.PAIR_NODE_OPTIONS_B ?? '', envB, keyB);
  const ratios: number[] = [];
  const noise: number[] = [];
  const errors = (r: autocannon.Result) => r.non2xx + r.errors;
  if (MODE === 'concurrent') {
    for (let round = 1; round <= ROUNDS; round++) {
      const [ga, gb] = await Promise.all([gateway(a, portA, config, scratch), startB()]);
      await Promise.all([load(ga.url, ga.key, 3), load(gb.url, gb.key, 3)]); // warm-up
      const cpu0 = [procStats(ga.proc.pid!).cpu, procStats(gb.proc.pid!).cpu];
      const [ra, rb] = await Promise.all([load(ga.url, ga.key, SECONDS), load(gb.url, gb.key, SECONDS)]);
      const cpu1 = [procStats(ga.proc.pid!).cpu, procStats(gb.proc.pid!).cpu];
      const perReq = (i: number, r: autocannon.Result) => ((cpu1[i] - cpu0[i]) * 1e6) / Math.max(1, r.requests.total);
      const [ua, ub] = [perReq(0, ra), perReq(1, rb)];
      ratios.push(ub / ua);
      console.log(`round ${round}: A ${ua.toFixed(0)} µs/req (${ra.requests.total} req, ${errors(ra)} errors)   B ${ub.toFixed(0)} µs/req (${rb.requests.total} req, ${errors(rb)} errors)   B/A ${(ub / ua).toFixed(3)}`);
      await Promise.all([stop(ga.proc), stop(gb.proc)]);
    }
  } else {
    // Interleaved: the gateways started once and warmed up, then each round loads A, B, B, A (with PAIR_NOISE=1:
    // A, B, A′, A′, B, A), one at a time, half a round's seconds each: the order reads the same both ways, so a steady
    // drift of the machine's speed within a round weighs on each gateway alike.
    const gws = await Promise.all([gateway(a, portA, config, scratch), startB(), ...(NOISE ? [gateway(a, portA2, config, scratch)] : [])]);
    const [ga, gb, ga2] = gws;
    for (const g of gws) {
      let served = 0;
      for (let i = 0; i < 2 || served < WARMUP_REQUESTS; i++) served += (await load(g.url, g.key, WARMUP)).requests.total;
    }
    const phase = async (g: typeof ga): Promise<Phase> => {
      const c0 = procStats(g.proc.pid!).cpu;
      const r = await load(g.url, g.key, SECONDS / 2);
      return { cpu: procStats(g.proc.pid!).cpu - c0, requests: r.requests.total, errors: errors(r) };
    };
    const order = NOISE ? [ga, gb, ga2, ga2, gb, ga] : [ga, gb, gb, ga];
    const perReq = (xs: Phase[]) => {
      const t = xs.reduce((s, x) => ({ cpu: s.cpu + x.cpu, requests: s.requests + x.requests, errors: s.errors + x.errors }), { cpu: 0, requests: 0, errors: 0 });
      return { us: (t.cpu * 1e6) / Math.max(1, t.requests), requests: t.requests, errors: t.errors };
    };
    const show = (name: string, x: ReturnType<typeof perReq>) => `${name} ${x.us.toFixed(0)} µs/req (${x.requests} req, ${x.errors} errors)`;
    for (let round = 1; round <= ROUNDS; round++) {
      const p: Phase[] = [];
      for (const g of order) p.push(await phase(g));
      const of = (g: typeof ga) => perReq(p.filter((_, i) => order[i] === g));
      const [ua, ub] = [of(ga), of(gb)];
      ratios.push(ub.us / ua.us);
      let line = `round ${round}: ${show('A', ua)}   ${show('B', ub)}   B/A ${(ub.us / ua.us).toFixed(3)}`;
      if (ga2) {
        const ua2 = of(ga2);
        noise.push(ua2.us / ua.us);
        line += `   ${show('A′', ua2)}   A′/A ${(ua2.us / ua.us).toFixed(3)}`;
      }
      console.log(line);
    }
    await Promise.all(gws.map((g) => stop(g.proc)));
  }
  console.log(summary('B/A', ratios));
  if (noise.length > 0) console.log(summary('A′/A (noise: the same build twice)', noise));
  console.log(`load average at the end ${load1()}`);
  await stop(sim);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
