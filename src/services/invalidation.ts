/**
 * Tells every gateway instance that a cached key changed. In-process listeners always run at once;
 * with Redis configured, changes are also published so other instances drop their copy immediately.
 *
 * Redis unreachable (at start-up or later) is the documented degraded mode, never a crash: publishes fail quietly,
 * the subscription is (re)made each time the connection becomes ready, other instances' changes are seen within the
 * key cache TTL meanwhile, and `redisUp()` says so (in /ready's body and the `gateway_redis_up` metric).
 */
import type { Redis } from 'ioredis';
import { newRedis } from './redis.js';
import type { Logger } from 'pino';

const CHANNEL = 'gateway:invalidate';

export type InvalidationListener = (kind: string, id: string) => void;

export interface InvalidationBus {
  publish(kind: string, id: string): void;
  subscribe(fn: InvalidationListener): void;
  /** Whether Redis is connected; null without Redis. */
  redisUp(): boolean | null;
  close(): Promise<void>;
}

export class LocalBus implements InvalidationBus {
  protected listeners: InvalidationListener[] = [];
  publish(kind: string, id: string): void {
    this.emit(kind, id);
  }
  subscribe(fn: InvalidationListener): void {
    this.listeners.push(fn);
  }
  protected emit(kind: string, id: string): void {
    for (const l of this.listeners) l(kind, id);
  }
  redisUp(): boolean | null {
    return null;
  }
  async close(): Promise<void> {}
}

export class RedisBus extends LocalBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly origin = Math.random().toString(36).slice(2);

  /** `retryMs`: a fixed reconnection delay instead of ioredis' growing one (tests). */
  constructor(url: string, log: Logger, retryMs?: number) {
    super();
    const retry = retryMs === undefined ? {} : { retryStrategy: () => retryMs };
    // No offline queue: while Redis is unreachable a publish fails at once (the TTL bounds staleness elsewhere).
    this.pub = newRedis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: false, ...retry });
    // The subscription is made on every `ready`, never queued: a queued SUBSCRIBE fails with MaxRetriesPerRequestError
    // after ~20 reconnection attempts, an unhandled rejection that stopped instances started while Redis was down.
    this.sub = newRedis(url, { lazyConnect: false, enableOfflineQueue: false, autoResubscribe: false, ...retry });
    let warned = false;
    for (const c of [this.pub, this.sub]) {
      c.on('error', (err) => {
        if (!warned) log.warn({ err: err.message }, 'redis invalidation channel error; key changes of other instances are seen within the key cache TTL');
        warned = true;
      });
      c.on('ready', () => {
        if (warned) log.info('redis invalidation channel connected again');
        warned = false;
      });
    }
    this.sub.on('ready', () => {
      this.sub.subscribe(CHANNEL).catch((err: Error) => log.warn({ err: err.message }, 'redis invalidation subscribe failed'));
    });
    this.sub.on('message', (_ch: string, msg: string) => {
      const [origin, kind, id] = msg.split('|');
      if (origin !== this.origin && kind && id !== undefined) this.emit(kind, id);
    });
  }

  override publish(kind: string, id: string): void {
    this.emit(kind, id);
    void this.pub.publish(CHANNEL, `${this.origin}|${kind}|${id}`).catch(() => undefined);
  }

  override redisUp(): boolean {
    return this.pub.status === 'ready' && this.sub.status === 'ready';
  }

  override async close(): Promise<void> {
    this.pub.disconnect();
    this.sub.disconnect();
  }
}
