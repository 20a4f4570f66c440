/**
 * Tells every gateway instance that a cached key changed. In-process listeners always run at once;
 * with Redis configured, changes are also published so other instances drop their copy immediately.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

const CHANNEL = 'gateway:invalidate';

export type InvalidationListener = (kind: string, id: string) => void;

export interface InvalidationBus {
  publish(kind: string, id: string): void;
  subscribe(fn: InvalidationListener): void;
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
  async close(): Promise<void> {}
}

export class RedisBus extends LocalBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly origin = Math.random().toString(36).slice(2);

  constructor(url: string, log: Logger) {
    super();
    this.pub = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2 });
    this.sub = new Redis(url, { lazyConnect: false });
    for (const c of [this.pub, this.sub]) c.on('error', (err) => log.warn({ err: err.message }, 'redis invalidation channel error'));
    void this.sub.subscribe(CHANNEL);
    this.sub.on('message', (_ch: string, msg: string) => {
      const [origin, kind, id] = msg.split('|');
      if (origin !== this.origin && kind && id !== undefined) this.emit(kind, id);
    });
  }

  override publish(kind: string, id: string): void {
    this.emit(kind, id);
    void this.pub.publish(CHANNEL, `${this.origin}|${kind}|${id}`).catch(() => undefined);
  }

  override async close(): Promise<void> {
    this.pub.disconnect();
    this.sub.disconnect();
  }
}
