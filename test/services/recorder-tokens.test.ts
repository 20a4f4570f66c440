/**
 * The recorder's token counts (docs/spend.md, "Token rate limits", seeds): tokens settled against token rate limits
 * are queued per key and minute, counted as not written (`unflushedTokens`) until a flush writes them — before the
 * records, in the same flush — and a flush that fails keeps them for the next one: written exactly once, and
 * `onStored` (spend control's "everything queued before flush n is in the store") only once they are. And the seeds
 * that read them back (services/spend/tokens.ts).
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { GenerationRecorder } from '../../src/services/generations.js';
import { TokenUsage } from '../../src/services/spend/tokens.js';
import type { GenerationRow, KeyRow, KeyTokensDelta, Store } from '../../src/store/types.js';

function fakeStore() {
  const state = { tokensDown: false, recordsDown: false, tokens: new Map<string, number>(), rows: 0, keepFrom: [] as number[] };
  const store = {
    kind: 'sqlite',
    async addKeyTokens(deltas: KeyTokensDelta[], keepFrom: number) {
      if (state.tokensDown) throw new Error('database down');
      state.keepFrom.push(keepFrom);
      for (const d of deltas) state.tokens.set(`${d.key_hash}|${d.minute}`, (state.tokens.get(`${d.key_hash}|${d.minute}`) ?? 0) + d.tokens);
    },
    async recordGenerations(rows: GenerationRow[]) {
      if (state.recordsDown) throw new Error('database down');
      state.rows += rows.length;
    },
    async ping() {
      return !(state.tokensDown || state.recordsDown);
    },
    async recordGenerationContent() {},
  } as unknown as Store;
  return { store, state };
}

function row(id: string): GenerationRow {
  return { id, key_hash: 'k1', total_cost: null, is_byok: false, created_at: new Date().toISOString() } as unknown as GenerationRow;
}

describe('GenerationRecorder token counts', () => {
  it('queues per key and minute, counts them unwritten until flushed, writes them with the records', async () => {
    const { store, state } = fakeStore();
    const rec = new GenerationRecorder(store, pino({ level: 'silent' }), { intervalMs: 60_000, batchSize: 10_000, now: () => 101 * 60_000 + 5_000 });
    const stored: number[] = [];
    rec.onStored = (n) => stored.push(n);
    rec.record(row('g1'));
    rec.tokensUsed('k1', 100, 18);
    rec.tokensUsed('k1', 100, 7);
    rec.tokensUsed('k2', 101, 5);
    rec.tokensUsed('k2', 101, 0); // nothing used: nothing queued
    expect(Object.fromEntries(rec.unflushedTokens)).toEqual({ 'k1|100': 25, 'k2|101': 5 });
    await rec.flush();
    expect(Object.fromEntries(state.tokens)).toEqual({ 'k1|100': 25, 'k2|101': 5 });
    expect(state.keepFrom).toEqual([91]); // this instance's clock minute (101), less 10
    expect(state.rows).toBe(1);
    expect(rec.unflushedTokens.size).toBe(0);
    expect(stored).toEqual([1]);
    // Tokens alone make a flush too.
    rec.tokensUsed('k1', 102, 3);
    await rec.flush();
    expect(state.tokens.get('k1|102')).toBe(3);
    await rec.close();
  });

  it('a failed flush keeps them (still unwritten) for the next one: written once, onStored only then', async () => {
    const { store, state } = fakeStore();
    const rec = new GenerationRecorder(store, pino({ level: 'silent' }), { intervalMs: 60_000, batchSize: 10_000, now: () => 100 * 60_000 });
    const stored: number[] = [];
    rec.onStored = (n) => stored.push(n);
    state.tokensDown = state.recordsDown = true;
    rec.record(row('g1'));
    rec.tokensUsed('k1', 100, 18);
    await expect(rec.flush()).rejects.toThrow('database down');
    rec.tokensUsed('k1', 100, 4); // settled during the outage: added to what waits
    expect(rec.unflushedTokens.get('k1|100')).toBe(22);
    expect(stored).toEqual([]);
    // The tokens are written, the records not: the tokens are not written again with the records' retry.
    state.tokensDown = false;
    await expect(rec.flush()).rejects.toThrow('database down');
    expect(state.tokens.get('k1|100')).toBe(22);
    expect(rec.unflushedTokens.size).toBe(0);
    expect(stored).toEqual([]);
    state.recordsDown = false;
    await rec.flush();
    expect(state.tokens.get('k1|100')).toBe(22);
    expect(state.rows).toBe(1);
    expect(stored).toEqual([3]);
    await rec.close();
  });

  it('prunes from its own clock, not from the minutes it writes: a clock ahead never drops the others\' current minute', async () => {
    const { store, state } = fakeStore();
    // This instance's clock is 3 minutes ahead of the others (their current minute: 200).
    const rec = new GenerationRecorder(store, pino({ level: 'silent' }), { intervalMs: 60_000, batchSize: 10_000, now: () => 203 * 60_000 });
    rec.tokensUsed('k1', 203, 5);
    await rec.flush();
    expect(state.keepFrom).toEqual([193]);
    expect(state.keepFrom[0]).toBeLessThan(200);
    await rec.close();
  });

  it('a long outage with many keys: every (key, minute) written once the store is back, in one call; minutes too old to be read dropped', async () => {
    const { store, state } = fakeStore();
    const calls: number[] = [];
    const add = store.addKeyTokens.bind(store);
    store.addKeyTokens = async (deltas, keepFrom) => {
      calls.push(deltas.length);
      return add(deltas, keepFrom);
    };
    let clock = 1_000 * 60_000;
    const rec = new GenerationRecorder(store, pino({ level: 'silent' }), { intervalMs: 60_000, batchSize: 10_000, now: () => clock });
    const stored: number[] = [];
    rec.onStored = (n) => stored.push(n);
    state.tokensDown = true;
    // 2,200 keys for 60 minutes: 132,000 (key, minute) counts waiting (more arguments than a spread call takes).
    for (let m = 0; m < 60; m++) {
      clock = (1_000 + m) * 60_000;
      for (let k = 0; k < 2_200; k++) rec.tokensUsed(`k${k}`, 1_000 + m, 3);
      if (m % 20 === 19) await expect(rec.flush()).rejects.toThrow('database down');
    }
    // Failed flushes drop what no seed can read any more (minutes before 1059 - 10): at most 11 minutes wait.
    expect(rec.unflushedTokens.size).toBe(2_200 * 11);
    state.tokensDown = false;
    await rec.flush();
    expect(calls.at(-1)).toBe(2_200 * 11);
    expect(state.tokens.size).toBe(2_200 * 11);
    expect(state.tokens.get('k7|1059')).toBe(3);
    expect(state.tokens.has('k7|1048')).toBe(false);
    expect(rec.unflushedTokens.size).toBe(0);
    expect(stored.length).toBe(1);
    await rec.close();
  });
});

describe('TokenUsage seeds', () => {
  const key = { hash: 'k1', workspace_id: 'w1', creator_user_id: 'u1' } as unknown as KeyRow;
  const recorder = () => {
    const unflushedTokens = new Map<string, number>([
      ['k1|100', 5],
      ['k2|100', 7],
      ['k1|99', 1000],
    ]);
    return { unflushedTokens, tokensUsed: () => undefined };
  };

  it('counts the scope keys: the store plus what is not written, for the key, the member or the workspace', async () => {
    const asked: Array<{ q: unknown; hashes?: string[] }> = [];
    const store = {
      async listKeyHashes(q: unknown) {
        asked.push({ q });
        return ['k2'];
      },
      async keyTokensInMinute(hashes: string[], minute: number) {
        asked.push({ q: minute, hashes });
        return 10 * hashes.length;
      },
    };
    const t = new TokenUsage({ store, recorder: recorder() });
    expect(await t.seed(key, 'key', 100)).toBe(10 + 5);
    expect(await t.seed(key, 'member', 100)).toBe(20 + 5 + 7);
    expect(await t.seed(key, 'workspace', 100)).toBe(20 + 5 + 7);
    expect(asked.filter((a) => a.hashes === undefined).map((a) => a.q)).toEqual([{ creator_user_id: 'u1' }, { workspace_id: 'w1' }]);
  });

  it('the store cannot be read: the seed fails, whatever the scope (the ledger backs off and answers 503), never a count of this instance\'s alone', async () => {
    const down = async (): Promise<never> => {
      throw new Error('database down');
    };
    const t = new TokenUsage({ store: { listKeyHashes: down, keyTokensInMinute: down }, recorder: recorder() });
    for (const scope of ['key', 'member', 'workspace'] as const) await expect(t.seed(key, scope, 100)).rejects.toThrow('database down');
    // The keys listed, their tokens not readable: still a failure (before, this key's 5 alone, without k2's 7).
    const listed = new TokenUsage({ store: { listKeyHashes: async () => ['k2'], keyTokensInMinute: down }, recorder: recorder() });
    await expect(listed.seed(key, 'workspace', 100)).rejects.toThrow('database down');
  });

  it('reads only the ids of the scope\'s keys from the unwritten tokens, never a copy of them all', async () => {
    const rec = recorder();
    for (let i = 0; i < 1_000; i++) rec.unflushedTokens.set(`other${i}|100`, 1);
    const read: string[] = [];
    const get = rec.unflushedTokens.get.bind(rec.unflushedTokens);
    rec.unflushedTokens.get = (id: string) => (read.push(id), get(id));
    rec.unflushedTokens[Symbol.iterator] = () => {
      throw new Error('iterated');
    };
    rec.unflushedTokens.entries = rec.unflushedTokens[Symbol.iterator];
    rec.unflushedTokens.forEach = () => {
      throw new Error('iterated');
    };
    const store = { listKeyHashes: async () => ['k2'], keyTokensInMinute: async () => 0 };
    const t = new TokenUsage({ store, recorder: rec });
    expect(await t.seed(key, 'workspace', 100)).toBe(5 + 7);
    expect(read.sort()).toEqual(['k1|100', 'k2|100']);
  });
});
