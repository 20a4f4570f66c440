/** The bounded in-memory caches: the key cache (services/keys.ts) and the response cache's memory store. */
import { describe, expect, it } from 'vitest';
import { KeyService } from '../../src/services/keys.js';
import { MemoryStore } from '../../src/services/response-cache.js';
import type { InvalidationBus } from '../../src/services/invalidation.js';
import type { KeyRow, Store } from '../../src/store/types.js';
import { hashSecret } from '../../src/core/keys.js';

const secret = (i: number) => `sk-gw-v1-${String(i).padStart(64, '0')}`;

function fakeKeys(maxEntries: number) {
  const reads: string[] = [];
  const store = {
    getKey: async (hash: string) => {
      reads.push(hash);
      return { hash, kind: 'inference', disabled: false, expires_at: null } as unknown as KeyRow;
    },
  } as unknown as Store;
  const bus = { subscribe: () => undefined } as unknown as InvalidationBus;
  return { svc: new KeyService(store, bus, 60_000, () => 0, maxEntries), reads };
}

describe('key cache', () => {
  it('serves cached keys without a promise and keeps at most maxEntries, dropping the least recently used', async () => {
    const { svc, reads } = fakeKeys(2);
    await svc.authenticate(secret(1));
    await svc.authenticate(secret(2));
    expect(svc.authenticate(secret(1))).not.toBeInstanceOf(Promise); // cached; now the most recently used
    await svc.authenticate(secret(3)); // evicts key 2
    expect(svc.authenticate(secret(1))).not.toBeInstanceOf(Promise);
    expect(svc.authenticate(secret(2))).toBeInstanceOf(Promise);
    expect(reads).toEqual([1, 2, 3, 2].map((i) => hashSecret(secret(i))));
  });
});

describe('response cache memory store', () => {
  const answer = (body: string, storedAt = 0) => ({ body, contentType: 'application/json', generationId: 'gen-1', storedAt, ttl: 60 });

  it('an expired answer is a miss and is dropped', async () => {
    let now = 0;
    const store = new MemoryStore(() => now, 10, 1_000);
    await store.set('a', answer('x'));
    expect(await store.get('a')).not.toBeNull();
    now = 60_000;
    expect(await store.get('a')).toBeNull();
    expect(store.size).toEqual({ entries: 0, bytes: 0 });
  });

  it('an answer larger than the whole budget is not kept; an empty body still counts as an entry', async () => {
    const store = new MemoryStore(() => 0, 10, 100);
    await store.set('big', answer('x'.repeat(101)));
    expect(await store.get('big')).toBeNull();
    await store.set('empty', answer(''));
    expect((await store.get('empty'))?.body).toBe('');
    expect(store.size.entries).toBe(1);
  });
});
