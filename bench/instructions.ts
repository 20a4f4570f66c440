/**
 * `npm run bench:instructions -- <A> <B>`: two builds of the gateway compared by the CPU instructions they execute per
 * request, counted by valgrind's callgrind — a reading that does not move with the machine's load (bench:pair's CPU
 * time does, by ±15 % on a shared 2-core VM). Each gateway runs under callgrind with counting off, takes
 * 2 × INSTR_REQUESTS warm-up requests, then counts exactly INSTR_REQUESTS requests (16 connections). Counted: every
 * thread of the process (V8's compiler and GC threads included), so the figure is also printed without the optimizing
 * compiler's instructions (still warming up after a few thousand requests under callgrind, and more code to compile
 * is not a per-request cost).
 *
 * Needs `valgrind` and `callgrind_annotate` (Debian: `apt-get install valgrind`). A and B are checkouts with `dist/`
 * built (see bench/pair.ts). Env: INSTR_REQUESTS (default 1500), INSTR_STREAM=1 (streamed requests), INSTR_WORK (the
 * body: small, 1mb, turns, messages-api, responses-api, non-ascii, gemini, gemini-turns; see workRequest), INSTR_PORT (the simulator's port; the
 * gateways take + 201 and + 202; a taken one is an error; default: free ports picked, so runs at once do not
 * collide), INSTR_ENV_B and INSTR_KEY_B (as PAIR_ENV_B and PAIR_KEY_B in
 * bench/pair.ts: environment variables and the key body of B only), INSTR_KEY_A (the key body of A, e.g. to give
 * both sides a spending limit).
 *
 * `npm run bench:spend:instructions` is bench:spend's comparison counted this way: one build against itself, A a single
 * instance on SQLite with a key without limits, B with Redis and a key with a spending limit.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { request } from 'undici';
import { benchPorts, waitUpOrExit, writeGatewayConfig } from './common.js';
import { readCounts, table, topDiff } from './instr-groups.js';
import { geminiSizedBody, NON_ASCII, sizedBody } from './works.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const N = Math.max(100, Number(process.env.INSTR_REQUESTS ?? 1500));
/** INSTR_WARMUP: warm-up requests before the counted ones (default 2 × INSTR_REQUESTS). */
const WARMUP = Math.max(0, Number(process.env.INSTR_WARMUP ?? 2 * N));
/** INSTR_GC=1: two full collections (node --expose-gc, bench/instr-preload.cjs) just before counting starts. */
const FORCE_GC = process.env.INSTR_GC === '1';
/** INSTR_NODE_FLAGS: node flags for both gateways, e.g. `--perf-basic-prof` (bench/instr-groups.ts then names JIT code). */
const NODE_FLAGS = (process.env.INSTR_NODE_FLAGS ?? '').split(' ').filter(Boolean);
/** INSTR_SEQ=1: A is measured, then B (default: both at once). */
const SEQUENTIAL = process.env.INSTR_SEQ === '1';
const STREAM = process.env.INSTR_STREAM === '1';
const ADMIN = 'sk-gw-v1-' + 'c'.repeat(64);
/** INSTR_PORT: the base port (the simulator's; the gateways take + 201 and + 202); unset: free ports. */
const BASE_PORT = process.env.INSTR_PORT ? Number(process.env.INSTR_PORT) : null;
// valgrind names its control pipes after HOST; the controller must see the same value.
const HOST = '127.0.0.1';

const kids = new Set<ChildProcess>();
process.on('exit', () => kids.forEach((k) => k.kill('SIGKILL')));

function start(cmd: string, args: string[], env: Record<string, string>): ChildProcess {
  const k = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: 'ignore' });
  kids.add(k);
  return k;
}

/**
 * INSTR_WORK: the request body — `small` (default: one short chat message), `1mb` (one 1 MB chat message), `turns`
 * (1,000 chat messages, ~1 MB), `messages-api` and `responses-api` (the same 1,000 turns to the Messages and the
 * Responses API, each to an upstream of its own protocol), `non-ascii` (one 1 MB chat message of CJK and emoji text),
 * `gemini` and `gemini-turns` (a 1 MB Gemini generateContent body, one part or 1,001 contents, to a Google upstream;
 * not streamed). Large bodies are slow under callgrind: use INSTR_REQUESTS=100.
 */
const WORK = process.env.INSTR_WORK ?? 'small';

function workRequest(): { path: string; body: string } {
  const turns = (bytes: number, n: number) => {
    const per = Math.max(1, Math.floor(bytes / n) - 40);
    const text = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(per / 27)).slice(0, per);
    return Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 || i === n - 1 ? 'user' : 'assistant', content: text }));
  };
  const chat = (messages: unknown[]) => ({ path: '/api/v1/chat/completions', body: JSON.stringify({ model: 'bench/model', messages, stream: STREAM }) });
  if (WORK === '1mb') return chat(turns(1 << 20, 1));
  if (WORK === 'turns') return chat(turns(1 << 20, 1000));
  if (WORK === 'messages-api') return { path: '/api/v1/messages', body: JSON.stringify({ model: 'bench/claude', max_tokens: 64, messages: turns(1 << 20, 1000), stream: STREAM }) };
  if (WORK === 'responses-api') return { path: '/api/v1/responses', body: JSON.stringify({ model: 'bench/responses', input: turns(1 << 20, 1000), stream: STREAM }) };
  if (WORK === 'non-ascii') return { path: '/api/v1/chat/completions', body: sizedBody('bench/model', 1 << 20, 1, STREAM, 'chat', NON_ASCII) };
  // Gemini (bench/gemini → a Google upstream): the model in the path, no stream field (streamGenerateContent is another method).
  if (WORK === 'gemini') return { path: `/api/v1beta/models/${encodeURIComponent('bench/gemini')}:generateContent`, body: geminiSizedBody(1 << 20, 1) };
  if (WORK === 'gemini-turns') return { path: `/api/v1beta/models/${encodeURIComponent('bench/gemini')}:generateContent`, body: geminiSizedBody(1 << 20, 1001) };
  return chat([{ role: 'user', content: 'hello' }]);
}
const REQUEST = workRequest();

function load(url: string, key: string, amount: number): Promise<autocannon.Result> {
  const body = REQUEST.body;
  return new Promise((res, rej) =>
    autocannon(
      { url, method: 'POST', connections: 16, amount, timeout: 120, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body },
      (e, r) => (e ? rej(e) : res(r)),
    ),
  );
}

/** Instructions of the counted requests: all, and without the optimizing compiler's. */
function instructions(outDir: string): { total: number; withoutCompiler: number } {
  let total = 0;
  let compiler = 0;
  for (const f of readdirSync(outDir).filter((x) => x.startsWith('cg.out'))) {
    const text = readFileSync(join(outDir, f), 'utf8');
    const m = /^summary: (\d+)/m.exec(text);
    if (!m || Number(m[1]) === 0) continue;
    total += Number(m[1]);
    const annotated = execFileSync('callgrind_annotate', ['--threshold=100', join(outDir, f)], { maxBuffer: 256 << 20 }).toString();
    for (const line of annotated.split('\n')) {
      const hit = /^\s*([\d,]+) \(.*(compiler::|turboshaft|maglev)/i.exec(line);
      if (hit) compiler += Number(hit[1].replace(/,/g, ''));
    }
  }
  return { total, withoutCompiler: total - compiler };
}

async function measure(dir: string, port: number, config: string, scratch: string, extraEnv: Record<string, string> = {}, keyBody: Record<string, unknown> = {}): Promise<{ total: number; withoutCompiler: number; errors: number; outDir: string }> {
  const outDir = mkdtempSync(join(scratch, 'cg-'));
  const prefix = `--vgdb-prefix=${join(outDir, 'vgdb')}`;
  const nodeArgs = [...(FORCE_GC ? ['--expose-gc', '--require', join(root, 'bench/instr-preload.cjs')] : []), ...NODE_FLAGS];
  const vg = ['--tool=callgrind', '--instr-atstart=no', '--cache-sim=no', '--separate-threads=yes', prefix, `--callgrind-out-file=${join(outDir, 'cg.out.%p')}`];
  const gw = start('valgrind', [...vg, process.execPath, ...nodeArgs, join(dir, 'dist/bin.js'), 'serve'], {
    PORT: String(port),
    HOST,
    GATEWAY_DATABASE_URL: `sqlite:${join(scratch, `gw-${port}.db`)}`,
    GATEWAY_ADMIN_KEY: ADMIN,
    GATEWAY_CONFIG: config,
    GATEWAY_DEFAULT_CATALOG: 'false',
    GATEWAY_LOG_LEVEL: 'info',
    ...extraEnv,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUpOrExit(`${base}/health`, gw, 900_000);
  const res = await request(`${base}/api/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'instr', ...keyBody }) });
  const { key } = (await res.body.json()) as { key: string };
  const url = `${base}${REQUEST.path}`;
  for (let left = WARMUP; left > 0; left -= N) await load(url, key, Math.max(Math.min(N, left), 1));
  if (FORCE_GC) {
    gw.kill('SIGUSR2');
    await new Promise((r) => setTimeout(r, 3000));
  }
  const control = (cmd: string) => execFileSync('callgrind_control', [prefix, cmd, String(gw.pid)], { env: { ...process.env, HOST }, stdio: 'ignore' });
  control('--instr=on');
  const r = await load(url, key, N);
  control('--dump');
  gw.kill('SIGKILL');
  return { ...instructions(outDir), errors: r.non2xx + r.errors, outDir };
}

async function main() {
  const [a, b] = process.argv.slice(2).map((d) => resolve(d));
  if (!a || !b) throw new Error('usage: npm run bench:instructions -- <checkout A> <checkout B>');
  for (const d of [a, b]) if (!existsSync(join(d, 'dist/bin.js'))) throw new Error(`${d}/dist/bin.js is missing: build that checkout first`);
  const scratch = mkdtempSync(join(tmpdir(), 'gw-instr-'));
  if (BASE_PORT !== null && !(Number.isInteger(BASE_PORT) && BASE_PORT > 0 && BASE_PORT + 202 < 65536)) throw new Error(`INSTR_PORT=${process.env.INSTR_PORT}: not a port`);
  const [simPort, portA, portB] = await benchPorts(BASE_PORT, 3);
  const sim = start(process.execPath, [join(root, 'dist/sim/main.js')], { SIM_PORT: String(simPort) });
  await waitUpOrExit(`http://127.0.0.1:${simPort}/_sim/health`, sim);
  const config = writeGatewayConfig(scratch, `http://127.0.0.1:${simPort}/v1`);
  console.log(`A = ${a}\nB = ${b}\nports: simulator ${simPort}, A ${portA}, B ${portB}\n${STREAM ? 'streamed' : 'plain'} requests (${WORK} body): ${N} counted after ${WARMUP} warm-up, 16 connections`);
  const keyB = JSON.parse(process.env.INSTR_KEY_B ?? '{}') as Record<string, unknown>;
  const envB = Object.fromEntries((process.env.INSTR_ENV_B ?? '').split(',').filter((x) => x.includes('=')).map((x) => [x.slice(0, x.indexOf('=')).trim(), x.slice(x.indexOf('=') + 1)]));
  const keyA = JSON.parse(process.env.INSTR_KEY_A ?? '{}') as Record<string, unknown>;
  const runA = () => measure(a, portA, config, scratch, {}, keyA);
  const runB = () => measure(b, portB, config, scratch, envB, keyB);
  const [ra, rb] = SEQUENTIAL ? [await runA(), await runB()] : await Promise.all([runA(), runB()]);
  const k = (x: number) => `${(x / N / 1000).toFixed(0)} kIr/req`;
  console.log(`A ${k(ra.total)} (${k(ra.withoutCompiler)} without the compiler, ${ra.errors} errors)`);
  console.log(`B ${k(rb.total)} (${k(rb.withoutCompiler)} without the compiler, ${rb.errors} errors)`);
  console.log(`B/A instructions per request: ${(rb.total / ra.total).toFixed(3)} (${(rb.withoutCompiler / ra.withoutCompiler).toFixed(3)} without the compiler)`);
  if (process.env.INSTR_GROUPS === '1') {
    const ca = readCounts(ra.outDir);
    const cb = readCounts(rb.outDir);
    console.log(`\nper thread and group, thousands of instructions per request (dumps: ${ra.outDir}, ${rb.outDir}):\n${table(ca, cb, N)}`);
    console.log(`\nlargest differences by symbol:\n${topDiff(ca, cb, N, Number(process.env.INSTR_TOP ?? 30))}`);
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
