/**
 * Makes sure PostgreSQL and Redis run on this machine before any test (starting them with the machine's commands
 * when they are down). PostgreSQL suites must run for real: when the server cannot be reached, the run fails.
 */
import { execSync } from 'node:child_process';
import pg from 'pg';
import { Redis } from 'ioredis';

export const PG_URL = process.env.GATEWAY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function pgUp(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function redisUp(): Promise<boolean> {
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

function sh(cmd: string): void {
  try {
    execSync(cmd, { stdio: 'inherit', timeout: 60_000 });
  } catch (err) {
    process.stderr.write(`global-setup: "${cmd}" failed: ${(err as Error).message}\n`);
  }
}

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return check();
}

export default async function setup(): Promise<void> {
  if (!(await pgUp())) {
    sh('pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start');
    if (!(await waitFor(pgUp, 30_000))) throw new Error(`PostgreSQL is not reachable at ${PG_URL}; the PostgreSQL suites cannot run`);
  }
  if (!(await redisUp())) {
    sh('redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no');
    if (!(await waitFor(redisUp, 15_000))) throw new Error(`Redis is not reachable at ${REDIS_URL}`);
  }
}
