/**
 * `npx tsx bench/gc.ts <target>…`: full (mark-compact) collections, scavenges, live heap and CPU per request of each
 * target serving one workload, one target after the other against one simulator. A target is a checkout with `dist/`
 * built (the gateway) or `bare` (the bare pass-through proxy of ../shared/bench). Each runs with `--trace-gc`, takes
 * GC_WARM warm-up requests, then GC_REQUESTS counted ones (16 connections); the collections are counted from the trace
 * of the counted window (the main thread's isolate only), the CPU from /proc. The live heap is the heap size after the
 * last mark-compact of the window.
 *
 * Env: GC_WORK (the body, as INSTR_WORK in bench/instructions.ts: small, 1mb, turns, messages-api, responses-api; and
 * non-ascii (1 MB of CJK and emoji text, chat), gemini (a 1 MB generateContent body, one part), gemini-turns (1,001
 * contents, ~1 MB), as bench/works.ts makes them; default 1mb), GC_WARM (default 160), GC_REQUESTS (default 320), GC_NODE_FLAGS (extra node flags of every target,
 * space-separated), GC_PRINT (a regular expression: the target's output lines of the counted window it matches are shown), GC_ROUNDS (default 1: the targets run in turn this many times), GC_DEFAULT_CATALOG (the gateway's GATEWAY_DEFAULT_CATALOG, default false as in the other benchmarks), GC_SNAPSHOT=1 (a heap snapshot of
 * each gateway after warm-up, written to the scratch folder printed), GC_FORCED=1 (after warm-up, 20 full collections
 * forced in the target, bench/gc-preload.cjs: the cost of one full collection of its heap, main thread, CPU ms).
 * Ports: free ones picked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { request } from 'undici';
import { benchPorts, procStats, waitUpOrExit, writeGatewayConfig } from './common.js';
import { geminiSizedBody, NON_ASCII, sizedBody } from './works.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN = 'sk-gw-v1-' + 'c'.repeat(64);
const WORK = process.env.GC_WORK ?? '1mb';
const WARM = Number(process.env.GC_WARM ?? 160);
const N = Number(process.env.GC_REQUESTS ?? 320);
const ROUNDS = Number(process.env.GC_ROUNDS ?? 1);
const FLAGS = (process.env.GC_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const SNAPSHOT = process.env.GC_SNAPSHOT === '1';
const FORCED = process.env.GC_FORCED === '1';

const kids = new Set<ChildProcess>();
process.on('exit', () => kids.forEach((k) => k.kill('SIGKILL')));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function workRequest(): { path: string; body: string; barePath: string } {
  const turns = (bytes: number, n: number) => {
    const per = Math.max(1, Math.floor(bytes / n) - 40);
    const text = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(per / 27)).slice(0, per);
    return Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 || i === n - 1 ? 'user' : 'assistant', content: text }));
  };
  const chat = (messages: unknown[]) => ({ path: '/api/v1/chat/completions', barePath: '/v1/chat/completions', body: JSON.stringify({ model: 'bench/model', messages }) });
  if (WORK === '1mb') return chat(turns(1 << 20, 1));
  if (WORK === 'turns') return chat(turns(1 << 20, 1000));
  if (WORK === 'messages-api') return { path: '/api/v1/messages', barePath: '/v1/messages', body: JSON.stringify({ model: 'bench/claude', max_tokens: 64, messages: turns(1 << 20, 1000) }) };
  if (WORK === 'responses-api') return { path: '/api/v1/responses', barePath: '/v1/responses', body: JSON.stringify({ model: 'bench/responses', input: turns(1 << 20, 1000) }) };
  if (WORK === 'non-ascii') return chat(JSON.parse(sizedBody('bench/model', 1 << 20, 1, false, 'chat', NON_ASCII)).messages);
  const gemini = (n: number) => ({ path: `/api/v1beta/models/${encodeURIComponent('bench/gemini')}:generateContent`, barePath: '/v1beta/models/bench-model:generateContent', body: geminiSizedBody(1 << 20, n) });
  if (WORK === 'gemini') return gemini(1);
  if (WORK === 'gemini-turns') return gemini(1001);
  return chat([{ role: 'user', content: 'hello' }]);
}
const REQUEST = workRequest();

function load(url: string, key: string | null, amount: number): Promise<autocannon.Result> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  return new Promise((res, rej) => autocannon({ url, method: 'POST', connections: 16, amount, timeout: 120, headers, body: REQUEST.body }, (e, r) => (e ? rej(e) : res(r))));
}

interface Reading { target: string; forced: string; majors: number; scavenges: number; otherIsolates: number; cpuMsPerReq: number; liveMb: number; heapMb: number; markMs: number; errors: number }

async function measure(target: string, simPort: number, config: string, scratch: string): Promise<Reading> {
  const [port] = await benchPorts(null, 1);
  const bare = target === 'bare';
  let script: string;
  let env: Record<string, string>;
  if (bare) {
    const shared = [process.env.BENCH_SHARED ?? '', resolve(root, '../shared/bench/bare-proxy.mjs'), resolve(root, '../../shared/bench/bare-proxy.mjs')].find((f) => f && existsSync(f));
    if (!shared) throw new Error('bare-proxy.mjs of ../shared/bench not found (BENCH_SHARED)');
    const vendor = join(root, 'node_modules/.cache/gw-bench');
    mkdirSync(vendor, { recursive: true });
    script = join(vendor, 'bare-proxy.mjs');
    copyFileSync(shared, script);
    env = { PORT: String(port), UPSTREAM: `http://127.0.0.1:${simPort}` };
  } else {
    script = join(target, 'dist/bin.js');
    env = {
      PORT: String(port),
      HOST: '127.0.0.1',
      GATEWAY_DATABASE_URL: `sqlite:${join(scratch, `gw-${port}.db`)}`,
      GATEWAY_ADMIN_KEY: ADMIN,
      GATEWAY_CONFIG: config,
      GATEWAY_DEFAULT_CATALOG: process.env.GC_DEFAULT_CATALOG ?? 'false',
      GATEWAY_LOG_LEVEL: 'warn',
    };
  }
  const cwd = mkdtempSync(join(scratch, 'run-'));
  const proc = spawn(process.execPath, ['--trace-gc', ...(SNAPSHOT ? ['--heapsnapshot-signal=SIGUSR2'] : []), ...(FORCED ? ['--expose-gc', '--require', join(root, 'bench/gc-preload.cjs')] : []), ...FLAGS, script, ...(bare ? [] : ['serve'])], { env: { ...process.env, ...env, GC_FORCED_OUT: join(cwd, 'forced.json') }, cwd, stdio: ['ignore', 'pipe', 'ignore'] });
  kids.add(proc);
  let counting = false;
  const trace: string[] = [];
  let pending = '';
  proc.stdout!.on('data', (d: Buffer) => {
    const lines = (pending + d.toString()).split('\n');
    pending = lines.pop()!;
    if (counting) trace.push(...lines);
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUpOrExit(bare ? `${base}/v1/models` : `${base}/health`, proc);
  let key: string | null = null;
  if (!bare) {
    const res = await request(`${base}/api/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'gc' }) });
    key = ((await res.body.json()) as { key: string }).key;
  }
  const url = `${base}${bare ? REQUEST.barePath : REQUEST.path}`;
  await load(url, key, WARM);
  if (SNAPSHOT && !bare) {
    proc.kill('SIGUSR2');
    const end = Date.now() + 60_000;
    while (Date.now() < end && !readdirSync(cwd).some((f) => f.endsWith('.heapsnapshot'))) await sleep(200);
    await sleep(3000);
    console.log(`  snapshot: ${cwd}`);
  }
  let forced = '';
  if (FORCED) {
    proc.kill('SIGUSR2');
    const end = Date.now() + 120_000;
    while (Date.now() < end && !existsSync(join(cwd, 'forced.json'))) await sleep(200);
    await sleep(100);
    forced = readFileSync(join(cwd, 'forced.json'), 'utf8');
  }
  await sleep(200);
  counting = true;
  const before = procStats(proc.pid!).cpu;
  const r = await load(url, key, N);
  const after = procStats(proc.pid!).cpu;
  await sleep(100);
  counting = false;
  proc.kill('SIGKILL');
  kids.delete(proc);
  // Only the main thread's isolate: the trace also holds the SQLite writer thread's small one ("[pid:0xaddr]" tells
  // them apart; the main one collects most often).
  const isolateOf = (l: string) => /^\s*\[\d+:(0x[0-9a-f]+)\]/.exec(l)?.[1];
  const counts = new Map<string, number>();
  for (const l of trace) {
    const id = isolateOf(l);
    if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const main = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  const ours = trace.filter((l) => isolateOf(l) === main);
  const others = trace.length - ours.length;
  // e.g. "Mark-Compact 45.1 (60.2) -> 30.0 (58.9) MB, pooled: 0 MB, 12.34 / 0.00 ms ..."
  const mc = ours.map((l) => /Mark-Compact[^\d]*([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB,(?: pooled: [\d.]+ MB,)? ([\d.]+) \/ ([\d.]+) ms/.exec(l)).filter((m) => m !== null);
  const shown = process.env.GC_PRINT ? new RegExp(process.env.GC_PRINT) : null;
  if (shown) for (const l of trace.filter((x) => shown.test(x))) console.log('  ' + l.trim().slice(0, 300));
  const last = mc.at(-1);
  return {
    target: bare ? 'bare' : target,
    forced,
    majors: mc.length,
    scavenges: ours.filter((l) => l.includes('Scavenge')).length,
    otherIsolates: others,
    cpuMsPerReq: ((after - before) * 1000) / N,
    liveMb: last ? Number(last[3]) : NaN,
    heapMb: last ? Number(last[4]) : NaN,
    markMs: mc.reduce((s, m) => s + Number(m[5]), 0),
    errors: r.non2xx + r.errors,
  };
}

async function main() {
  const targets = process.argv.slice(2).map((t) => (t === 'bare' ? t : resolve(t)));
  if (targets.length === 0) throw new Error('usage: npx tsx bench/gc.ts <checkout|bare>…');
  for (const t of targets) if (t !== 'bare' && !existsSync(join(t, 'dist/bin.js'))) throw new Error(`${t}/dist/bin.js is missing: build that checkout first`);
  const scratch = mkdtempSync(join(tmpdir(), 'gw-gc-'));
  const [simPort] = await benchPorts(null, 1);
  const sim = spawn(process.execPath, [join(root, 'dist/sim/main.js')], { env: { ...process.env, SIM_PORT: String(simPort) }, stdio: 'ignore' });
  kids.add(sim);
  await waitUpOrExit(`http://127.0.0.1:${simPort}/_sim/health`, sim);
  const config = writeGatewayConfig(scratch, `http://127.0.0.1:${simPort}/v1`);
  console.log(`${WORK} body: ${N} counted after ${WARM} warm-up, 16 connections; flags: ${FLAGS.join(' ') || '(none)'}; scratch ${scratch}`);
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const r = await measure(t, simPort, config, scratch);
      console.log(
        `${r.target}: ${r.majors} mark-compact, ${r.scavenges} scavenges / ${N} req; CPU ${r.cpuMsPerReq.toFixed(2)} ms/req; live heap after the last mark-compact ${r.liveMb} MB (of ${r.heapMb}); mark-compact pauses ${r.markMs.toFixed(1)} ms; ${r.errors} errors${r.otherIsolates ? ` (main thread only; ${r.otherIsolates} trace lines of other threads left out)` : ''}`,
      );
      if (r.forced) console.log(`  forced full collections: ${r.forced}`);
    }
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
