/** Small helpers shared by the services that use Redis (rate limits, shared spend, response cache, invalidation). */
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';

const requireLazily = createRequire(import.meta.url);

/**
 * A Redis client. ioredis is loaded by the first call, not at start-up: a gateway without Redis never loads it, and
 * keeps it out of the heap every full collection marks (docs/benchmark.md, "Megabyte bodies: a smaller heap to mark").
 */
export function newRedis(url: string, options: RedisOptions): Redis {
  const { Redis: Client } = requireLazily('ioredis') as typeof import('ioredis');
  return new Client(url, options);
}

/** Resolves once `redis` is connected, or after `ms` — whichever comes first; never rejects. */
export async function whenReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    }
    redis.once('ready', done);
  });
}
