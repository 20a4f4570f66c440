/**
 * The response cache (docs/cache.md) as a step around the attempt runner: before any attempt, a stored answer of the
 * same key and body is answered instead (HIT), or the reply is marked MISS; after a served answer, it is kept. The
 * inference APIs (chat, responses, messages; JSON and streamed) and the single-answer APIs that offer the cache
 * (embeddings, rerank) go through it; routes only pass on what the client asked (`CacheAsk`).
 */
import type { ServerResponse } from 'node:http';
import { HttpError } from '../../core/errors.js';
import { captureStream, cacheDecision, cacheKey, hitHeaders, type CachedAnswer, type CacheHeaders, type CacheRequest, type ResponseCache } from '../response-cache.js';
import { eventStreamHead } from '../reply-stream.js';

/** What the client asked of the cache (its headers), and its body as sent (the key's digest). */
export interface CacheAsk {
  headers: CacheHeaders;
  body: unknown;
}

/** A request's use of the cache: its TTL, whether to clear first, its API and key. */
export interface CacheUse extends CacheRequest {
  api: string;
  key: string;
}

/** A JSON reply as the route shapes it: a served answer, or a stored one (its text as kept). */
export type JsonReply =
  | { id: string; headers: Record<string, string>; body: Record<string, unknown> }
  | { id: string; headers: Record<string, string>; stored: { text: string; contentType: string } };

export class CacheStep {
  constructor(
    private readonly cache: ResponseCache,
    /** Counts lookups (hits and misses) per API; null without metrics. */
    private readonly metrics: () => { cacheLookup(api: string, hit: boolean): void } | null,
    private readonly now: () => number,
  ) {}

  /**
   * Whether and how a request uses the cache: the headers, or (for the inference APIs) a preset's or the body's
   * `cache_enabled` in `fields`. Null when it does not.
   */
  use(ask: CacheAsk | undefined, keyHash: string, api: string, stream: boolean, fields?: Record<string, unknown>): CacheUse | null {
    if (!ask) return null;
    const decided = cacheDecision(ask.headers, fields);
    return decided ? { ...decided, api, key: cacheKey(keyHash, api, stream, ask.body) } : null;
  }

  /** The stored answer (a hit), or null (`X-Gateway-Cache-Clear` drops it first). */
  async lookup(u: CacheUse): Promise<CachedAnswer | null> {
    const hit = u.clear ? (await this.cache.delete(u.key), null) : await this.cache.get(u.key);
    this.metrics()?.cacheLookup(u.api, hit !== null);
    return hit;
  }

  /** Keeps an answer. */
  keep(u: CacheUse, answer: Omit<CachedAnswer, 'storedAt' | 'ttl'>): Promise<void> {
    return this.cache.set(u.key, { ...answer, ttl: u.ttl });
  }

  hitHeaders(hit: CachedAnswer): Record<string, string> {
    return hitHeaders(hit, this.now());
  }
}

const missHeaders = (u: CacheUse): Record<string, string> => ({ 'x-gateway-cache-status': 'MISS', 'x-gateway-cache-ttl': String(u.ttl) });

/** An error reply on a miss carries the MISS headers too. */
function missed(err: HttpError, u: CacheUse): HttpError {
  const e = new HttpError(err.status, err.message, err.metadata, { ...missHeaders(u), ...err.headers });
  e.gatewayMetadata = err.gatewayMetadata;
  return e;
}

/** A JSON answer through the cache (when `step` and `u`): a hit instead of `run`; a served answer kept (without its gateway_metadata). */
export async function cachedJson(step: CacheStep | undefined, u: CacheUse | null, run: () => Promise<{ id: string; body: Record<string, unknown>; headers?: Record<string, string> }>): Promise<JsonReply> {
  if (!step || !u) {
    const { id, body, headers } = await run();
    return { id, headers: { ...headers, 'x-generation-id': id }, body };
  }
  const hit = await step.lookup(u);
  if (hit) return { id: hit.generationId, headers: { ...step.hitHeaders(hit), 'x-generation-id': hit.generationId }, stored: { text: hit.body, contentType: hit.contentType } };
  const { id, body, headers } = await run().catch((err: unknown) => {
    throw err instanceof HttpError ? missed(err, u) : err;
  });
  const { gateway_metadata: _notKept, ...kept } = body;
  await step.keep(u, { body: JSON.stringify(kept), contentType: 'application/json; charset=utf-8', generationId: id });
  return { id, headers: { ...headers, ...missHeaders(u), 'x-generation-id': id }, body };
}

/**
 * A streamed answer through the cache: a hit is written to `raw` whole; on a miss the stream is marked, relayed by
 * `run`, and a copy kept when it ended normally (not when it carries gateway_metadata, which hits never do).
 */
export async function cachedStream(
  step: CacheStep | undefined,
  u: CacheUse | null,
  raw: ServerResponse,
  requestId: string,
  withMetadata: boolean,
  run: () => Promise<{ id: string } | null>,
): Promise<{ id: string } | null> {
  if (!step || !u) return run();
  const hit = await step.lookup(u);
  if (hit) {
    raw.writeHead(200, { ...eventStreamHead(hit.generationId, requestId), ...step.hitHeaders(hit) });
    raw.end(hit.body);
    return { id: hit.generationId };
  }
  // The stream writes its own head on the raw response, which keeps headers set on it beforehand.
  for (const [k, v] of Object.entries(missHeaders(u))) raw.setHeader(k, v);
  const copy = withMetadata ? null : captureStream(raw);
  const done = await run();
  const text = copy?.();
  if (done && text) await step.keep(u, { body: text, contentType: 'text/event-stream; charset=utf-8', generationId: done.id });
  return done;
}
