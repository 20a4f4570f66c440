/** Small helpers shared by the services that use Redis (rate limits, shared spend). */
import type { Redis } from 'ioredis';

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
