/**
 * The response cache of the inference APIs (docs/cache.md): with `X-Gateway-Cache: true`, a successful answer is kept
 * for `X-Gateway-Cache-TTL` seconds (1–86400, default 300) and the same request of the same key gets it again without
 * calling a provider. In memory (an LRU bounded in entries and bytes) on one instance; in Redis, shared by every
 * instance, when `GATEWAY_REDIS_URL` is set.
 *
 * Decisions:
 * - The cache key: the API key's hash, the API (chat, responses, messages), the stream flag and the SHA-256 of the
 *   request body — as the hosted API's. Another key, another API, streamed or not, or any byte of the body: a miss.
 * - Only complete successes are kept: a 200 answer, or a stream that ended normally. `gateway_metadata` is never
 *   kept (hits do not carry it), so a stream whose client asked for it is not kept either.
 * - A hit costs nothing and makes no generation record; `X-Gateway-Cache-Source-Id` names the generation that
 *   produced the answer. It is served only after the request passed the same checks as any other (key, guardrails,
 *   the key's spending limit), so a model blocked after an answer was cached is not served from the cache.
 * - Redis failures are misses (and nothing is stored): the cache never fails a request.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { newRedis } from './redis.js';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { badRequest } from '../core/errors.js';
import { rawBody } from '../core/raw-json.js';

export interface CachedAnswer {
  /** The body as sent: JSON text, or the whole event stream. */
  body: string;
  contentType: string;
  /** The generation that produced it. */
  generationId: string;
  /** When it was stored (ms since the epoch). */
  storedAt: number;
  /** Its time to live (s). */
  ttl: number;
}

/** What the request headers ask of the cache; null when the cache is not asked for. */
export interface CacheRequest {
  ttl: number;
  /** `X-Gateway-Cache-Clear: true`: drop the stored answer and ask the provider again. */
  clear: boolean;
}

export const DEFAULT_TTL_S = 300;
export const MAX_TTL_S = 86_400;
/** Largest answer kept (a bigger stream is relayed but not stored). */
export const MAX_ENTRY_BYTES = 1024 * 1024;

const flag = (v: string | string[] | undefined): boolean | undefined => {
  if (typeof v !== 'string') return undefined;
  const t = v.trim().toLowerCase();
  return t === 'true' || t === '1' ? true : t === 'false' || t === '0' ? false : undefined;
};

/** What the request headers say of the cache: on, off or not said; the TTL when given; whether to clear. */
export interface CacheHeaders {
  on: boolean | undefined;
  ttl: number | undefined;
  clear: boolean;
}

/** Reads `X-Gateway-Cache`, `-TTL` and `-Clear`; a bad TTL is a 400 naming the header. */
export function cacheHeaders(headers: Record<string, string | string[] | undefined>): CacheHeaders {
  let ttl: number | undefined;
  const raw = headers['x-gateway-cache-ttl'];
  if (raw !== undefined) {
    const n = Number(raw);
    if (typeof raw !== 'string' || !Number.isInteger(n) || n < 1 || n > MAX_TTL_S) {
      throw badRequest(`X-Gateway-Cache-TTL must be a whole number of seconds from 1 to ${MAX_TTL_S}`, { field: 'x-gateway-cache-ttl' });
    }
    ttl = n;
  }
  return { on: flag(headers['x-gateway-cache']), ttl, clear: flag(headers['x-gateway-cache-clear']) === true };
}

/**
 * Whether and how a request uses the cache: the header wins (`X-Gateway-Cache: false` turns a preset's cache off);
 * without it, a preset's (or the body's) `cache_enabled`. The TTL: the header's, else the body's
 * `cache_ttl_seconds`, else 300 s. `X-Gateway-Cache-Clear` applies however the cache was turned on.
 */
export function cacheDecision(h: CacheHeaders, body: Record<string, unknown> = {}): CacheRequest | null {
  if (!(h.on ?? body.cache_enabled === true)) return null;
  const bodyTtl = body.cache_ttl_seconds;
  const ttl = h.ttl ?? (typeof bodyTtl === 'number' && Number.isInteger(bodyTtl) && bodyTtl >= 1 && bodyTtl <= MAX_TTL_S ? bodyTtl : DEFAULT_TTL_S);
  return { ttl, clear: h.clear };
}

/** `cacheDecision` of the headers alone (APIs without preset fields). */
export function cacheRequest(headers: Record<string, string | string[] | undefined>): CacheRequest | null {
  return cacheDecision(cacheHeaders(headers));
}

/** The cache key of a request: key hash, API, stream flag and the SHA-256 of the body. */
export function cacheKey(keyHash: string, api: string, stream: boolean, body: unknown): string {
  // A large body the JSON parser kept the bytes of is hashed as received (marked apart), not serialized again.
  const raw = body !== null && typeof body === 'object' ? rawBody(body) : null;
  const digest = (raw ? createHash('sha256').update('raw\n').update(raw) : createHash('sha256').update(JSON.stringify(body))).digest('hex');
  return `${keyHash}:${api}:${stream ? 's' : 'j'}:${digest}`;
}

/** The response headers of a hit. */
export function hitHeaders(a: CachedAnswer, now: number): Record<string, string> {
  return {
    'x-gateway-cache-status': 'HIT',
    'x-gateway-cache-age': String(Math.max(0, Math.floor((now - a.storedAt) / 1000))),
    'x-gateway-cache-ttl': String(a.ttl),
    'x-gateway-cache-source-id': a.generationId,
  };
}

interface Store {
  get(key: string): Promise<CachedAnswer | null>;
  set(key: string, a: CachedAnswer): Promise<void>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * One instance's cache (lru-cache): least recently used entries go first beyond `maxEntries` or `maxBytes` (UTF-8 bytes
 * of the bodies). The LRU is made by the first answer stored: lru-cache allocates its arrays for `maxEntries` up front
 * (three of 10,000 slots), which a gateway whose clients never ask for caching should not keep in the heap that every
 * full collection marks.
 */
export class MemoryStore implements Store {
  private lru: LRUCache<string, CachedAnswer> | null = null;

  constructor(
    private readonly now: () => number,
    private readonly maxEntries = 10_000,
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  async get(key: string): Promise<CachedAnswer | null> {
    const a = this.lru?.get(key); // most recently used from here
    if (!a) return null;
    if (this.now() >= a.storedAt + a.ttl * 1000) {
      this.lru!.delete(key);
      return null;
    }
    return a;
  }

  async set(key: string, a: CachedAnswer): Promise<void> {
    // An empty body still takes an entry: lru-cache sizes must be positive.
    this.lru ??= new LRUCache({ max: this.maxEntries, maxSize: this.maxBytes, sizeCalculation: (x) => Math.max(1, Buffer.byteLength(x.body)) });
    // Synchronous: two sets of one key in the same tick replace each other (bytes counted once).
    this.lru.set(key, a);
  }

  async delete(key: string): Promise<void> {
    this.lru?.delete(key);
  }

  async close(): Promise<void> {
    this.lru?.clear();
  }

  /** What it holds: answers and their bytes. */
  get size(): { entries: number; bytes: number } {
    return { entries: this.lru?.size ?? 0, bytes: this.lru?.calculatedSize ?? 0 };
  }
}

/** Shared by every instance: one Redis string per answer, expiring with its TTL. */
class RedisStore implements Store {
  private readonly redis: Redis;

  constructor(url: string, log: Logger) {
    this.redis = newRedis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, keyPrefix: 'gw:cache:' });
    // Without a listener ioredis reports every failed reconnection as an "Unhandled error event" on stderr; the cache
    // treats Redis failures as misses, so a warning is all they need.
    this.redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis response cache error'));
  }

  async get(key: string): Promise<CachedAnswer | null> {
    const text = await this.redis.get(key);
    return text ? (JSON.parse(text) as CachedAnswer) : null;
  }

  async set(key: string, a: CachedAnswer): Promise<void> {
    await this.redis.set(key, JSON.stringify(a), 'EX', a.ttl);
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(key);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export class ResponseCache {
  private readonly store: Store;

  constructor(
    redisUrl: string | null,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.store = redisUrl ? new RedisStore(redisUrl, log) : new MemoryStore(now);
  }

  /** The stored answer, or null (a miss, also when the store fails). */
  async get(key: string): Promise<CachedAnswer | null> {
    try {
      return await this.store.get(key);
    } catch (err) {
      this.log.warn({ err }, 'response cache unavailable: a miss');
      return null;
    }
  }

  /** Keeps an answer (not when larger than MAX_ENTRY_BYTES; a store failure is logged, never thrown). */
  async set(key: string, answer: Omit<CachedAnswer, 'storedAt'>): Promise<void> {
    if (Buffer.byteLength(answer.body) > MAX_ENTRY_BYTES) return;
    try {
      await this.store.set(key, { ...answer, storedAt: this.now() });
    } catch (err) {
      this.log.warn({ err }, 'response cache unavailable: answer not stored');
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.store.delete(key);
    } catch (err) {
      this.log.warn({ err }, 'response cache unavailable: entry not cleared');
    }
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/**
 * Keeps a copy of what a stream writes to `raw` (up to MAX_ENTRY_BYTES; beyond that the copy is dropped), for the
 * cache. Returns the copy's reader: the text, or null when it outgrew the limit.
 */
export function captureStream(raw: { write: (...a: never[]) => boolean; end: (...a: never[]) => unknown }): () => string | null {
  const parts: string[] = [];
  let size = 0;
  let over = false;
  const keep = (chunk: unknown) => {
    if (over || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const s = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
    size += s.length;
    if (size > MAX_ENTRY_BYTES) {
      over = true;
      parts.length = 0;
    } else parts.push(s);
  };
  const write = raw.write.bind(raw) as (...a: unknown[]) => boolean;
  const end = raw.end.bind(raw) as (...a: unknown[]) => unknown;
  (raw as { write: unknown }).write = (chunk: unknown, ...rest: unknown[]) => {
    keep(chunk);
    return write(chunk, ...rest);
  };
  (raw as { end: unknown }).end = (chunk?: unknown, ...rest: unknown[]) => {
    keep(chunk);
    return end(chunk, ...rest);
  };
  return () => (over ? null : parts.join(''));
}
