/**
 * Observability test harness: the simulator, a gateway over the chat and embeddings test catalogs with a movable
 * clock and a seeded sampling rng, and a search of the whole database for a string.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { stringify } from 'yaml';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { simCatalog } from '../chat-helpers.js';
import { embeddingCatalog } from '../embeddings/util.js';
import { createInferenceKey, startGateway, type Backend, type TestGateway } from '../helpers.js';
import type { CreateGatewayOptions } from '../../src/gateway.js';

export interface ObserveEnv {
  sim: Simulator;
  t: TestGateway;
  key: string;
  keyHash: string;
  advance(ms: number): void;
  close(): Promise<void>;
}

/** A seeded PRNG (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function startObserveEnv(backend: Backend, opts: { env?: Record<string, string>; gateway?: CreateGatewayOptions } = {}): Promise<ObserveEnv> {
  const sim = await createSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'gw-observe-'));
  const file = join(dir, 'gateway.yaml');
  const emb = embeddingCatalog(sim.url);
  writeFileSync(file, stringify(simCatalog(sim.url, { providers: emb.providers, models: emb.models, endpoints: emb.endpoints })));
  let skew = 0;
  const t = await startGateway(backend, {
    env: { GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false', ...opts.env },
    gateway: { now: () => Date.now() + skew, ...opts.gateway },
  });
  const { key, hash } = await createInferenceKey(t, { name: 'observe-tests' });
  return {
    sim,
    t,
    key,
    keyHash: hash,
    advance: (ms) => {
      skew += ms;
    },
    close: async () => {
      await t.close();
      await sim.close();
    },
  };
}

/**
 * Where `marker` appears in the database: SQLite — the bytes of the database file and its WAL; PostgreSQL — every
 * row of every table of the public schema, as text. Returns the places found (empty: nowhere).
 */
export async function findInDatabase(t: TestGateway, marker: string): Promise<string[]> {
  if (t.databaseUrl.startsWith('sqlite:')) {
    const path = t.databaseUrl.slice('sqlite:'.length);
    const dir = dirname(path);
    const found: string[] = [];
    for (const f of readdirSync(dir)) {
      if (f.startsWith('gateway.db') && readFileSync(join(dir, f)).includes(Buffer.from(marker))) found.push(f);
    }
    return found;
  }
  const c = new pg.Client({ connectionString: t.databaseUrl });
  await c.connect();
  try {
    const tables = await c.query<{ table_name: string }>("select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'");
    const found: string[] = [];
    for (const { table_name } of tables.rows) {
      const r = await c.query(`select count(*)::int as n from "${table_name}" x where x::text like $1`, [`%${marker}%`]);
      if (r.rows[0].n > 0) found.push(table_name);
    }
    return found;
  } finally {
    await c.end();
  }
}
