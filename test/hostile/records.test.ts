/**
 * Issue 16, finding 1: one request must never stop generation records. Unstorable strings (NUL, lone surrogates) are
 * refused at validation with a 400 naming the field, everywhere a string reaches the store; and a row the database
 * still refuses never blocks the others: the batch is written row by row and the refused row moves to
 * `generation_dead_letters` (counted in a metric), on SQLite and PostgreSQL.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { BACKENDS, freshDatabase } from '../helpers.js';
import { openStore } from '../../src/store/sql-store.js';
import { GenerationRecorder } from '../../src/services/generations.js';
import { GatewayMetrics } from '../../src/services/metrics.js';
import type { GenerationRow } from '../../src/store/types.js';

let n = 0;
function row(over: Partial<GenerationRow> = {}): GenerationRow {
  n++;
  return {
    id: `gen-dl-${n}-${Math.random().toString(36).slice(2)}`, request_id: `req-${n}`, key_hash: 'k'.repeat(64), workspace_id: 'ws', api_type: 'completions', requested_model: 'a/b',
    model: 'a/b', provider_name: 'sim', endpoint_tag: 'sim', upstream_id: null, streamed: false, cancelled: false, status: 200,
    finish_reason: 'stop', native_finish_reason: 'stop', tokens_prompt: 10, tokens_completion: 5, native_tokens_reasoning: 0, native_tokens_cached: 0,
    native_tokens_cache_write: 0, total_cost: 0.25, upstream_inference_cost: 0.25, is_byok: false, latency_ms: 3, ttft_ms: 2, generation_time_ms: 1,
    attempts: [{ provider: 'sim', model: 'a/b', status: 200 }], error: null, preset_id: null, session_id: null, created_at: new Date().toISOString(),
    ...over,
  } as GenerationRow;
}

const windows = () => {
  const day = new Date().toISOString().slice(0, 10);
  return { day, week: '2000-01-01', month: '2000-01-01' };
};

describe.each(BACKENDS)('record batches with a refused row (%s)', (backend) => {
  it('the other rows are written, the refused one is dead-lettered with its reason and usage, and the metric counts it', async () => {
    const db = await freshDatabase(backend);
    const store = openStore(db.url);
    try {
      await store.migrate();
      const recorder = new GenerationRecorder(store, pino({ level: 'silent' }), { intervalMs: 10_000, batchSize: 10_000 });
      const metrics = new GatewayMetrics(recorder);
      // SQLite refuses a value it cannot bind and a NOT NULL column left null (once skipped in silence by `insert or
      // ignore`); PostgreSQL a NOT NULL column left null, a NUL byte in text and a lone surrogate in JSON (the record's
      // error message quotes the requested model).
      const bad =
        backend === 'sqlite'
          ? [row({ model: {} as never }), row({ api_type: null as never })]
          : [row({ api_type: null as never }), row({ session_id: 'a\u0000b' }), row({ status: 404, error: { status: 404, message: 'No model x\uD800y' } })];
      const good = [row(), row(), row()];
      for (const r of [good[0], ...bad, good[1], good[2]]) recorder.record(r);
      await recorder.flush();
      expect(recorder.queued).toBe(0);
      for (const g of good) expect(await store.getGeneration(g.id)).not.toBeNull();
      for (const b of bad) expect(await store.getGeneration(b.id).catch(() => null)).toBeNull();
      const letters = await store.listGenerationDeadLetters(10);
      expect(letters.map((l) => l.generation_id).sort()).toEqual(bad.map((b) => b.id).sort());
      for (const l of letters) {
        expect(l.reason.length).toBeGreaterThan(0);
        expect(JSON.parse(l.record).id).toBe(l.generation_id);
      }
      // Usage of every row counts, refused or not: spend limits do not reset.
      const usage = (await store.getKeyUsage(['k'.repeat(64)], windows())).get('k'.repeat(64))!;
      expect(usage.usage).toBeCloseTo(0.25 * (good.length + bad.length), 9);
      expect(recorder.deadLettered).toBe(bad.length);
      expect(await metrics.text()).toContain(`gateway_generation_records_dead_lettered_total ${bad.length}`);
      // Later records are written as usual.
      const later = row();
      recorder.record(later);
      await recorder.flush();
      expect(await store.getGeneration(later.id)).not.toBeNull();
    } finally {
      await store.close();
      await db.drop();
    }
  });

  it.runIf(backend === 'postgres')('an unreachable database keeps the batch queued (nothing dead-lettered)', async () => {
    const db = await freshDatabase(backend);
    const store = openStore(db.url);
    await store.migrate();
    const recorder = new GenerationRecorder(store, pino({ level: 'silent' }), { intervalMs: 10_000, batchSize: 10_000 });
    recorder.record(row());
    await store.close();
    await expect(recorder.flush()).rejects.toThrow();
    expect(recorder.queued).toBe(1);
    expect(recorder.deadLettered).toBe(0);
    await db.drop();
  });
});

describe.each(BACKENDS)('unstorable strings refused at validation (%s)', (backend) => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv(backend, { recorder: { intervalMs: 20, batchSize: 500 } });
  });
  afterAll(async () => env?.close());

  const cases: Array<[string, string, string, Record<string, unknown> | null, string]> = [
    ['NUL in model', 'POST', '/chat/completions', { model: 'test/al\u0000pha', messages: [{ role: 'user', content: 'hi' }] }, 'model'],
    ['lone surrogate in model', 'POST', '/chat/completions', { model: 'test/alpha\uD800', messages: [{ role: 'user', content: 'hi' }] }, 'model'],
    ['NUL in session_id', 'POST', '/chat/completions', { model: 'test/alpha', session_id: 's\u0000', messages: [{ role: 'user', content: 'hi' }] }, 'session_id'],
    ['NUL in user', 'POST', '/chat/completions', { model: 'test/alpha', user: 'u\u0000', messages: [{ role: 'user', content: 'hi' }] }, 'user'],
    ['NUL in a metadata key', 'POST', '/chat/completions', { model: 'test/alpha', metadata: { 'k\u0000': 'v' }, messages: [{ role: 'user', content: 'hi' }] }, 'metadata'],
    ['surrogate in message content', 'POST', '/messages', { model: 'test/claude', max_tokens: 5, messages: [{ role: 'user', content: 'a\uDC00' }] }, 'messages[0].content'],
    ['NUL in a key name', 'POST', '/keys', { name: 'k\u0000' }, 'name'],
    ['NUL in a workspace', 'POST', '/workspaces', { name: 'w', slug: 'w\u0000' }, 'slug'],
    ['NUL in a guardrail', 'POST', '/guardrails', { name: 'g\u0000' }, 'name'],
    ['NUL in a path id', 'DELETE', '/guardrails/%00', null, 'id'],
    ['NUL in a query value', 'GET', '/keys?workspace_id=%00', null, 'workspace_id'],
  ];
  it.each(cases)('%s → 400 naming the field', async (_name, method, path, body, field) => {
    const admin = path === '/keys' || path.startsWith('/workspaces') || path.startsWith('/guardrails') || path.startsWith('/keys?');
    const res = await env.t.call(method, path, { key: admin ? env.t.adminKey : env.key, ...(body ? { raw: JSON.stringify(body) } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    // /messages answers in Anthropic's envelope ({type: 'error', error: {type, message}}), the others in the gateway's.
    if (path !== '/messages') expect(res.body.error.code).toBe(400);
    expect(res.body.error.message).toContain(field);
    expect(res.body.error.message).toMatch(/NUL|surrogate/);
  });

  it('a valid emoji written as an escaped surrogate pair is accepted, and records keep flowing', async () => {
    const res = await env.t.call('POST', '/chat/completions', { key: env.key, raw: '{"model":"test/alpha","session_id":"s-\\ud83d\\ude00","messages":[{"role":"user","content":"hi \\ud83d\\ude00"}]}' });
    expect(res.status).toBe(200);
    await env.t.gw.svc.recorder.flush();
    const gen = await env.t.gw.svc.store.getGeneration(res.body.id);
    expect(gen?.session_id).toBe('s-\u{1F600}');
  });
});
