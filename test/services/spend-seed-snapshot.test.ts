/**
 * A seed of spend control (docs/spend.md, "Seed versions") counts what this instance settled before the seed began:
 * the records in the store plus those not written yet. When a batch of records is written while the seed reads the
 * store, the read may not see them; the amounts not written must then be the ones taken before the read began, or the
 * batch is in neither figure and the counter starts below the spend (an overspend later). Each seed source — the key's
 * limit and guardrail budgets, workspace budgets, organization credits, token rate limits — is read with a batch
 * written in the middle.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { createInferenceKey } from '../helpers.js';
import { usdToNano } from '../../src/core/money.js';
import type { Store } from '../../src/store/types.js';
import { TokenUsage } from '../../src/services/spend/tokens.js';

let env: ChatEnv;
beforeAll(async () => {
  // Records are written only when the test flushes (the interval is far longer than the test).
  env = await startChatEnv('sqlite', { recorder: { intervalMs: 600_000, batchSize: 10_000 } });
});
afterAll(async () => env?.close());

/** `read` of the store answers what the store held when it was called, after the recorder wrote its batch. */
function writeDuringRead<K extends keyof Store>(store: Store, read: K): () => void {
  const original = store[read] as unknown as (...args: unknown[]) => Promise<unknown>;
  (store as unknown as Record<string, unknown>)[read] = async (...args: unknown[]) => {
    const before = await original.apply(store, args);
    await env.t.gw.svc.recorder.flush();
    return before;
  };
  return () => void ((store as unknown as Record<string, unknown>)[read] = original);
}

async function spendSome(): Promise<{ hash: string; cost: number }> {
  const { key, hash } = await createInferenceKey(env.t, { name: `seed-${Math.random()}` });
  const r = await env.t.call('POST', '/chat/completions', { key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12 } });
  expect(r.status).toBe(200);
  const cost = Number(env.t.gw.svc.recorder.unflushedSpend.get(hash));
  expect(cost).toBeGreaterThan(0);
  return { hash, cost };
}

describe('a seed read while a batch of records is written', () => {
  it('the key limit: the settled request is counted (taken from the amounts not written before the read)', async () => {
    const { hash, cost } = await spendSome();
    const key = (await env.t.gw.svc.store.getKey(hash))!;
    const restore = writeDuringRead(env.t.gw.svc.store, 'getKeyUsage');
    try {
      const seeded = await env.t.gw.svc.guardrails.budgetSpent({ guardrailId: '', name: 'key limit', scope: 'key', limitUsd: 1, resetInterval: null, includeByok: false }, key);
      expect(env.t.gw.svc.recorder.unflushedSpend.has(hash)).toBe(false);
      expect(usdToNano(seeded)).toBe(usdToNano(cost));
    } finally {
      restore();
    }
  });

  it('a workspace budget: the settled request is counted', async () => {
    const { hash, cost } = await spendSome();
    const key = (await env.t.gw.svc.store.getKey(hash))!;
    await env.t.gw.svc.recorder.flush();
    const written = usdToNano(await env.t.gw.svc.budgets.spent(key.workspace_id, 'lifetime', false));
    const second = await spendSome();
    const restore = writeDuringRead(env.t.gw.svc.store, 'getKeyUsage');
    try {
      expect(usdToNano(await env.t.gw.svc.budgets.spent(key.workspace_id, 'lifetime', false))).toBe(written + usdToNano(second.cost));
    } finally {
      restore();
    }
    expect(cost).toBeGreaterThan(0);
  });

  it('organization credits: the settled request is counted', async () => {
    const credits = env.t.gw.svc.credits as unknown as { usageNano(): Promise<number> };
    await env.t.gw.svc.recorder.flush();
    const written = await credits.usageNano();
    const { cost } = await spendSome();
    const restore = writeDuringRead(env.t.gw.svc.store, 'organizationUsage');
    try {
      expect(await credits.usageNano()).toBe(written + usdToNano(cost));
    } finally {
      restore();
    }
  });

  it('a token rate limit: the tokens settled in the minute are counted (taken from those not written before the read)', async () => {
    const { key, hash } = await createInferenceKey(env.t, { name: `seed-tpm-${Math.random()}`, rate_limit: { tokens_per_minute: 10_000 } });
    const minute = Math.floor(Date.now() / 60_000);
    const r = await env.t.call('POST', '/chat/completions', { key, body: { model: 'test/alpha', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 12 } });
    expect(r.status).toBe(200);
    const used = r.body.usage.prompt_tokens + r.body.usage.completion_tokens;
    expect(used).toBeGreaterThan(0);
    // A clock minute may have begun just before the request: then it reserved (and settled) in that next minute.
    const settledIn = env.t.gw.svc.recorder.unflushedTokens.has(`${hash}|${minute}`) ? minute : minute + 1;
    expect(env.t.gw.svc.recorder.unflushedTokens.get(`${hash}|${settledIn}`)).toBe(used);
    const k = (await env.t.gw.svc.store.getKey(hash))!;
    const tokens = new TokenUsage({ store: env.t.gw.svc.store, recorder: env.t.gw.svc.recorder });
    const restore = writeDuringRead(env.t.gw.svc.store, 'keyTokensInMinute');
    try {
      expect(await tokens.seed(k, 'key', settledIn)).toBe(used);
      expect(env.t.gw.svc.recorder.unflushedTokens.has(`${hash}|${settledIn}`)).toBe(false);
    } finally {
      restore();
    }
    // Written: the store's count alone.
    expect(await tokens.seed(k, 'key', settledIn)).toBe(used);
    expect(await env.t.gw.svc.store.keyTokensInMinute([hash], settledIn)).toBe(used);
  });
});
