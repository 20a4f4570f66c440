/**
 * `npm run bench:workers`: throughput of the gateway with GATEWAY_WORKERS=1 and =2 side by side in one run, both on
 * PostgreSQL and Redis (what several workers need), against ../shared/bench/mock-upstream.mjs. Rounds alternate
 * between the two; each reports requests per second and the CPU per request of all the gateway's processes
 * (primary and workers). On a 2-core machine the load generator and the mock share the cores with the workers:
 * read the ratio, not the absolute figures.
 *
 * Env: BENCH_SECONDS (each round, default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 64),
 * BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_REDIS_URL (default redis://127.0.0.1:6379).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { request } from 'undici';
import { procStats, waitUp } from './common.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN = 'sk-gw-v1-' + 'd'.repeat(64);
const PORTS = { mock: 19510, one: 19520, two: 19530 };

const kids: ChildProcess[] = [];
function start(name: string, args: string[], env: Record<string, string>): ChildProcess {
  const k = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'], cwd: root });
  k.stderr?.on('data', (d: Buffer) => process.env.BENCH_DEBUG && process.stderr.write(`[${name}] ${d}`));
  kids.push(k);
  return k;
}
process.on('exit', () => kids.forEach((k) => k.kill('SIGKILL')));
process.on('SIGINT', () => process.exit(130));

/** A process and its children (the primary's workers), from /proc. */
function tree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    /* gone */
  }
  return [pid, ...children.flatMap(tree)];
}
const cpuOf = (pid: number) => tree(pid).reduce((s, p) => s + procStats(p).cpu, 0);

async function round(url: string, key: string, pid: number) {
  const before = cpuOf(pid);
  const r = await new Promise<autocannon.Result>((res, rej) =>
    autocannon(
      { url, method: 'POST', connections: CONNECTIONS, duration: SECONDS, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ model: 'bench/model', messages: [{ role: 'user', content: 'hello' }] }) },
      (e, x) => (e ? rej(e) : res(x)),
    ),
  );
  const cpu = cpuOf(pid) - before;
  return { rps: r.requests.average, us: (cpu * 1e6) / Math.max(1, r.requests.total), cores: cpu / SECONDS, errors: r.errors + r.non2xx, p99: r.latency.p99 };
}

async function main() {
  if (spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' }).status !== 0) throw new Error('npm run build failed');
  const kit = [resolve(root, '../shared/bench'), resolve(root, '../../shared/bench')].find((d) => existsSync(join(d, 'mock-upstream.mjs')));
  if (!kit) throw new Error('../shared/bench (the mock upstream) not found');
  const vendor = join(root, '.scratch/bench');
  mkdirSync(vendor, { recursive: true });
  copyFileSync(join(kit, 'mock-upstream.mjs'), join(vendor, 'mock-upstream.mjs'));
  start('mock', [join(vendor, 'mock-upstream.mjs')], { PORT: String(PORTS.mock) });

  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-workers-'));
  const config = join(dir, 'gateway.yaml');
  writeFileSync(
    config,
    [
      'providers:',
      `  - { slug: mock, name: Mock, protocol: openai, base_url: "http://127.0.0.1:${PORTS.mock}/v1", no_auth: true }`,
      'models:',
      '  - { id: bench/model, name: Bench, context_length: 32000 }',
      'endpoints:',
      '  - { model: bench/model, provider: mock, upstream_model: m, pricing: { prompt: "0.000001", completion: "0.000002" } }',
    ].join('\n'),
  );
  // One fresh database shared by both set-ups (as two deployments of one organization would).
  const name = `gw_bench_workers_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const dbUrl = Object.assign(new URL(PG_URL), { pathname: `/${name}` }).toString();
  const env = (port: number, workers: number) => ({
    PORT: String(port),
    HOST: '127.0.0.1',
    GATEWAY_WORKERS: String(workers),
    GATEWAY_DATABASE_URL: dbUrl,
    GATEWAY_REDIS_URL: REDIS_URL,
    GATEWAY_ADMIN_KEY: ADMIN,
    GATEWAY_CONFIG: config,
    GATEWAY_DEFAULT_CATALOG: 'false',
    GATEWAY_LOG_LEVEL: 'warn',
    // As `npm start` runs it (and as the primary gives its workers).
    NODE_OPTIONS: '--max-semi-space-size=64',
  });
  try {
    const one = start('one', [join(root, 'dist/bin.js'), 'serve'], env(PORTS.one, 1));
    await waitUp(`http://127.0.0.1:${PORTS.one}/health`, 60_000);
    const two = start('two', [join(root, 'dist/bin.js'), 'serve'], env(PORTS.two, 2));
    await waitUp(`http://127.0.0.1:${PORTS.two}/health`, 60_000);
    await new Promise((r) => setTimeout(r, 2_000)); // both workers up
    const created = await request(`http://127.0.0.1:${PORTS.one}/api/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{"name":"bench"}' });
    const key = ((await created.body.json()) as { key: string }).key;
    const targets = [
      { name: '1 worker', url: `http://127.0.0.1:${PORTS.one}/api/v1/chat/completions`, pid: one.pid! },
      { name: '2 workers', url: `http://127.0.0.1:${PORTS.two}/api/v1/chat/completions`, pid: two.pid! },
    ];
    for (const t of targets) await round(t.url, key, t.pid); // warm-up
    const results = new Map<string, Array<Awaited<ReturnType<typeof round>>>>();
    for (let i = 0; i < ROUNDS; i++) for (const t of targets) results.set(t.name, [...(results.get(t.name) ?? []), await round(t.url, key, t.pid)]);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const rows = targets.map((t) => {
      const rs = results.get(t.name)!;
      return { target: t.name, rps_median: Math.round(median(rs.map((r) => r.rps))), rps_rounds: rs.map((r) => Math.round(r.rps)).join(' / '), cpu_us_per_req: Math.round(median(rs.map((r) => r.us))), gateway_cores: +median(rs.map((r) => r.cores)).toFixed(2), p99_ms: median(rs.map((r) => r.p99)), errors: rs.reduce((s, r) => s + r.errors, 0) };
    });
    console.log(`GATEWAY_WORKERS=1 vs 2 (PostgreSQL + Redis), ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s, alternating:`);
    console.table(rows);
    console.log(`2 workers ÷ 1 worker throughput: ${(rows[1].rps_median / rows[0].rps_median).toFixed(2)}×`);
  } finally {
    kids.forEach((k) => k.kill('SIGKILL'));
    await new Promise((r) => setTimeout(r, 500));
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
