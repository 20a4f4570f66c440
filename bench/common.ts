/** Helpers shared by the benchmark scripts (run.ts, pair.ts, instructions.ts). */
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { request } from 'undici';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitUp(url: string, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await request(url, { method: 'GET' });
      await r.body.dump();
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`not up: ${url}`);
}

/**
 * Like waitUp, for a process started to answer at `url`: fails at once when it exits first (e.g. its port was taken),
 * instead of waiting out the time limit — or finding another process's server on that port.
 */
export async function waitUpOrExit(url: string, proc: ChildProcess, ms = 90_000): Promise<void> {
  let onExit: ((code: number | null, signal: NodeJS.Signals | null) => void) | undefined;
  const exited = new Promise<never>((_, reject) => {
    onExit = (code, signal) => reject(new Error(`${url}: the process exited (${signal ?? `code ${code}`}) before answering; was its port taken?`));
    if (proc.exitCode !== null || proc.signalCode !== null) onExit(proc.exitCode, proc.signalCode);
    else proc.once('exit', onExit);
  });
  try {
    await Promise.race([waitUp(url, ms), exited]);
  } finally {
    proc.off('exit', onExit!);
  }
}

/** Listens on `port` (0: any free one) on 127.0.0.1; rejects with a message naming the port when it is taken. */
function hold(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`port ${port} is taken (another run?): give a free base port, or none to have free ports picked`) : err),
    );
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/**
 * `count` ports for a benchmark's processes: `base`, base + 201, base + 202, … when a base is given (each checked
 * free: a taken one is an error, not a silent collision with another run), else ports the system reports free.
 */
export async function benchPorts(base: number | null, count: number): Promise<number[]> {
  const wanted = Array.from({ length: count }, (_, i) => (base === null ? 0 : i === 0 ? base : base + 200 + i));
  const held: Server[] = [];
  try {
    // Held together, so that the free ones picked are distinct.
    for (const p of wanted) held.push(await hold(p));
    return held.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  }
}

/** CPU seconds (user + system) and peak RSS (MB) of a process, from /proc. */
export function procStats(pid: number): { cpu: number; hwmMb: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = 100;
  const cpu = (Number(f[11]) + Number(f[12])) / ticks;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { cpu, hwmMb: kb('VmHWM') / 1024, rssMb: kb('VmRSS') / 1024 };
}

/**
 * Read and write system calls a process (all its threads) has made so far, from /proc/PID/io (`syscr`, `syscw`):
 * libuv reads a socket with one read(2) per arrival and writes with write(2)/writev(2), so the difference over a
 * phase counts the socket reads and writes (plus a few of files: the SQLite writer's, the log's).
 */
export function procIo(pid: number): { reads: number; writes: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const n = (k: string) => Number(new RegExp(`^${k}: (\\d+)`, 'm').exec(io)?.[1] ?? NaN);
  return { reads: n('syscr'), writes: n('syscw') };
}

/**
 * An event stream cut into reads of `k` events each (ending at a blank line), copies as a socket read gives them: the
 * reads of a paced upstream (the simulator's `burstChunks`) for the in-process benchmarks (relay.ts, translate.ts).
 */
export function eventReads(all: Buffer, k: number): Buffer[] {
  const reads: Buffer[] = [];
  let start = 0;
  let at = 0;
  for (let n = 0; ; ) {
    const end = all.indexOf('\n\n', at);
    if (end === -1) break;
    at = end + 2;
    if (++n % k === 0) {
      reads.push(Buffer.from(all.subarray(start, at)));
      start = at;
    }
  }
  if (start < all.length) reads.push(Buffer.from(all.subarray(start)));
  return reads;
}

/**
 * The bare pass-through proxy of ../shared/bench copied where this checkout's node_modules (undici) resolves; returns
 * the copy's path. ../shared from a checkout beside it, ../../shared from a worktree one level deeper (BENCH_SHARED
 * overrides).
 */
export function vendorBareProxy(root: string): string {
  const shared = [process.env.BENCH_SHARED ?? '', resolve(root, '../shared/bench/bare-proxy.mjs'), resolve(root, '../../shared/bench/bare-proxy.mjs')].find((f) => f && existsSync(f));
  if (!shared) throw new Error('bare-proxy.mjs of ../shared/bench not found (BENCH_SHARED)');
  const vendor = join(root, 'node_modules/.cache/gw-bench');
  mkdirSync(vendor, { recursive: true });
  copyFileSync(shared, join(vendor, 'bare-proxy.mjs'));
  return join(vendor, 'bare-proxy.mjs');
}

/**
 * A gateway config file routing `bench/model` to the simulator at `simBase` (…/v1) as an OpenAI-compatible upstream,
 * `bench/claude` as an Anthropic one, `bench/responses` as a Responses one and `bench/gemini` as a Google (Gemini API)
 * one (the simulator serves it at /v1beta); returns its path.
 */
export function writeGatewayConfig(dir: string, simBase: string): string {
  const file = join(dir, 'gateway.yaml');
  writeFileSync(
    file,
    [
      'providers:',
      `  - { slug: sim, name: Simulator, protocol: openai, base_url: "${simBase}", no_auth: true }`,
      `  - { slug: sim-anthropic, name: Simulator (Anthropic), protocol: anthropic, base_url: "${simBase}", no_auth: true }`,
      `  - { slug: sim-responses, name: Simulator (Responses), protocol: openai-responses, base_url: "${simBase}", no_auth: true }`,
      `  - { slug: sim-google, name: Simulator (Gemini API), protocol: google, base_url: "${simBase.replace(/\/v1$/, '/v1beta')}", no_auth: true }`,
      'models:',
      '  - { id: bench/model, name: Bench model, context_length: 4000000 }',
      '  - { id: bench/claude, name: Bench model (Messages API upstream), context_length: 4000000 }',
      '  - { id: bench/responses, name: Bench model (Responses API upstream), context_length: 4000000 }',
      '  - { id: bench/gemini, name: Bench model (Gemini API upstream), context_length: 4000000 }',
      'endpoints:',
      '  - { model: bench/model, provider: sim, upstream_model: bench-model, pricing: { prompt: "0.000001", completion: "0.000002" } }',
      '  - { model: bench/claude, provider: sim-anthropic, upstream_model: bench-model, pricing: { prompt: "0.000001", completion: "0.000002" } }',
      '  - { model: bench/responses, provider: sim-responses, upstream_model: bench-model, pricing: { prompt: "0.000001", completion: "0.000002" } }',
      '  - { model: bench/gemini, provider: sim-google, upstream_model: bench-model, pricing: { prompt: "0.000001", completion: "0.000002" } }',
    ].join('\n'),
  );
  return file;
}
