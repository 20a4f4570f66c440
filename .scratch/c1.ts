// c1 tail investigation: sim + gateway (GWENV json) ; serial N requests to gateway and direct, interleaved.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { waitUp, writeGatewayConfig } from '../bench/common.js';
const root = resolve(new URL('.', import.meta.url).pathname, '..');
const ADMIN = 'sk-gw-v1-' + 'c'.repeat(64);
const kids: ChildProcess[] = [];
process.on('exit', () => kids.forEach((k) => k.kill('SIGKILL')));
function start(args: string[], env: Record<string, string>) {
  const k = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  kids.push(k);
  return k;
}
const body = JSON.stringify({ model: 'bench/model', messages: [{ role: 'user', content: 'hello' }] });
async function serial(url: string, key: string, n: number, out: Array<[number, number]>) {
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const r = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body });
    await r.body.arrayBuffer();
    out.push([Number(t0 / 1000n), Number(process.hrtime.bigint() - t0) / 1e6]);
  }
}
const q = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * p))]; };
async function main() {
  const dir = process.argv[2] ? resolve(process.argv[2]) : root;
  const scratch = mkdtempSync(join(tmpdir(), 'gw-c1-'));
  start([join(root, 'dist/sim/main.js')], { SIM_PORT: '19160' });
  await waitUp('http://127.0.0.1:19160/_sim/health');
  const config = writeGatewayConfig(scratch, 'http://127.0.0.1:19160/v1');
  start([...(process.env.NODEARGS ? process.env.NODEARGS.split(' ') : []), join(dir, 'dist/bin.js'), 'serve'], { PORT: '19361', HOST: '127.0.0.1', GATEWAY_DATABASE_URL: `sqlite:${join(scratch, 'gw.db')}`, GATEWAY_ADMIN_KEY: ADMIN, GATEWAY_CONFIG: config, GATEWAY_DEFAULT_CATALOG: 'false', GATEWAY_LOG_LEVEL: process.env.LOGLEVEL ?? 'info', ...(process.env.GWENV ? JSON.parse(process.env.GWENV) : {}) });
  await waitUp('http://127.0.0.1:19361/health');
  if (process.env.BARE) { start(['/work/bench-run/bare-proxy.mjs'], { PORT: '19362', UPSTREAM: 'http://127.0.0.1:19160', NODE_PATH: join(root, 'node_modules') }); await new Promise((r) => setTimeout(r, 800)); }
  const res = await request('http://127.0.0.1:19361/api/v1/keys', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'p' }) });
  const key = ((await res.body.json()) as { key: string }).key;
  const gw = process.env.BARE ? 'http://127.0.0.1:19362/api/v1/chat/completions' : 'http://127.0.0.1:19361/api/v1/chat/completions', direct = 'http://127.0.0.1:19160/v1/chat/completions';
  await serial(gw, key, 2000, []); await serial(direct, key, 1000, []);
  const G: Array<[number, number]> = [], D: Array<[number, number]> = [];
  const N = Number(process.env.N ?? 1000);
  for (let r = 0; r < Number(process.env.ROUNDS ?? 4); r++) { await serial(direct, key, N, D); await serial(gw, key, N, G); }
  for (const [name, xs] of [['direct', D], ['gateway', G]] as const) {
    const l = xs.map((x) => x[1]);
    console.log(name.padEnd(8), ['p50', 'p90', 'p99', 'p99.9'].map((p, i) => `${p}=${q(l, [0.5, 0.9, 0.99, 0.999][i]).toFixed(3)}`).join(' '), `n=${l.length}`);
  }
  const l = G.map((x) => x[1]); const thr = q(l, 0.98);
  const slow = G.filter((x) => x[1] >= thr);
  console.log('gateway slow (>=p98) count', slow.length, 'median slow', q(slow.map((x) => x[1]), 0.5).toFixed(2));
  const gaps: number[] = []; for (let i = 1; i < slow.length; i++) gaps.push(Math.round((slow[i][0] - slow[i - 1][0]) / 1000));
  console.log('ms between slow ones:', gaps.slice(0, 60).join(' '));
  process.exit(0);
}
main();
