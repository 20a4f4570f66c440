// Profile harness: sim on core 0, target on core 1, autocannon on core 0. TARGET=gateway|bare PROF=1 for --cpu-prof.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';
import { procStats, waitUp, writeGatewayConfig } from '../bench/common.js';
const root = resolve(new URL('.', import.meta.url).pathname, '..');
const ADMIN = 'sk-gw-v1-' + 'c'.repeat(64);
const kids: ChildProcess[] = [];
process.on('exit', () => kids.forEach((k) => k.kill('SIGKILL')));
const STREAM = process.env.STREAM === '1';
function start(cpu: string, args: string[], env: Record<string, string>) {
  const k = spawn(process.env.PIN === '0' ? process.execPath : 'taskset', process.env.PIN === '0' ? args : ['-c', cpu, process.execPath, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  kids.push(k);
  return k;
}
function load(url: string, key: string, seconds: number, c = Number(process.env.C ?? 32)): Promise<autocannon.Result> {
  const body = JSON.stringify({ model: 'bench/model', messages: [{ role: 'user', content: 'hello' }], stream: STREAM });
  return new Promise((res, rej) => autocannon({ url, method: 'POST', connections: c, duration: seconds, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body }, (e, r) => (e ? rej(e) : res(r))));
}
async function main() {
  const dir = process.argv[2] ? resolve(process.argv[2]) : root;
  const scratch = mkdtempSync(join(tmpdir(), 'gw-prof-'));
  const sim = start('0', [join(root, 'dist/sim/main.js')], { SIM_PORT: '19150' });
  await waitUp('http://127.0.0.1:19150/_sim/health');
  const config = writeGatewayConfig(scratch, 'http://127.0.0.1:19150/v1');
  const profArgs = process.env.PROF ? ['--cpu-prof', `--cpu-prof-dir=${scratch}`] : [];
  let proc: ChildProcess, url: string, key = 'x';
  if (process.env.TARGET === 'bare') {
    proc = start('1', [...profArgs, join(root, '.scratch/bare-wrap.mjs')], { PORT: '19351', UPSTREAM: 'http://127.0.0.1:19150' });
    await new Promise((r) => setTimeout(r, 800)); console.log('bare alive', proc.exitCode, proc.pid);
    url = 'http://127.0.0.1:19351/v1/chat/completions';
  } else {
    proc = start('1', [...profArgs, ...(process.env.CLUSTER ? [join(root, '.scratch/cluster.mjs')] : [join(dir, 'dist/bin.js'), 'serve'])], { PORT: '19351', HOST: '127.0.0.1', GATEWAY_DATABASE_URL: `sqlite:${join(scratch, 'gw.db')}`, GATEWAY_ADMIN_KEY: ADMIN, GATEWAY_CONFIG: config, GATEWAY_DEFAULT_CATALOG: 'false', GATEWAY_LOG_LEVEL: process.env.LOGLEVEL ?? 'info', ...(process.env.GWENV ? JSON.parse(process.env.GWENV) : {}) });
    await waitUp('http://127.0.0.1:19351/health');
    const res = await request('http://127.0.0.1:19351/api/v1/keys', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'p' }) });
    key = ((await res.body.json()) as { key: string }).key;
    url = 'http://127.0.0.1:19351/api/v1/chat/completions';
  }
  let totalReq = (await load(url, key, 3)).requests.total;
  const rounds = Number(process.env.ROUNDS ?? 3);
  const out: string[] = [];
  for (let i = 0; i < rounds; i++) {
    const c0 = procStats(proc.pid!).cpu;
    const r = await load(url, key, Number(process.env.SECONDS ?? 8));
    const c1 = procStats(proc.pid!).cpu;
    totalReq += r.requests.total;
    out.push(`${(((c1 - c0) * 1e6) / r.requests.total).toFixed(0)}µs/req ${(r.requests.total / r.duration * 1000).toFixed(0)}rps err=${r.non2xx + r.errors}`);
  }
  console.log(out.join(' | '), 'total requests', totalReq);
  proc.kill('SIGINT');
  await new Promise((r) => proc.once('exit', r));
  if (process.env.PROF) console.log('profile:', join(scratch, readdirSync(scratch).find((f) => f.endsWith('.cpuprofile'))!));
  process.exit(0);
}
main().catch((e) => { console.error(e); process.exit(1); });
