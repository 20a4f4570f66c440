/**
 * `tsx bench/profile.ts <checkout> [out.json]`: one build of the gateway under `node --cpu-prof`, a fixed load
 * (PROF_REQUESTS, default 20000; PROF_STREAM=1 for streamed requests; 16 connections) against the simulator, and its
 * top self-time functions printed (aggregated by function and file). Used to compare two builds function by function
 * (docs/benchmark.md); the absolute times move with the machine's load, the shares much less. The simulator and the
 * gateway listen on free ports (PROF_PORT=<base>: base and base + 201). PROF_BODY_BYTES (with
 * PROF_MESSAGES, default 1) sends a body of about that size, split into that many messages (issue 18's body rows).
 * PROF_CHUNKS=<n> streams answers of n chunks with no gap between them (issue 18's 10,000-chunk stream row; implies
 * PROF_STREAM=1, 8 connections) and reports per chunk. PROF_BURST=<k> (with PROF_CHUNKS): the profiled streams are
 * paced, k chunks per upstream write and PROF_BURST_GAP_MS (default 1) after each, as bench:run's `k per read` rows
 * (the warm-up is unpaced). PROF_BARE=1: the bare pass-through proxy (../shared/bench) is profiled instead of the
 * gateway, under the same load (`<checkout>` then only names the output).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { request } from 'undici';
import { benchPorts, vendorBareProxy, waitUp, writeGatewayConfig } from './common.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.PROF_REQUESTS ?? 20000);
const CHUNKS = Number(process.env.PROF_CHUNKS ?? 0);
const STREAM = process.env.PROF_STREAM === '1' || CHUNKS > 0;
const ADMIN = 'sk-gw-v1-' + 'c'.repeat(64);
const kids = new Set<ChildProcess>();
process.on('exit', () => kids.forEach((k) => k.kill('SIGKILL')));

const BODY_BYTES = Number(process.env.PROF_BODY_BYTES ?? 0);
const MESSAGES = Number(process.env.PROF_MESSAGES ?? 1);

/** The request body: `hello`, or about BODY_BYTES bytes in MESSAGES messages alternating user/assistant (as bench/run.ts). */
function requestBody(): string {
  if (!BODY_BYTES) return JSON.stringify({ model: 'bench/model', messages: [{ role: 'user', content: 'hello' }], stream: STREAM });
  const per = Math.max(1, Math.floor(BODY_BYTES / MESSAGES) - 40);
  const text = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(per / 27)).slice(0, per);
  const messages = Array.from({ length: MESSAGES }, (_, i) => ({ role: i % 2 === 0 || i === MESSAGES - 1 ? 'user' : 'assistant', content: text }));
  return JSON.stringify({ model: 'bench/model', messages, stream: STREAM });
}

function load(url: string, key: string, amount: number): Promise<autocannon.Result> {
  const body = requestBody();
  return new Promise((res, rej) =>
    autocannon({ url, method: 'POST', connections: CHUNKS ? 8 : 16, amount, timeout: 120, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body }, (e, r) => (e ? rej(e) : res(r))),
  );
}

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }

async function main() {
  const dir = resolve(process.argv[2] ?? '.');
  const scratch = mkdtempSync(join(tmpdir(), 'gw-prof-'));
  // Free ports, so that runs beside other benchmarks do not collide (PROF_PORT=<base>: base and base + 201).
  const [simPort, port] = await benchPorts(process.env.PROF_PORT ? Number(process.env.PROF_PORT) : null, 2);
  const sim = spawn(process.execPath, [join(root, 'dist/sim/main.js')], { env: { ...process.env, SIM_PORT: String(simPort) }, stdio: 'ignore' });
  kids.add(sim);
  await waitUp(`http://127.0.0.1:${simPort}/_sim/health`);
  const config = writeGatewayConfig(scratch, `http://127.0.0.1:${simPort}/v1`);
  const out = join(scratch, 'gw.cpuprofile');
  const bare = process.env.PROF_BARE === '1';
  const target = bare ? [vendorBareProxy(root)] : [join(dir, 'dist/bin.js'), 'serve'];
  const gw = spawn(process.execPath, ['--require', join(root, 'bench/profile-preload.cjs'), ...target], {
    env: { ...process.env, PROF_OUT: out, PORT: String(port), HOST: '127.0.0.1', UPSTREAM: `http://127.0.0.1:${simPort}`, GATEWAY_DATABASE_URL: `sqlite:${join(scratch, 'gw.db')}`, GATEWAY_ADMIN_KEY: ADMIN, GATEWAY_CONFIG: config, GATEWAY_DEFAULT_CATALOG: 'false', GATEWAY_LOG_LEVEL: 'info' },
    stdio: 'ignore',
  });
  kids.add(gw);
  const base = `http://127.0.0.1:${port}`;
  await waitUp(`${base}/${bare ? 'v1/models' : 'health'}`, 60_000);
  let key = 'none';
  if (!bare) {
    const res = await request(`${base}/api/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'prof' }) });
    key = ((await res.body.json()) as { key: string }).key;
  }
  const url = `${base}${bare ? '' : '/api'}/v1/chat/completions`;
  if (CHUNKS) await request(`http://127.0.0.1:${simPort}/_sim/knobs/default`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chunkGapMs: 0, completionTokens: CHUNKS }) }).then((r) => r.body.dump());
  await load(url, key, N / 2); // warm-up, not profiled
  const burst = Number(process.env.PROF_BURST ?? 0);
  if (CHUNKS && burst) await request(`http://127.0.0.1:${simPort}/_sim/knobs/default`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chunkGapMs: Number(process.env.PROF_BURST_GAP_MS ?? 1), burstChunks: burst, completionTokens: CHUNKS }) }).then((r) => r.body.dump());
  const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
  gw.kill('SIGUSR2');
  await sleep(300);
  const r = await load(url, key, N);
  await sleep(1200); // the recorder's last flush
  const exited = new Promise((ok) => gw.once('exit', ok));
  gw.kill('SIGUSR2');
  await exited;
  kids.delete(gw);
  const prof = JSON.parse(readFileSync(out, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const self = new Map<number, number>();
  prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
  const byFn = new Map<string, number>();
  let total = 0;
  for (const n of prof.nodes) {
    const t = self.get(n.id) ?? 0;
    if (n.callFrame.functionName === '(idle)') continue;
    total += t;
    const u = n.callFrame.url.replace(/^file:\/\//, '').replace(dir, '.').replace(/.*node_modules\//, 'nm/');
    const k = `${n.callFrame.functionName || '(anon)'} ${u}:${n.callFrame.lineNumber + 1}`;
    byFn.set(k, (byFn.get(k) ?? 0) + t);
  }
  const rows = [...byFn].sort((a, b) => b[1] - a[1]);
  // Per request, or per chunk with PROF_CHUNKS.
  const units = CHUNKS ? N * CHUNKS : N;
  const unit = CHUNKS ? 'µs/chunk' : 'µs/req';
  console.log(`${dir}: ${N} ${STREAM ? 'streamed' : 'plain'} requests, ${r.non2xx + r.errors} errors, ${(total / 1000).toFixed(0)} ms busy, ${(total / units).toFixed(CHUNKS ? 3 : 1)} ${unit}`);
  for (const [k, t] of rows.slice(0, Number(process.env.PROF_TOP ?? 60))) console.log(`${(t / units).toFixed(CHUNKS ? 4 : 2).padStart(7)} ${unit}  ${k}`);
  if (process.argv[3]) writeFileSync(process.argv[3], JSON.stringify(Object.fromEntries(rows.map(([k, t]) => [k, t / units]))));
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
