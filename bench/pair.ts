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
 * Two ways to compare (PAIR_MODE). `interleaved` (default): both gateways started once and warmed up (PAIR_WARMUP s, twice
 * each), then PAIR_ROUNDS rounds (default 7) of PAIR_SECONDS (default 6): A, B, B, A loaded one at a time for half of it
 * each, so the machine's drift within a round weighs on both alike; B/A per round, then the median, quartiles and range.
 * `concurrent`: fresh gateways each round (default 3 rounds of 10 s), both loaded at the same time.
 *
 * Env: PAIR_ROUNDS, PAIR_SECONDS, PAIR_CONNECTIONS (per gateway, default
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
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { request } from 'undici';
import { procStats, waitUp, writeGatewayConfig } from './common.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** `interleaved` (default): one pair of gateways, rounds of A, B, B, A loaded in turn; `concurrent`: both at once, fresh gateways each round. */
const MODE = process.env.PAIR_MODE === 'concurrent' ? 'concurrent' : 'interleaved';
const ROUNDS = Math.max(1, Number(process.env.PAIR_ROUNDS ?? (MODE === 'interleaved' ? 7 : 3)));
const SECONDS = Number(process.env.PAIR_SECONDS ?? (MODE === 'interleaved' ? 6 : 10));
/** Interleaved mode: seconds of load each gateway takes, twice, before the first round (the JIT's warm-up). */
const WARMUP = Number(process.env.PAIR_WARMUP ?? 4);
const CONNECTIONS = Number(process.env.PAIR_CONNECTIONS ?? 32);
const STREAM = process.env.PAIR_STREAM === '1';
const ADMIN = 'sk-gw-v1-' + 'c'.repeat(64);
/** PAIR_PORT: the simulator's port; the gateways take PAIR_PORT + 201 and + 202 (two runs at once need two bases). */
const SIM_PORT = Number(process.env.PAIR_PORT ?? 19150);

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

async function main() {
  const [a, b] = process.argv.slice(2).map((d) => resolve(d));
  if (!a || !b) throw new Error('usage: npm run bench:pair -- <checkout A> <checkout B>');
  for (const d of [a, b]) if (!existsSync(join(d, 'dist/bin.js'))) throw new Error(`${d}/dist/bin.js is missing: build that checkout first`);
  const scratch = mkdtempSync(join(tmpdir(), 'gw-pair-'));
  const sim = start([join(root, 'dist/sim/main.js')], { SIM_PORT: String(SIM_PORT) });
  await waitUp(`http://127.0.0.1:${SIM_PORT}/_sim/health`, 90_000);
  const config = writeGatewayConfig(scratch, `http://127.0.0.1:${SIM_PORT}/v1`);
  console.log(`A = ${a}\nB = ${b}\n${STREAM ? 'streamed' : 'plain'} requests, ${CONNECTIONS} connections each, ${SECONDS} s per round`);
  const keyB = JSON.parse(process.env.PAIR_KEY_B ?? '{}') as Record<string, unknown>;
  const envB = Object.fromEntries((process.env.PAIR_ENV_B ?? '').split(',').filter((x) => x.includes('=')).map((x) => [x.slice(0, x.indexOf('=')).trim(), x.slice(x.indexOf('=') + 1)]));
  const ratios: number[] = [];
  const errors = (r: autocannon.Result) => r.non2xx + r.errors;
  if (MODE === 'concurrent') {
    for (let round = 1; round <= ROUNDS; round++) {
      const [ga, gb] = await Promise.all([gateway(a, SIM_PORT + 201, config, scratch), gateway(b, SIM_PORT + 202, config, scratch, process.env.PAIR_NODE_OPTIONS_B ?? '', envB, keyB)]);
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
    // Interleaved: both gateways started once and warmed up, then each round loads A, B, B, A (one at a time, half a
    // round's seconds each), so a drift of the machine's speed within a round weighs on both alike.
    const [ga, gb] = await Promise.all([gateway(a, SIM_PORT + 201, config, scratch), gateway(b, SIM_PORT + 202, config, scratch, process.env.PAIR_NODE_OPTIONS_B ?? '', envB, keyB)]);
    for (const g of [ga, gb, ga, gb]) await load(g.url, g.key, WARMUP);
    const phase = async (g: typeof ga) => {
      const c0 = procStats(g.proc.pid!).cpu;
      const r = await load(g.url, g.key, SECONDS / 2);
      return { cpu: procStats(g.proc.pid!).cpu - c0, requests: r.requests.total, errors: errors(r) };
    };
    for (let round = 1; round <= ROUNDS; round++) {
      const p: Array<{ cpu: number; requests: number; errors: number }> = [];
      for (const g of [ga, gb, gb, ga]) p.push(await phase(g));
      const sum = (xs: typeof p) => xs.reduce((t, x) => ({ cpu: t.cpu + x.cpu, requests: t.requests + x.requests, errors: t.errors + x.errors }), { cpu: 0, requests: 0, errors: 0 });
      const [sa, sb] = [sum([p[0], p[3]]), sum([p[1], p[2]])];
      const [ua, ub] = [(sa.cpu * 1e6) / Math.max(1, sa.requests), (sb.cpu * 1e6) / Math.max(1, sb.requests)];
      ratios.push(ub / ua);
      console.log(`round ${round}: A ${ua.toFixed(0)} µs/req (${sa.requests} req, ${sa.errors} errors)   B ${ub.toFixed(0)} µs/req (${sb.requests} req, ${sb.errors} errors)   B/A ${(ub / ua).toFixed(3)}`);
    }
    await Promise.all([stop(ga.proc), stop(gb.proc)]);
  }
  const sorted = [...ratios].sort((x, y) => x - y);
  const q = (f: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(f * (sorted.length - 1))))];
  console.log(`B/A CPU per request: median ${q(0.5).toFixed(3)}, quartiles ${q(0.25).toFixed(3)}–${q(0.75).toFixed(3)}, range ${sorted[0].toFixed(3)}–${sorted[sorted.length - 1].toFixed(3)} over ${ratios.length} rounds (${MODE})`);
  console.log(`rounds in order: ${ratios.map((r) => r.toFixed(3)).join(', ')}`);
  await stop(sim);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
