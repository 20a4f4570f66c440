/**
 * GATEWAY_WORKERS=2: the `serve` command as a process, a primary and two workers behind one port on PostgreSQL and
 * Redis. Requests go over fresh connections, which the primary hands to the workers in turn, so consecutive requests
 * reach both. A disabled key is refused by both at once, a spending limit holds across them, /metrics counts both,
 * and SIGTERM lets in-flight streams finish and writes every record before the processes exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { simCatalog } from '../chat-helpers.js';
import { ADMIN_KEY, freshDatabase, REDIS_URL } from '../helpers.js';

interface Reply {
  status: number;
  body: any;
  text: string;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('two workers behind one port (GATEWAY_WORKERS=2)', () => {
  let sim: Simulator;
  let db: { url: string; drop: () => Promise<void> };
  let child: ChildProcess;
  let port: number;
  let exited: Promise<number | null>;
  let logs = '';

  /** One request on a connection of its own (no keep-alive): the primary hands each to the next worker. */
  const call = (method: string, path: string, key: string, body?: unknown): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request({ host: '127.0.0.1', port, method, path: `/api/v1${path}`, agent: false, headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* a stream or text */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  const chat = (key: string, extra: Record<string, unknown> = {}) =>
    call('POST', '/chat/completions', key, { model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, provider: { only: ['sim-a'] }, ...extra });
  const newKey = async (body: Record<string, unknown>) => {
    const r = await call('POST', '/keys', ADMIN_KEY, body);
    expect(r.status).toBe(201);
    return { key: r.body.key as string, hash: r.body.data.hash as string };
  };

  beforeAll(async () => {
    sim = await createSimulator();
    db = await freshDatabase('postgres');
    const dir = mkdtempSync(join(tmpdir(), 'gw-workers-'));
    writeFileSync(join(dir, 'gateway.yaml'), stringify(simCatalog(sim.url)));
    port = await freePort();
    child = spawn(process.execPath, ['--import', 'tsx', 'src/bin.ts', 'serve'], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        GATEWAY_WORKERS: '2',
        GATEWAY_DATABASE_URL: db.url,
        GATEWAY_REDIS_URL: REDIS_URL,
        GATEWAY_ADMIN_KEY: ADMIN_KEY,
        GATEWAY_CONFIG: join(dir, 'gateway.yaml'),
        GATEWAY_DEFAULT_CATALOG: 'false',
        GATEWAY_METRICS: 'public',
        GATEWAY_LOG_LEVEL: 'warn',
        // Records stay in the workers' memory (and their spend in Redis) until shutdown writes them.
        GATEWAY_RECORD_FLUSH_MS: '60000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (logs += d));
    child.stderr!.on('data', (d) => (logs += d));
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const until = Date.now() + 45_000;
    for (;;) {
      const ok = await call('GET', '/models', ADMIN_KEY).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (Date.now() > until || child.exitCode !== null) throw new Error(`the gateway did not start:\n${logs}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // Both workers listen once both answered /health in turn.
    for (let i = 0; i < 4; i++) expect((await call('GET', '/models', ADMIN_KEY)).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    await db?.drop();
    await sim?.close();
  });

  it('a key disabled through one worker is refused by both at once', async () => {
    const k = await newKey({ name: 'to-disable' });
    // Both workers cache the key.
    for (let i = 0; i < 4; i++) expect((await call('GET', '/key', k.key)).status).toBe(200);
    expect((await call('PATCH', `/keys/${k.hash}`, ADMIN_KEY, { disabled: true })).status).toBe(200);
    // The worker that did not serve the PATCH hears of it through Redis within milliseconds: polled (a fixed 50 ms
    // could end first on a loaded machine) until a round of calls spread over both workers is refused, up to 5 s —
    // well within the key cache's 30 s, which would serve the key without the invalidation.
    const refusedByAll = async () => (await Promise.all(Array.from({ length: 6 }, () => call('GET', '/key', k.key)))).map((r) => r.status);
    let after = await refusedByAll();
    for (const end = Date.now() + 5_000; after.some((s) => s !== 401) && Date.now() < end; after = await refusedByAll()) await new Promise((r) => setTimeout(r, 20));
    expect(after).toEqual(Array(6).fill(401));
  });

  it('a spending limit holds across the workers', async () => {
    // $0.00012; each request costs $0.00003 and reserves $0.000051 first (the prompt's byte bound + max_tokens 12; see
    // multi-instance.test.ts).
    const k = await newKey({ name: 'limited', limit: 0.00012 });
    // At most 3 fit ($0.00009 spent leaves less than a reservation); a worker's lease may keep some room the other
    // worker cannot use until it is returned, so 2 may be all that is admitted — never more than the limit allows.
    let served = 0;
    for (let i = 0; i < 5; i++) {
      const r = await chat(k.key);
      expect([200, 402], JSON.stringify(r.body)).toContain(r.status);
      if (r.status === 200) served++;
    }
    expect(served).toBeGreaterThanOrEqual(2);
    expect(served).toBeLessThanOrEqual(3);
    // Nothing written yet: neither worker has room for another.
    const refused = await Promise.all([chat(k.key), chat(k.key)]);
    expect(refused.map((r) => r.status)).toEqual([402, 402]);
  });

  it('/metrics sums the requests of both workers', async () => {
    const k = await newKey({ name: 'metrics' });
    const before = await call('GET', '/metrics', ADMIN_KEY);
    const count = (text: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('gateway_requests_total{') && l.includes('api="completions"') && l.includes('status="200"'))
        .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    for (let i = 0; i < 4; i++) expect((await chat(k.key)).status).toBe(200);
    const after = await call('GET', '/metrics', ADMIN_KEY);
    expect(count(after.text) - count(before.text)).toBe(4);
    expect(after.text).toMatch(/^gateway_redis_up 1$/m);
    expect(after.text).toMatch(/^gateway_workers 2$/m);
  });

  it('SIGTERM: streams in flight on both workers finish, every record is written, the processes exit 0', async () => {
    const k = await newKey({ name: 'drain' });
    sim.setKnobs('sim-a', { ttftMs: 200, chunkGapMs: 150, completionTokens: 8 });
    const streams = Array.from({ length: 6 }, () => chat(k.key, { stream: true }));
    // In flight upstream (each stream lasts ≈ 1.25 s): waited for, instead of a fixed 500 ms a loaded machine can
    // outlast before the requests even arrive (then SIGTERM finds nothing in flight, or refuses them).
    for (const end = Date.now() + 10_000; sim.stats('sim-a').inFlight < 6; ) {
      if (Date.now() > end) throw new Error(`only ${sim.stats('sim-a').inFlight} of 6 streams in flight upstream`);
      await new Promise((r) => setTimeout(r, 10));
    }
    child.kill('SIGTERM');
    const done = await Promise.all(streams);
    expect(done.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(done.every((r) => r.text.includes('data: [DONE]'))).toBe(true);
    expect(await exited).toBe(0);
    sim.resetKnobs('sim-a');
    // Written at shutdown (the flush interval is a minute): one record per stream.
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const { rows } = await c.query('select count(*)::int as n from generations where key_hash = $1', [k.hash]);
      expect(rows[0].n).toBe(6);
    } finally {
      await c.end();
    }
  }, 30_000);
});
