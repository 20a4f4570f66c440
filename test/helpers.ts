/**
 * Test harness: a real gateway on a random port, over SQLite (a temp file) or PostgreSQL (a fresh database per
 * gateway), with the bootstrap management key at hand.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig, type GatewayConfig } from '../src/config.js';
import { createGateway, type CreateGatewayOptions, type Gateway } from '../src/gateway.js';

export const PG_URL = process.env.GATEWAY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export type Backend = 'sqlite' | 'postgres';
export const BACKENDS: Backend[] = ['sqlite', 'postgres'];

export const ADMIN_KEY = 'sk-gw-v1-' + 'a'.repeat(64);

/** A fresh, empty database URL for the backend, and a function that drops it. */
export async function freshDatabase(backend: Backend): Promise<{ url: string; drop: () => Promise<void> }> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gw-test-'));
    return { url: `sqlite:${join(dir, 'gateway.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `gw_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export interface TestGateway {
  gw: Gateway;
  url: string;
  api: string;
  databaseUrl: string;
  adminKey: string;
  config: GatewayConfig;
  /** fetch against /api/v1 with a bearer key (JSON in and out). */
  call(method: string, path: string, opts?: { key?: string | null; body?: unknown; headers?: Record<string, string>; raw?: string }): Promise<{ status: number; body: any; headers: Headers }>;
  /** Stops the gateway (keeps the database). */
  stop(): Promise<void>;
  /** Stops the gateway and drops its database. */
  close(): Promise<void>;
}

export async function startGateway(
  backend: Backend,
  opts: { env?: Record<string, string>; databaseUrl?: string; gateway?: CreateGatewayOptions; dropDatabase?: () => Promise<void> } = {},
): Promise<TestGateway> {
  let databaseUrl = opts.databaseUrl;
  let drop = opts.dropDatabase ?? (async () => undefined);
  if (!databaseUrl) {
    const db = await freshDatabase(backend);
    databaseUrl = db.url;
    drop = db.drop;
  }
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_DATABASE_URL: databaseUrl,
    GATEWAY_ADMIN_KEY: ADMIN_KEY,
    GATEWAY_LOG_LEVEL: process.env.GATEWAY_TEST_LOG_LEVEL ?? 'silent',
    ...opts.env,
  });
  const gw = await createGateway(config, opts.gateway);
  const url = await gw.listen();
  const api = `${url}/api/v1`;
  const call: TestGateway['call'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? ADMIN_KEY : o.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = o.raw;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    if (o.raw !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(api + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await gw.close();
  };
  return { gw, url, api, databaseUrl, adminKey: ADMIN_KEY, config, call, stop, close: async () => (await stop(), await drop()) };
}

/** Creates an inference key through the API and returns its secret and hash. */
export async function createInferenceKey(t: TestGateway, body: Record<string, unknown> = { name: 'inference' }): Promise<{ key: string; hash: string; data: any }> {
  const res = await t.call('POST', '/keys', { body });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { key: res.body.key, hash: res.body.data.hash, data: res.body.data };
}

/** Two gateway instances on one fresh PostgreSQL database with Redis (behind one load balancer, say). */
export async function startTwoInstances(env: Record<string, string> = {}): Promise<{ a: TestGateway; b: TestGateway; close: () => Promise<void> }> {
  const db = await freshDatabase('postgres');
  const all = { GATEWAY_REDIS_URL: REDIS_URL, ...env };
  const a = await startGateway('postgres', { databaseUrl: db.url, env: all });
  const b = await startGateway('postgres', { databaseUrl: db.url, env: all });
  return {
    a,
    b,
    close: async () => {
      await a.stop();
      await b.stop();
      await db.drop();
    },
  };
}

/**
 * Resolves once each of `others` has heard every invalidation `from` published so far: a marker published now on
 * the same Redis connection reaches them after those (one publisher's messages arrive in order). For a change made
 * on one instance and then relied on at another, instead of a fixed sleep that a loaded machine can outlast.
 */
export async function invalidationsReached(from: TestGateway, others: TestGateway[], ms = 10_000): Promise<void> {
  const id = randomBytes(8).toString('hex');
  const heard = others.map((t) => new Promise<void>((resolve) => t.gw.svc.bus.subscribe((kind, got) => void (kind === 'test-marker' && got === id && resolve()))));
  from.gw.svc.bus.publish('test-marker', id);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`invalidations not heard by every instance within ${ms} ms`)), ms)));
  try {
    await Promise.race([Promise.all(heard), late]);
  } finally {
    clearTimeout(timer);
  }
}
