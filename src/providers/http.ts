/**
 * Upstream HTTP: one keep-alive undici pool per provider origin, with separate connect, first-byte (headers),
 * idle-between-chunks (body) and total timeouts. Only URLs built from configured provider base URLs are ever called.
 */
import { Pool, type Dispatcher } from 'undici';
import type { Timeouts } from '../core/catalog-types.js';
import { UpstreamError } from './errors.js';

export interface UpstreamCall {
  url: URL;
  headers: Record<string, string>;
  body: string;
  timeouts: Timeouts;
  /** Aborts when the client disconnects or the total timeout elapses. */
  signal: AbortSignal;
}

/** What `OriginPools.request` sends (the URL must be built from a configured provider base URL). */
export interface PoolCall {
  url: URL;
  headers: Record<string, string>;
  body?: string;
  timeouts: Timeouts;
  signal?: AbortSignal;
}

/** Keep-alive undici pools, one per origin and connect timeout, created on first use with the given options. */
export class OriginPools {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly options: Omit<Pool.Options, 'connect'>) {}

  private pool(origin: string, connectMs: number): Pool {
    const id = `${origin}|${connectMs}`;
    let p = this.pools.get(id);
    if (!p) {
      p = new Pool(origin, { ...this.options, connect: { timeout: connectMs } });
      this.pools.set(id, p);
    }
    return p;
  }

  /** Sends a request; resolves when the response headers arrive (any status). Network failures become UpstreamError. */
  async request(method: 'GET' | 'POST', call: PoolCall): Promise<Dispatcher.ResponseData> {
    const pool = this.pool(call.url.origin, call.timeouts.connectMs);
    try {
      return await pool.request({
        method,
        path: call.url.pathname + call.url.search,
        headers: call.headers,
        body: call.body,
        signal: call.signal,
        headersTimeout: call.timeouts.firstByteMs,
        bodyTimeout: call.timeouts.idleMs,
      });
    } catch (err) {
      throw networkError(err, call.signal);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
  }
}

export class UpstreamHttp {
  private readonly pools = new OriginPools({ connections: 256, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000 });

  /** Sends a POST; resolves when the response headers arrive. Network failures become UpstreamError. */
  async post(call: UpstreamCall): Promise<Dispatcher.ResponseData> {
    return this.pools.request('POST', call);
  }

  async close(): Promise<void> {
    await this.pools.close();
  }
}

/** A failure below HTTP (refused, reset, timed out, aborted) as an UpstreamError. */
export function networkError(err: unknown, signal?: AbortSignal): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (signal?.aborted) {
    const reason = signal.reason as { name?: string } | undefined;
    if (reason?.name === 'TimeoutError') return new UpstreamError(524, 'Provider did not finish within the total timeout', 'timeout', null, null);
    return new UpstreamError(499, 'Request cancelled by the client', 'cancelled', null, null);
  }
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new UpstreamError(524, 'Provider did not answer within the first-byte timeout', 'timeout', null, null);
    case 'UND_ERR_BODY_TIMEOUT':
      return new UpstreamError(524, 'Provider stalled longer than the idle timeout', 'timeout', null, null);
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new UpstreamError(524, 'Connecting to the provider timed out', 'timeout', null, null);
    default:
      return new UpstreamError(502, `Could not reach the provider (${code ?? e.message ?? 'network error'})`, 'provider_unavailable', null, null);
  }
}
