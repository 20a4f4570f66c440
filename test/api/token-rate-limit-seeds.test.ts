/**
 * Token rate limits when a minute's counter is lost mid-minute (docs/spend.md, "Token rate limits"): the counter is
 * seeded again from what the minute already used — the tokens settled per key and minute, kept in the store with the
 * records (key_tokens_minute), plus what the instance has not written yet — so the minute's total stays within the
 * limit. Before, a new counter started at 0: a restarted single instance, or two instances whose Redis lost its data,
 * let the key use its tokens per minute again in the same minute.
 * Sizes: `hello there` with max_tokens 12 reserves 39 tokens and uses 18. A limit of 195 (5 reservations): 9 requests
 * one after the other use 162 (the 10th would need 162 + 39 > 195), leaving no room for another reservation; a
 * counter started at 0 would admit 5 more (252 used in the minute).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { simCatalog } from '../chat-helpers.js';
import { freePort, startRedis, stopRedis } from '../redis-server.js';
import { createInferenceKey, freshDatabase, startGateway, startTwoInstances, type TestGateway } from '../helpers.js';
import { expectStatus } from './util.js';

const RESERVED = 39;
const USED = 18;
const TPM = 5 * RESERVED;
const FILL = 9; // requests that fit one after the other: 9 × 18 = 162, and 162 + 39 > 195
const body = { model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12, provider: { only: ['sim-a'] } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const minuteNow = () => Math.floor(Date.now() / 60_000);

/** Waits for a fresh clock minute when the current one ends within `ms` (the counters are per clock minute). */
async function roomInMinute(ms: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < ms) await sleep(left + 50);
}

/**
 * Runs `run` within one clock minute (waiting for one with 45 s left first); a run that crossed into the next minute
 * proves nothing (a new minute has new room): tried again, up to three times.
 */
async function inOneMinute(run: () => Promise<() => void>): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await roomInMinute(45_000);
    const minute = minuteNow();
    const check = await run();
    if (minuteNow() === minute) return check();
    console.log('token rate limit seeds: the run crossed a clock minute; again');
  }
  throw new Error('no run fitted in one clock minute');
}

/** The 200s among `n` concurrent requests spread over `instances`, round robin from `keys`. */
async function burst(instances: TestGateway[], keys: string[], n: number): Promise<{ ok: number; statuses: number[] }> {
  const replies = await Promise.all(Array.from({ length: n }, (_, i) => instances[i % instances.length].call('POST', '/chat/completions', { key: keys[i % keys.length], body })));
  const statuses = replies.map((r) => r.status);
  return { ok: statuses.filter((s) => s === 200).length, statuses };
}

/** Fills the minute: FILL requests one after the other (all admitted), over the instances and keys in turn. */
async function fill(instances: TestGateway[], keys: string[]): Promise<void> {
  for (let i = 0; i < FILL; i++) {
    const r = await instances[i % instances.length].call('POST', '/chat/completions', { key: keys[i % keys.length], body });
    expectStatus(r, 200);
  }
}

/** Tokens the keys settled in the current minute, as the store holds them once every instance wrote its records. */
async function storedTokens(instances: TestGateway[], hashes: string[], minute: number): Promise<number> {
  await Promise.all(instances.map((t) => t.gw.svc.recorder.flush()));
  return instances[0].gw.svc.store.keyTokensInMinute(hashes, minute);
}

describe('token rate limits survive a lost counter mid-minute', () => {
  let sim: Simulator;
  let file: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    sim = await createSimulator();
    file = join(mkdtempSync(join(tmpdir(), 'gw-tpmseed-')), 'gateway.yaml');
    writeFileSync(file, stringify(simCatalog(sim.url)));
    env = { GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false' };
  });
  afterAll(async () => sim?.close());

  it('one instance (SQLite) restarted mid-minute: the key limit and a workspace guardrail limit stay within the minute', { timeout: 240_000 }, async () => {
    const db = await freshDatabase('sqlite');
    let t = await startGateway('sqlite', { databaseUrl: db.url, env });
    try {
      // The key's own limit.
      await inOneMinute(async () => {
        const k = await createInferenceKey(t, { name: 'tpm-restart', rate_limit: { tokens_per_minute: TPM } });
        const minute = minuteNow();
        await fill([t], [k.key]);
        await t.stop();
        t = await startGateway('sqlite', { databaseUrl: db.url, env });
        const after = await burst([t], [k.key], 5);
        const stored = await storedTokens([t], [k.hash], minute);
        return () => {
          expect(after.statuses).toEqual([429, 429, 429, 429, 429]);
          expect(stored).toBe(FILL * USED);
          expect(stored).toBeLessThanOrEqual(TPM);
        };
      });
      // A workspace's default guardrail: one limit for every key of the workspace.
      await inOneMinute(async () => {
        const ws = (await t.call('POST', '/workspaces', { body: { name: 'Seeds', slug: `seeds-${Date.now()}` } })).body.data;
        expectStatus(await t.call('PATCH', `/guardrails/${ws.default_guardrail_id}`, { body: { rate_limit: { tokens_per_minute: TPM } } }), 200);
        const keys = [await createInferenceKey(t, { name: 'w1', workspace_id: ws.id }), await createInferenceKey(t, { name: 'w2', workspace_id: ws.id })];
        const minute = minuteNow();
        await fill([t], keys.map((k) => k.key));
        await t.stop();
        t = await startGateway('sqlite', { databaseUrl: db.url, env });
        const after = await burst([t], keys.map((k) => k.key), 6);
        const stored = await storedTokens([t], keys.map((k) => k.hash), minute);
        return () => {
          expect(after.statuses).toEqual([429, 429, 429, 429, 429, 429]);
          expect(stored).toBe(FILL * USED);
        };
      });
    } finally {
      await t.stop();
      await db.drop();
    }
  });

  it('two instances (PostgreSQL + Redis), Redis emptied mid-minute: the minute stays within the limit', { timeout: 240_000 }, async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    // Records are written only when the test flushes: the first key's tokens are still in the instance's memory when
    // Redis loses its counter; the second key's are written (in the store) before.
    const { a, b, close } = await startTwoInstances({ ...env, GATEWAY_REDIS_URL: `redis://127.0.0.1:${port}`, GATEWAY_RECORD_FLUSH_MS: '60000' });
    /** Asks `t` until it answers something other than 503 (each instance reconnects within half a second). */
    const firstAnswer = async (t: TestGateway, key: string): Promise<number> => {
      let status = 503;
      for (let i = 0; i < 50 && status === 503; i++) {
        if (i > 0) await sleep(100);
        status = (await t.call('POST', '/chat/completions', { key, body })).status;
      }
      return status;
    };
    try {
      await inOneMinute(async () => {
        const unwritten = await createInferenceKey(a, { name: 'tpm-redis-lost-1', rate_limit: { tokens_per_minute: TPM } });
        const written = await createInferenceKey(a, { name: 'tpm-redis-lost-2', rate_limit: { tokens_per_minute: TPM } });
        const minute = minuteNow();
        // The minute filled on one instance (sequential requests on two instances can be refused one request early,
        // while the other's lease holds a part of the room).
        await fill([a], [unwritten.key]);
        await fill([a], [written.key]);
        await a.gw.svc.recorder.flush();
        // Redis restarted without its data (no persistence): every counter, hold and heartbeat gone.
        await stopRedis(redis);
        redis = await startRedis(port);
        // Seeded by the instance that holds the tokens unwritten, and by the other one from the store.
        const firstUnwritten = await firstAnswer(a, unwritten.key);
        const firstWritten = await firstAnswer(b, written.key);
        const after = await burst([a, b], [unwritten.key, written.key], 8);
        const stored = [await storedTokens([a, b], [unwritten.hash], minute), await storedTokens([a, b], [written.hash], minute)];
        return () => {
          expect([firstUnwritten, firstWritten]).toEqual([429, 429]);
          expect(after.statuses).toEqual(Array(8).fill(429));
          expect(stored).toEqual([FILL * USED, FILL * USED]);
        };
      });
    } finally {
      await close();
      await stopRedis(redis);
    }
  });
  it('the store cannot be read: a minute\'s seed answers 503 (backed off), for the key\'s limit and a workspace guardrail\'s, until it can', { timeout: 60_000 }, async () => {
    const db = await freshDatabase('sqlite');
    const t = await startGateway('sqlite', { databaseUrl: db.url, env });
    try {
      await roomInMinute(20_000);
      const ws = (await t.call('POST', '/workspaces', { body: { name: 'Seeds down', slug: `seeds-down-${Date.now()}` } })).body.data;
      expectStatus(await t.call('PATCH', `/guardrails/${ws.default_guardrail_id}`, { body: { rate_limit: { tokens_per_minute: TPM } } }), 200);
      const [w1, w2] = [await createInferenceKey(t, { name: 'd1', workspace_id: ws.id }), await createInferenceKey(t, { name: 'd2', workspace_id: ws.id })];
      const own = await createInferenceKey(t, { name: 'd3', rate_limit: { tokens_per_minute: TPM } });
      // The key list is read, the tokens are not (before: the minute started from this key's unwritten tokens alone).
      const store = t.gw.svc.store;
      store.keyTokensInMinute = async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      };
      for (const k of [w1, w2, own]) {
        const r = await t.call('POST', '/chat/completions', { key: k.key, body });
        expectStatus(r, 503);
        expect(r.body.error.metadata).toMatchObject({ error_type: 'spend_unavailable' });
      }
      delete (store as { keyTokensInMinute?: unknown }).keyTokensInMinute;
      // Served again once the store answers, within the seed's back-off (at most 5 s).
      for (const k of [w1, own]) {
        let status = 503;
        for (let i = 0; i < 60 && status === 503; i++) {
          if (i > 0) await sleep(100);
          status = (await t.call('POST', '/chat/completions', { key: k.key, body })).status;
        }
        expect(status).toBe(200);
      }
    } finally {
      await t.stop();
      await db.drop();
    }
  });
});
