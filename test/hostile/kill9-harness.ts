/**
 * The kill -9 loss window (issue 16 item 6): a gateway in a child process (`tsx src/bin.ts serve`) on a fresh SQLite
 * or PostgreSQL database, plain chat load from `concurrency` clients against the simulator, then SIGKILL. Every 200
 * answer's generation id and the time its client had it are kept; after the kill the database says which records were
 * written. Used by test/hostile/kill9.test.ts (the bound) and bench/kill9.ts (the trade-off, `npm run kill9:measure`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { stringify } from 'yaml';
import { createSimulator } from '../../src/sim/index.js';
import { openStore } from '../../src/store/sql-store.js';
import { simCatalog } from '../chat-helpers.js';
import { ADMIN_KEY, freshDatabase, type Backend } from '../helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Kill9Result {
  backend: Backend;
  flushMs: number;
  /** 200 answers the clients had before the kill. */
  answered: number;
  /** Of those, the records not in the database after the kill. */
  lost: number;
  /** How long before the kill the oldest lost answer was received (ms); 0 when none was lost. */
  windowMs: number;
  /** The gateway's CPU time per answered request during the load (µs). */
  cpuUsPerRequest: number;
  /** Transactions committed in the gateway's database per second of load (PostgreSQL; null on SQLite). */
  commitsPerSecond: number | null;
  /** Bytes the gateway process wrote to storage per request (SQLite: its writer thread's WAL writes; null on PostgreSQL). */
  bytesWrittenPerRequest: number | null;
  loadMs: number;
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** utime + stime of a process, in ms (/proc/<pid>/stat, 100 ticks a second). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Bytes a process caused to be written to storage (/proc/<pid>/io `write_bytes`; 0 where the kernel hides it). */
function writeBytes(pid: number): number {
  try {
    const m = /^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

async function commits(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ n: string }>('select xact_commit as n from pg_stat_database where datname = current_database()');
    return Number(r.rows[0].n);
  } finally {
    await c.end();
  }
}

async function waitReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`gateway exited (${child.exitCode}): ${log()}`);
    try {
      if ((await fetch(`${url}/ready`)).status === 200) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gateway not ready: ${log()}`);
}

export async function runKill9(opts: { backend: Backend; flushMs: number; concurrency: number; loadMs: number }): Promise<Kill9Result> {
  const sim = await createSimulator({ logLimit: 0 });
  const db = await freshDatabase(opts.backend);
  const dir = mkdtempSync(join(tmpdir(), 'gw-kill9-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, stringify(simCatalog(sim.url)));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/bin.ts'), 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      GATEWAY_DATABASE_URL: db.url,
      GATEWAY_ADMIN_KEY: ADMIN_KEY,
      GATEWAY_CONFIG: file,
      GATEWAY_DEFAULT_CATALOG: 'false',
      GATEWAY_LOG_LEVEL: 'warn',
      GATEWAY_RECORD_FLUSH_MS: String(opts.flushMs),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (b: Buffer) => void (output = (output + b.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  try {
    await waitReady(url, child, () => output);
    const created = await fetch(`${url}/api/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'kill9' }) });
    const key = ((await created.json()) as { key: string }).key;
    const answers: Array<{ id: string; at: number }> = [];
    let stop = false;
    const client = async () => {
      while (!stop) {
        try {
          const res = await fetch(`${url}/api/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'test/alpha', messages: [{ role: 'user', content: 'hi' }] }),
          });
          await res.arrayBuffer();
          const id = res.headers.get('x-generation-id');
          if (res.status === 200 && id && !stop) answers.push({ id, at: performance.now() });
        } catch {
          return; // the gateway is gone
        }
      }
    };
    // Warm up (first requests compile and fill caches), then measure from a clean slate.
    for (let i = 0; i < 20; i++) await fetch(`${url}/api/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/alpha', messages: [{ role: 'user', content: 'warm' }] }) }).then((r) => r.arrayBuffer());
    await new Promise((r) => setTimeout(r, opts.flushMs + 200));
    const cpu0 = cpuMs(child.pid!);
    const io0 = writeBytes(child.pid!);
    const commits0 = opts.backend === 'postgres' ? await commits(db.url) : 0;
    const t0 = performance.now();
    const clients = Array.from({ length: opts.concurrency }, client);
    await new Promise((r) => setTimeout(r, opts.loadMs));
    const cpu1 = cpuMs(child.pid!);
    const io1 = writeBytes(child.pid!);
    const commits1 = opts.backend === 'postgres' ? await commits(db.url) : 0;
    const killedAt = performance.now();
    child.kill('SIGKILL');
    stop = true;
    await Promise.all(clients);
    await new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));
    const loadMs = killedAt - t0;

    const store = openStore(db.url);
    let lostOldest = Infinity;
    let lost = 0;
    try {
      for (const a of answers) {
        if ((await store.getGeneration(a.id)) === null) {
          lost++;
          lostOldest = Math.min(lostOldest, a.at);
        }
      }
    } finally {
      await store.close();
    }
    return {
      backend: opts.backend,
      flushMs: opts.flushMs,
      answered: answers.length,
      lost,
      windowMs: lost === 0 ? 0 : Math.round(killedAt - lostOldest),
      cpuUsPerRequest: answers.length === 0 ? 0 : Math.round(((cpu1 - cpu0) * 1000) / answers.length),
      commitsPerSecond: opts.backend === 'postgres' ? Math.round(((commits1 - commits0) * 1000) / loadMs) : null,
      bytesWrittenPerRequest: opts.backend === 'sqlite' && answers.length > 0 ? Math.round((io1 - io0) / answers.length) : null,
      loadMs: Math.round(loadMs),
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await sim.close();
    await db.drop();
  }
}
