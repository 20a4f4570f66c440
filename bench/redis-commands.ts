/**
 * `npx tsx bench/redis-commands.ts <checkout> [requests]`: Redis commands and round trips (scripts and MULTI/EXEC) per
 * request of a key with a request rate limit, for one built checkout (`dist/`): the gateway on SQLite and a Redis of
 * the caller's own (REDIS_CMDS_PORT, default 6391: start one, e.g. `redis-server --port 6391 --save ""`, so that no
 * other traffic is counted), 2,000 warm-up requests, then `requests` (default 20,000) at 16 connections and the
 * `info commandstats` delta. Counts only: the time printed is not a benchmark reading. Commands run inside a script
 * are counted by Redis too; periodic work (lease syncs, heartbeats) is part of the figure.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { request } from 'undici';
import { fileURLToPath } from 'node:url';
import { benchPorts, waitUpOrExit, writeGatewayConfig } from './common.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REDIS_PORT = process.env.REDIS_CMDS_PORT ?? '6391';
const dir = resolve(process.argv[2] ?? '.');
const N = Number(process.argv[3] ?? 20000);
const ADMIN = 'sk-gw-v1-' + 'c'.repeat(64);
const stats = () => {
  const out = execFileSync('redis-cli', ['-p', REDIS_PORT, 'info', 'commandstats'], { encoding: 'utf8' });
  const m: Record<string, number> = {};
  for (const l of out.split('\n')) {
    const x = /^cmdstat_([^:]+):calls=(\d+)/.exec(l);
    if (x) m[x[1]] = Number(x[2]);
  }
  return m;
};
const load = (url: string, key: string, amount: number) => new Promise<autocannon.Result>((res, rej) => autocannon({ url, method: 'POST', connections: 16, amount, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ model: 'bench/model', messages: [{ role: 'user', content: 'hello' }] }) }, (e, r) => (e ? rej(e) : res(r))));
async function main() {
  const scratch = mkdtempSync(join(tmpdir(), 'gw-cmds-'));
  const [simPort, port] = await benchPorts(null, 2);
  const sim = spawn(process.execPath, [join(root, 'dist/sim/main.js')], { env: { ...process.env, SIM_PORT: String(simPort) }, stdio: 'ignore' });
  await waitUpOrExit(`http://127.0.0.1:${simPort}/_sim/health`, sim);
  const config = writeGatewayConfig(scratch, `http://127.0.0.1:${simPort}/v1`);
  const gw = spawn(process.execPath, [join(dir, 'dist/bin.js'), 'serve'], { env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', GATEWAY_DATABASE_URL: `sqlite:${join(scratch, 'gw.db')}`, GATEWAY_ADMIN_KEY: ADMIN, GATEWAY_CONFIG: config, GATEWAY_DEFAULT_CATALOG: 'false', GATEWAY_LOG_LEVEL: 'warn', GATEWAY_REDIS_URL: `redis://127.0.0.1:${REDIS_PORT}` }, stdio: 'ignore' });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitUpOrExit(`${base}/health`, gw);
    const res = await request(`${base}/api/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'cmds', rate_limit: { requests: 100000000, interval: '1m' } }) });
    const { key } = (await res.body.json()) as { key: string };
    await load(`${base}/api/v1/chat/completions`, key, 2000);
    const before = stats();
    const t0 = Date.now();
    const r = await load(`${base}/api/v1/chat/completions`, key, N);
    const s = (Date.now() - t0) / 1000;
    const after = stats();
    const delta = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)]).filter(([, v]) => (v as number) > 0));
    const total = Object.entries(delta).filter(([k]) => !['info', 'config|resetstat'].includes(k)).reduce((a, [, v]) => a + (v as number), 0);
    const trips = (delta.evalsha ?? 0) + (delta.eval ?? 0) + (delta.exec ?? 0);
    console.log(JSON.stringify({ dir, requests: N, seconds: s, non2xx: r.non2xx, delta }));
    console.log(`commands per request ${(total / N).toFixed(4)}; scripts+transactions (round trips) per request ${(trips / N).toFixed(4)}`);
  } finally {
    gw.kill('SIGKILL');
    sim.kill('SIGKILL');
  }
}
main().then(() => process.exit(0), (e) => (console.error(e), process.exit(1)));
