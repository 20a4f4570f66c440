/**
 * Upstream HTTP: one keep-alive undici pool per provider origin, with separate connect, first-byte (headers),
 * idle-between-chunks (body) and total timeouts. Only URLs built from configured provider base URLs are ever called.
 * Each origin's pool is bounded by its provider's `max_connections` (GATEWAY_UPSTREAM_CONNECTIONS by default) and may
 * speak HTTP/2 (`http2`); past the bound, requests wait in the pool's queue.
 */
import type { ServerResponse } from 'node:http';
import type { Dispatcher, Pool } from 'undici';
import { FlatPool } from './pool.js';
import type { Timeouts } from '../core/catalog-types.js';
import { UpstreamError } from '../core/provider-errors.js';
import { lentBody, SOCKET_HIGH_WATER_MARK } from '../core/body-slabs.js';

/** One inference attempt: a POST to a URL built from a configured provider base URL. */
export interface UpstreamCall {
  url: URL;
  headers: Record<string, string>;
  /** Buffer[]: parts written in turn (the headers then carry their total as content-length). */
  body: string | Buffer | Buffer[];
  timeouts: Timeouts;
  /** Set when the client goes away: the attempt is aborted at once. */
  cancel: Cancellation;
}

/** What `OriginPools.request` sends (the URL must be built from a configured provider base URL). */
export interface PoolCall {
  url: URL;
  headers: Record<string, string>;
  body?: string;
  timeouts: Timeouts;
  signal?: AbortSignal;
}

/** The client went away (499) / the provider did not finish within the total timeout (524). */
const clientGone = () => new UpstreamError(499, 'Request cancelled by the client', 'cancelled', null, null);
/** A whole (non-streamed) answer beyond the gateway's bound (`GATEWAY_UPSTREAM_MAX_BYTES`): refused, never buffered. */
export const tooLarge = (max: number) => new UpstreamError(502, `Provider returned a response larger than ${max} bytes`, 'provider_unavailable', 200, null);
/** Default bound of a whole upstream answer read into memory (128 MiB). */
export const DEFAULT_UPSTREAM_MAX_BYTES = 128 * 1024 * 1024;
const totalTimeout = () => new UpstreamError(524, 'Provider did not finish within the total timeout', 'timeout', null, null);

/** Upstream URLs are built once per provider and reused: their origin and path are read once too. */
const targets = new WeakMap<URL, { origin: string; path: string }>();
function targetOf(url: URL): { origin: string; path: string } {
  let t = targets.get(url);
  if (!t) {
    t = { origin: url.origin, path: url.pathname + url.search };
    targets.set(url, t);
  }
  return t;
}

/** Streams per HTTP/2 connection (what most servers allow, and undici's default). */
const H2_STREAMS = 100;

/** How many connections an origin's pool may open, and whether it negotiates HTTP/2. */
export interface OriginLimits {
  connections: number;
  http2: boolean;
}

/**
 * Keep-alive undici pools, one per origin and connect timeout, created on first use with the given options (and the
 * origin's limits, when a resolver is given: they override `connections`).
 */
export class OriginPools {
  private readonly pools = new Map<string, Pool>();
  /** Pools that negotiate HTTP/2. */
  private readonly h2 = new Set<Pool>();

  constructor(
    private readonly options: Omit<Pool.Options, 'connect'>,
    private readonly limits: ((origin: string) => OriginLimits) | null = null,
  ) {}

  private pool(origin: string, connectMs: number): Pool {
    const id = `${origin}|${connectMs}`;
    let p = this.pools.get(id);
    if (!p) {
      const l = this.limits?.(origin);
      // HTTP/2: up to H2_STREAMS requests share a connection (undici counts them as pipelined requests).
      const h2 = l?.http2 ? { allowH2: true, pipelining: H2_STREAMS, maxConcurrentStreams: H2_STREAMS } : {};
      p = new FlatPool(origin, { ...this.options, ...(l ? { connections: l.connections } : {}), ...h2, connect: connectOptions(connectMs) });
      this.pools.set(id, p);
      if (l?.http2) this.h2.add(p);
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

  /** Dispatches a POST with a raw undici handler (the hot path: no Readable, no AbortSignal). */
  dispatch(call: UpstreamCall, handler: Dispatcher.DispatchHandler): void {
    const target = targetOf(call.url);
    const pool = this.pool(target.origin, call.timeouts.connectMs);
    const h2 = this.h2.size > 0 && this.h2.has(pool);
    // Parts in a request body's slabs are lent for the write, given back once handed over (core/body-slabs.ts).
    const body = Array.isArray(call.body) ? (lentBody(call.body, h2) ?? call.body) : call.body;
    // One object literal of a fixed shape (a spread of an optional field would copy it through the runtime).
    const opts: Dispatcher.DispatchOptions = {
      method: 'POST',
      path: target.path,
      headers: call.headers,
      // undici writes an iterable body part by part (documented; its DispatchOptions type lists no iterable).
      body: body as string | Buffer,
      headersTimeout: call.timeouts.firstByteMs,
      bodyTimeout: call.timeouts.idleMs,
      // Over HTTP/2 undici sends a non-idempotent request only when its session has nothing else in flight: POSTs
      // would take turns on each connection. Marked idempotent they share it (undici never retries them itself).
      idempotent: h2 ? true : undefined,
    };
    pool.dispatch(opts, handler);
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
  }
}

/**
 * The client side of a request going away, without an AbortController: set once, and calls the one attempt currently
 * listening (inference attempts run one after the other). EventTarget-based signals cost several microseconds per
 * request on the hot path; this costs a field write.
 */
export class Cancellation {
  aborted = false;
  private listener: (() => void) | null = null;

  /** Set when the client's connection closes before `res` was fully written. */
  static of(res: ServerResponse): Cancellation {
    const cancel = new Cancellation();
    res.on('close', () => {
      if (!res.writableFinished) cancel.abort();
    });
    return cancel;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const l = this.listener;
    this.listener = null;
    l?.();
  }

  listen(fn: () => void): void {
    this.listener = fn;
  }

  unlisten(fn: () => void): void {
    if (this.listener === fn) this.listener = null;
  }
}

const HIGH_WATER = 256 * 1024;
const LOW_WATER = 64 * 1024;

/**
 * One upstream exchange, driven by undici's dispatch API (no Readable stream, no AbortSignal per request): the
 * response status and headers, then the body as a queue of buffers read with `read()` (streams, with back-pressure)
 * or whole with `text()`. Failures — network, first-byte/idle/total timeout, client gone — are UpstreamErrors.
 * `close()` must be called when the caller is done: it stops the total-timeout timer and aborts an unfinished body.
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler {
  statusCode = 0;
  headers: Record<string, string | string[] | undefined> = {};
  private controller: Dispatcher.DispatchController | null = null;
  private pendingAbort: UpstreamError | null = null;
  private readonly queue: Buffer[] = [];
  private queued = 0;
  private ended = false;
  private error: UpstreamError | null = null;
  /** Woken when data, the end or an error arrives (`text()`). */
  private waiter: (() => void) | null = null;
  /** A `read()` waiting on an empty queue: the next buffer is handed to it as it arrives (no queue, no extra promise). */
  private pending: { resolve: (b: Buffer | null) => void; reject: (e: UpstreamError) => void } | null = null;
  /** Read whole (`text()`): never paused, whatever the size. */
  private whole = false;
  /** Bounded as a whole answer (`text()` or `boundAsWhole()`): past `maxBytes` received, the exchange fails. */
  private capped = false;
  private started: ((x: UpstreamExchange) => void) | null;
  private failedToStart: ((e: UpstreamError) => void) | null;
  private readonly timer: NodeJS.Timeout;
  private readonly onCancel = () => this.abort(clientGone());
  /** Body bytes received so far. */
  private received = 0;

  constructor(
    private readonly cancel: Cancellation,
    totalMs: number,
    resolve: (x: UpstreamExchange) => void,
    reject: (e: UpstreamError) => void,
    /**
     * The most `text()` reads into memory (a stream read with `read()` is bounded per event by its parser, and as a
     * whole only after `boundAsWhole()`).
     */
    private readonly maxBytes = DEFAULT_UPSTREAM_MAX_BYTES,
  ) {
    this.started = resolve;
    this.failedToStart = reject;
    this.timer = setTimeout(() => this.abort(totalTimeout()), totalMs);
    cancel.listen(this.onCancel);
  }

  /** Aborts the exchange with `err` (what a pending or later read throws). */
  abort(err: UpstreamError): void {
    if (this.ended || this.error) return;
    if (this.controller) this.controller.abort(err);
    else this.pendingAbort = err;
  }

  /** Done with the exchange: stops the timer, stops listening for the client, aborts an unfinished body. */
  close(): void {
    clearTimeout(this.timer);
    this.cancel.unlisten(this.onCancel);
    if (!this.ended && !this.error) this.abort(new UpstreamError(499, 'Response body discarded', 'cancelled', null, null));
  }

  /** True once the whole body has arrived and been read: the next `read()` returns null. */
  get finished(): boolean {
    return this.ended && this.queue.length === 0;
  }

  /** The next body buffer, or null at the end of the body. Throws the exchange's UpstreamError. */
  read(): Promise<Buffer | null> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.error) return Promise.reject(this.error);
    if (this.ended) return Promise.resolve(null);
    return new Promise<Buffer | null>((resolve, reject) => (this.pending = { resolve, reject }));
  }

  /**
   * Bounds the body as a whole answer while it is read as a stream (`read()`): once more than `maxBytes` have arrived,
   * the exchange fails with `tooLarge` (the data past the bound is dropped, what came before it is still read) — for
   * a streamed answer the reader keeps whole, e.g. the completed images of a streamed images answer.
   */
  boundAsWhole(): void {
    this.capped = true;
    if (this.received <= this.maxBytes || this.error) return;
    // Already past the bound (the body may even have arrived whole): none of it is read.
    this.queue.length = 0;
    this.queued = 0;
    if (this.ended) this.error = tooLarge(this.maxBytes);
    else this.abort(tooLarge(this.maxBytes));
  }

  /** The whole body as UTF-8 text. */
  async text(): Promise<string> {
    this.whole = true;
    this.boundAsWhole();
    if (this.controller?.paused) this.controller.resume();
    while (!this.ended && !this.error) await new Promise<void>((wake) => (this.waiter = wake));
    if (this.error) throw this.error;
    const q = this.queue;
    return q.length === 1 ? q[0].toString('utf8') : Buffer.concat(q).toString('utf8');
  }

  private take(): Buffer {
    const b = this.queue.shift()!;
    this.queued -= b.length;
    if (this.controller?.paused && this.queued < LOW_WATER) this.controller.resume();
    return b;
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  // ---- undici DispatchHandler ----

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort) controller.abort(this.pendingAbort);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.statusCode = statusCode;
    this.headers = headers;
    const start = this.started;
    this.started = this.failedToStart = null;
    start?.(this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.received += chunk.length;
    if (this.capped && this.received > this.maxBytes) return void this.abort(tooLarge(this.maxBytes));
    const p = this.pending;
    if (p !== null) {
      // A read waits, so the queue is empty: the buffer is its (what queueing it and taking it back would give).
      this.pending = null;
      return p.resolve(chunk);
    }
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.queued > HIGH_WATER && !this.whole) controller.pause();
    this.wake();
  }

  onResponseEnd(): void {
    this.ended = true;
    clearTimeout(this.timer);
    const p = this.pending;
    this.pending = null;
    p?.resolve(null);
    this.wake();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.error = networkError(err);
    clearTimeout(this.timer);
    const fail = this.failedToStart;
    this.started = this.failedToStart = null;
    if (fail) fail(this.error);
    else {
      const p = this.pending;
      this.pending = null;
      p?.reject(this.error);
      this.wake();
    }
  }
}

export class UpstreamHttp {
  private readonly pools: OriginPools;

  /**
   * `limits`: each provider origin's connection bound and HTTP/2 setting (default: 16,384 HTTP/1.1 connections).
   * `maxBodyBytes`: the most a whole (non-streamed) answer may weigh (`GATEWAY_UPSTREAM_MAX_BYTES`).
   */
  constructor(
    limits: ((origin: string) => OriginLimits) | null = null,
    private readonly maxBodyBytes = DEFAULT_UPSTREAM_MAX_BYTES,
  ) {
    this.pools = new OriginPools({ connections: 16_384, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000 }, limits);
  }

  /**
   * Sends a POST; resolves with the exchange when the response headers arrive (any status). Network failures and
   * timeouts reject with an UpstreamError.
   */
  post(call: UpstreamCall): Promise<UpstreamExchange> {
    if (call.cancel.aborted) return Promise.reject(clientGone());
    return new Promise<UpstreamExchange>((resolve, reject) => {
      const exchange = new UpstreamExchange(
        call.cancel,
        call.timeouts.totalMs,
        resolve,
        (e) => {
          exchange.close();
          reject(e);
        },
        this.maxBodyBytes,
      );
      this.pools.dispatch(call, exchange);
    });
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
    return reason?.name === 'TimeoutError' ? totalTimeout() : clientGone();
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

/**
 * undici's connector spreads these into `net.connect` / `tls.connect` (its type does not list `highWaterMark`): every
 * upstream socket gets the high-water mark the lent bodies' tail copy is sized from (core/body-slabs.ts).
 */
function connectOptions(timeout: number): { timeout: number } {
  return { timeout, highWaterMark: SOCKET_HIGH_WATER_MARK } as { timeout: number };
}
