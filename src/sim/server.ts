/**
 * The provider simulator: one `node:http` server hosting any number of
 * simulated providers (`/<provider>/v1/...`, plus `/v1/...` = `default`),
 * each with its own behaviour knobs, a control API under `/_sim/`, stats and
 * a request log. Protocol modules (see `protocol.ts`) render responses; this
 * file routes, applies knobs (delays, pacing, injected faults) and writes.
 *
 * Routes:
 *   POST /v1/chat/completions, GET /v1/models          provider `default`
 *   POST /v1/files (files.ts: OpenAI's and Anthropic's Files API), POST /v1/moderations (moderation.ts), /v1/embeddings (embeddings.ts), /v1/audio/speech (tts.ts), video jobs (video.ts), /v1/images/* (images.ts)
 *   GET  /search?q=…&format=json   a SearXNG search API (search.ts), for the web search server tool
 *   POST /<provider>/v1/chat/completions, GET .../models  provider `<provider>`
 *   POST   /_sim/knobs/<provider>   merge JSON knobs (null removes one)
 *   GET    /_sim/knobs[/<provider>] current knobs
 *   DELETE /_sim/knobs[/<provider>] reset knobs (all, or one provider)
 *   GET    /_sim/stats[/<provider>] stats;  DELETE /_sim/stats  reset stats and log
 *   GET    /_sim/requests[/<provider>] request log;  GET /_sim/health
 * Per-request overrides: `x-sim-<knob-kebab>` headers (e.g. `x-sim-error-status: 503`).
 *
 * Fast path: with no delay knobs a request is answered synchronously after its
 * body is read, with one write and no timers.
 */
import { azureEndpoints } from './azure.js';
import { bedrockEndpoints } from './bedrock.js';
import { vertexEndpoints } from './vertex.js';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { anthropicEndpoints } from './anthropic.js';
import { embeddingEndpoints } from './embeddings.js';
import { geminiEndpoints } from './gemini.js';
import { corrupt, type Malformed } from './corrupt.js';
import { applyPatch, headerKnobs, KnobError, parseKnobs, type KnobPatch, type Knobs } from './knobs.js';
import { openaiEndpoints, openaiProtocol } from './openai.js';
import { sseText, type Endpoint, type EndpointContext, type JsonReply, type SseEvent, type SseReply } from './protocol.js';
import { responsesEndpoints } from './responses.js';
import { isAudioReply, ttsEndpoints, writeAudio } from './tts.js';
import { parseMultipart, sttEndpoints } from './stt.js';
import { rerankEndpoints } from './rerank.js';
import { moderationEndpoints } from './moderation.js';
import { providerFilesEndpoints } from './files.js';
import { searchEndpoints } from './search.js';
import { videoEndpoints } from './video.js';
import { imageEndpoints } from './images.js';

export interface SimulatorOptions {
  /** Port to listen on; 0/absent = a free port. */
  port?: number;
  /** Host to bind; default `127.0.0.1`. */
  host?: string;
  /** When set, API routes require `Authorization: Bearer <apiKey>` (or `x-api-key` / `x-goog-api-key`). */
  apiKey?: string;
  /** Maximum entries kept in `requests` (oldest dropped); default 1000, 0 disables the log. */
  logLimit?: number;
}

export interface ProviderStats {
  /** Model calls received (e.g. chat completions; not `GET /models`). */
  requests: number;
  /** Model calls whose connection the client closed before the response completed. */
  aborted: number;
  /** Model calls answered with an injected `errorStatus` (incl. `failTimes`). */
  failures: number;
  /** Model calls currently open. */
  inFlight: number;
  lastBody: unknown;
  lastHeaders: IncomingHttpHeaders | null;
}

export interface LoggedRequest {
  /** 1-based order of arrival across all providers. */
  seq: number;
  provider: string;
  method: string;
  /** Path after the provider prefix. */
  path: string;
  /** Query string (without `?`; empty when none). */
  query: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** `Date.now()` at arrival. */
  at: number;
  /** Status sent, once headers are sent. */
  status?: number;
  /** True when the client closed the connection before the response completed. */
  aborted?: boolean;
}

export interface Simulator {
  /** Base URL, e.g. `http://127.0.0.1:9100` (append `/v1` or `/<provider>/v1`). */
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  /** Close the server and every open connection at once. */
  close(): Promise<void>;
  /** Merge knobs into a provider's knobs (`null` values remove knobs; resets its `failTimes` counter). */
  setKnobs(provider: string, knobs: KnobPatch): void;
  /** Current knobs of a provider. */
  getKnobs(provider: string): Knobs;
  /** Clear the knobs (and `failTimes` counters) of one provider, or of all. */
  resetKnobs(provider?: string): void;
  /** Stats of one provider (zeros when unseen), or of all seen providers. */
  stats(): Record<string, ProviderStats>;
  stats(provider: string): ProviderStats;
  /** Clear stats and the request log. */
  resetStats(): void;
  /** Log of model calls, oldest first (bounded by `logLimit`). */
  readonly requests: readonly LoggedRequest[];
}

/** Endpoints served for every provider (other protocols get appended here). */
const ENDPOINTS: Endpoint[] = [...openaiEndpoints, ...anthropicEndpoints, ...responsesEndpoints, ...geminiEndpoints, ...azureEndpoints, ...bedrockEndpoints, ...vertexEndpoints];
// Video generation jobs: OpenAI Videos API and Google Veo long-running operations (video.ts).
ENDPOINTS.push(...videoEndpoints);
// Embeddings (embeddings.ts), transcriptions (stt.ts), rerank (rerank.ts: /v1/rerank Jina-style, /v2/rerank Cohere).
ENDPOINTS.push(...embeddingEndpoints, ...sttEndpoints, ...rerankEndpoints);
// OpenAI's moderation API, for the gateway's moderation plugin (moderation.ts).
ENDPOINTS.push(...moderationEndpoints);
// Provider Files APIs (OpenAI's and Anthropic's), for POST /files?provider=… (files.ts).
ENDPOINTS.push(...providerFilesEndpoints);
// A SearXNG search API for the web search server tool (search.ts).
ENDPOINTS.push(...searchEndpoints);
// Text-to-speech (tts.ts): OpenAI /v1/audio/speech and Gemini TTS models, first because the Gemini chat pattern also
// matches a `…tts…` model's generateContent path.
ENDPOINTS.unshift(...ttsEndpoints);
// Image generation (images.ts): OpenAI /v1/images/* and Gemini image models, before the Gemini chat pattern too.
ENDPOINTS.unshift(...imageEndpoints);
/** Protocol used for errors on unknown routes. */
const FALLBACK_PROTOCOL = openaiProtocol;

const EMPTY_KNOBS: Knobs = Object.freeze({});
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** Per-request state for model calls: cancellation of waits and abort accounting. */
interface ReqState {
  closed: boolean;
  /** We destroyed the socket on purpose (`disconnectAfterChunks`): not a client abort. */
  destroyedByUs: boolean;
  /** Cancels the pending wait, if any. */
  wake?: () => void;
  entry?: LoggedRequest;
}

/** Wait `ms`; resolves false (early) if the connection closes. */
function sleep(ms: number, st: ReqState): Promise<boolean> {
  if (st.closed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      st.wake = undefined;
      resolve(true);
    }, ms);
    st.wake = () => {
      clearTimeout(t);
      st.wake = undefined;
      resolve(false);
    };
  });
}

/** Gap between content chunks in ms (0 = unpaced). */
function chunkGap(k: Knobs): number {
  if (k.chunkGapMs !== undefined) return k.chunkGapMs;
  return k.tokensPerSecond ? 1000 / k.tokensPerSecond : 0;
}

function matches(ep: Endpoint, method: string | undefined, path: string): boolean {
  return ep.method === method && (typeof ep.path === 'string' ? ep.path === path : ep.path.test(path));
}

function findEndpoint(method: string | undefined, path: string): Endpoint | undefined {
  for (const ep of ENDPOINTS) if (matches(ep, method, path)) return ep;
  return undefined;
}

function readBody(req: IncomingMessage, done: (text: string, raw: Buffer) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    done(raw.toString(), raw);
  });
  req.on('error', () => {}); // client went away while sending; the response 'close' handler accounts for it
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export async function createSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const host = opts.host ?? '127.0.0.1';
  const logLimit = opts.logLimit ?? 1000;
  const auth = opts.apiKey;
  const knobsBy = new Map<string, Knobs>();
  const failCounts = new Map<string, number>();
  const statsBy = new Map<string, ProviderStats>();
  let log: LoggedRequest[] = [];
  let seq = 0;
  /** Per-instance tag so ids differ across simulator runs. */
  const tag = Math.random().toString(36).slice(2, 6);

  const statsOf = (provider: string): ProviderStats => {
    let s = statsBy.get(provider);
    if (!s) statsBy.set(provider, (s = { requests: 0, aborted: 0, failures: 0, inFlight: 0, lastBody: null, lastHeaders: null }));
    return s;
  };

  const authorized = (h: IncomingHttpHeaders): boolean =>
    auth === undefined || h.authorization === `Bearer ${auth}` || h['x-api-key'] === auth || h['x-goog-api-key'] === auth || h['api-key'] === auth;

  /** The presented key is one the provider's `rejectKeys` knob refuses. */
  const revoked = (k: Knobs, h: IncomingHttpHeaders): boolean => {
    if (!k.rejectKeys || k.rejectKeys.length === 0) return false;
    const bearer = typeof h.authorization === 'string' ? h.authorization.replace(/^Bearer /, '') : undefined;
    return [bearer, h['x-api-key'], h['x-goog-api-key'], h['api-key']].some((v) => typeof v === 'string' && k.rejectKeys!.includes(v));
  };

  /** Write a complete JSON reply. */
  function send(res: ServerResponse, reply: JsonReply, ctx: EndpointContext, st?: ReqState, body = reply.body): void {
    if (st) {
      if (st.closed) return;
      if (st.entry) st.entry.status = reply.status;
    }
    res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(body), 'x-request-id': `req_${ctx.rid}` });
    res.end(body);
  }

  /** Destroy the connection on purpose (`disconnectAfterChunks`), after `data` (if any) is flushed. */
  function disconnect(res: ServerResponse, st: ReqState, data?: string | Uint8Array): void {
    st.destroyedByUs = true;
    if (data) res.write(data, () => res.destroy());
    else res.destroy();
  }

  /** Model call: latency, faults, generation pacing. */
  async function runModel(res: ServerResponse, ep: Endpoint, ctx: EndpointContext, st: ReqState): Promise<void> {
    const k = ctx.knobs;
    // Fault knobs apply to every request, or only to the first `failTimes` ones.
    let faulty = true;
    if (k.failTimes !== undefined) {
      const n = failCounts.get(ctx.provider) ?? 0;
      faulty = n < k.failTimes;
      if (faulty) failCounts.set(ctx.provider, n + 1);
    }
    const anyFault =
      k.errorStatus !== undefined || k.hang || k.errorAfterChunks !== undefined || k.disconnectAfterChunks !== undefined || k.malformed;
    const errorStatus = faulty ? (k.errorStatus ?? (k.failTimes !== undefined && !anyFault ? 500 : undefined)) : undefined;

    if (k.latencyMs && !(await sleep(k.latencyMs, st))) return;
    if (faulty && k.hang) return; // never answer; the 'close' handler cleans up
    if (errorStatus !== undefined) {
      statsOf(ctx.provider).failures++;
      return send(res, ep.protocol.error(errorStatus, ctx), ctx, st);
    }

    const reply = ep.handle(ctx);
    const errorAfter = faulty ? k.errorAfterChunks : undefined;
    const disconnectAfter = faulty ? k.disconnectAfterChunks : undefined;
    const malformed = faulty ? k.malformed : undefined;
    if (reply.kind === 'sse') return stream(res, reply, ep, ctx, st, errorAfter, disconnectAfter, malformed);
    if (isAudioReply(reply) && reply.status === 200) {
      if (st.closed) return;
      const io = { sleep: (ms: number) => sleep(ms, st), disconnect: () => disconnect(res, st), status: (code: number) => void (st.entry && (st.entry.status = code)) };
      return writeAudio(res, reply, k, { errorAfter, disconnectAfter, malformed }, io, ctx.rid);
    }

    const body = reply.status === 200 && malformed ? corrupt(reply.body, malformed, k.hugeBytes) : reply.body;
    if (reply.status !== 200 || reply.chunks === undefined) return send(res, reply, ctx, st, body);
    // A complete response stands for `chunks` generated chunks: take the time to "generate" them.
    const gap = chunkGap(k);
    const fault = Math.min(errorAfter ?? Infinity, disconnectAfter ?? Infinity);
    const n = Math.min(fault, reply.chunks);
    const wait = (k.ttftMs ?? 0) + Math.max(0, n - 1) * gap;
    if (wait > 0 && !(await sleep(wait, st))) return;
    if (fault !== Infinity) {
      if (fault === errorAfter) return send(res, ep.protocol.error(500, ctx), ctx, st);
      return disconnect(res, st);
    }
    send(res, reply, ctx, st, body);
  }

  /** Write an SSE reply, pacing content events and injecting chunk faults. */
  async function stream(
    res: ServerResponse,
    reply: SseReply,
    ep: Endpoint,
    ctx: EndpointContext,
    st: ReqState,
    errorAfter: number | undefined,
    disconnectAfter: number | undefined,
    malformed: Malformed | undefined,
  ): Promise<void> {
    if (st.closed) return;
    if (st.entry) st.entry.status = 200;
    res.writeHead(200, { ...SSE_HEADERS, 'x-request-id': `req_${ctx.rid}`, ...reply.headers });
    if (malformed === 'empty') return void res.end();
    // SSE text, or the reply's own framing (binary event streams): `buf` holds what is not written yet.
    const frame = reply.frame;
    const enc = (ev: SseEvent): string | Uint8Array => (frame ? frame(ev) : sseText(ev));
    const join = (a: string | Uint8Array, b: string | Uint8Array): string | Uint8Array =>
      typeof a === 'string' && typeof b === 'string' ? a + b : Buffer.concat([Buffer.from(a), Buffer.from(b)]);
    const empty = (b: string | Uint8Array) => b.length === 0;

    const events = reply.events;
    // Index of the event before which a chunk fault fires: the N-th content event,
    // or right after the last content event when there are fewer.
    let firstContent = -1;
    let lastContent = -1;
    const contentIdx: number[] = [];
    for (let i = 0; i < events.length; i++) {
      if (events[i].content) {
        if (firstContent === -1) firstContent = i;
        lastContent = i;
        if (errorAfter !== undefined || disconnectAfter !== undefined) contentIdx.push(i);
      }
    }
    const faultAt = (n: number | undefined) => (n === undefined ? -1 : n < contentIdx.length ? contentIdx[n] : lastContent + 1);
    const errorIdx = faultAt(errorAfter);
    const disconnectIdx = faultAt(disconnectAfter);
    const brokenIdx = malformed ? Math.max(0, firstContent) : -1;

    const ttft = ctx.knobs.ttftMs ?? 0;
    const gap = chunkGap(ctx.knobs);
    if (ttft > 0 || gap > 0) res.flushHeaders();
    let buf: string | Uint8Array = '';
    let sent = 0; // content events written
    let t0 = 0; // time of the first content event (pacing reference, no drift)
    for (let i = 0; i <= events.length; i++) {
      if (i === errorIdx && (disconnectIdx === -1 || errorIdx <= disconnectIdx)) {
        return void res.end(join(buf, enc(ep.protocol.streamError(ctx))));
      }
      if (i === disconnectIdx) return disconnect(res, st, empty(buf) ? (frame ? undefined : ': sim\n\n') : buf);
      if (i === events.length) break;
      const ev = events[i];
      // ttft before the first event; then content events every `gap` ms from the first one.
      let wait = i === 0 ? ttft : 0;
      if (ev.content && sent > 0 && gap > 0) wait = t0 + sent * gap - performance.now();
      if (wait >= 1) {
        if (!empty(buf)) res.write(buf);
        buf = '';
        if (!(await sleep(wait, st))) return;
      }
      if (ev.content && sent++ === 0) t0 = performance.now();
      buf = join(buf, i === brokenIdx ? enc({ ...ev, data: corrupt(ev.data, malformed!, ctx.knobs.hugeBytes) }) : enc(ev));
    }
    res.end(buf);
  }

  /** API route (model call or listing) after the body is read. */
  function serveApi(req: IncomingMessage, res: ServerResponse, ep: Endpoint, provider: string, path: string, query: string, text?: string, raw?: Buffer): void {
    const headers = req.headers;
    const rid = tag + (++seq).toString(36);
    let body: unknown;
    let badJson = false;
    const multipart = /^multipart\/form-data/i.test(headers['content-type'] ?? '');
    if (multipart && raw !== undefined) {
      // Uploads (transcriptions): fields as strings, files as { filename, contentType, data: Buffer }.
      body = parseMultipart(raw, headers['content-type']!);
      badJson = body === null;
    } else if (text !== undefined && /^application\/x-www-form-urlencoded/i.test(headers['content-type'] ?? '')) {
      // Form posts (OAuth token endpoints): the endpoint reads `rawBody`.
      body = undefined;
    } else if (text !== undefined) {
      try {
        body = JSON.parse(text);
      } catch {
        badJson = true;
      }
    }
    const base = knobsBy.get(provider) ?? EMPTY_KNOBS;
    const fullPath = provider === 'default' ? path : `/${provider}${path}`;
    const ctx: EndpointContext = { provider, path, query, body, headers, knobs: base, rid, rawBody: text, fullPath };

    let st: ReqState | undefined;
    if (ep.modelCall) {
      const ps = statsOf(provider);
      ps.requests++;
      ps.inFlight++;
      ps.lastBody = badJson ? text : body;
      ps.lastHeaders = headers;
      const state: ReqState = (st = { closed: false, destroyedByUs: false });
      if (logLimit > 0) {
        state.entry = { seq, provider, method: req.method ?? 'GET', path, query, headers, body, at: Date.now() };
        if (log.length >= logLimit) log.splice(0, log.length - logLimit + 1);
        log.push(state.entry);
      }
      res.once('close', () => {
        state.closed = true;
        ps.inFlight--;
        if (!res.writableFinished && !state.destroyedByUs) {
          ps.aborted++;
          if (state.entry) state.entry.aborted = true;
        }
        state.wake?.();
      });
    }

    if (!authorized(headers) || revoked(base, headers)) {
      const message = headers.authorization || headers['x-api-key'] ? 'Incorrect API key provided.' : "You didn't provide an API key.";
      return send(res, ep.protocol.error(401, ctx, { message, type: 'invalid_request_error', code: 'invalid_api_key' }), ctx, st);
    }
    try {
      const over = headerKnobs(headers);
      if (over) ctx.knobs = { ...base, ...over };
    } catch (e) {
      return send(res, ep.protocol.error(400, ctx, { message: (e as Error).message, param: null, code: 'invalid_sim_header' }), ctx, st);
    }
    if (badJson) {
      const message =
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. " +
        'The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)';
      return send(res, ep.protocol.error(400, ctx, { message, type: 'invalid_request_error', param: null, code: null }), ctx, st);
    }
    if (!st) {
      const reply = ep.handle(ctx);
      if (reply.kind === 'json') send(res, reply, ctx);
      else res.end(); // listings never stream
      return;
    }
    const state = st;
    runModel(res, ep, ctx, state).catch((err: unknown) => {
      if (!res.headersSent) {
        send(res, ep.protocol.error(500, ctx, { message: `Simulator failure: ${String(err)}` }), ctx, state);
      } else res.destroy();
    });
  }

  /** Control API under `/_sim/`. */
  function control(req: IncomingMessage, res: ServerResponse, path: string, text: string): void {
    const parts = path.split('/').filter(Boolean); // ['_sim', 'knobs', provider?]
    const [, what, provider] = parts;
    const m = req.method;
    try {
      if (what === 'knobs' && m === 'POST' && provider) {
        sim.setKnobs(provider, parseKnobs(text === '' ? {} : JSON.parse(text)));
        return sendJson(res, 200, { provider, knobs: sim.getKnobs(provider) });
      }
      if (what === 'knobs' && m === 'GET') {
        return sendJson(res, 200, provider ? sim.getKnobs(provider) : Object.fromEntries(knobsBy));
      }
      if (what === 'knobs' && m === 'DELETE') {
        sim.resetKnobs(provider);
        return sendJson(res, 200, { ok: true });
      }
      if (what === 'stats' && m === 'GET') return sendJson(res, 200, provider ? sim.stats(provider) : sim.stats());
      if (what === 'stats' && m === 'DELETE') {
        sim.resetStats();
        return sendJson(res, 200, { ok: true });
      }
      if (what === 'requests' && m === 'GET') {
        return sendJson(res, 200, provider ? log.filter((r) => r.provider === provider) : log);
      }
      if (what === 'health' && m === 'GET') return sendJson(res, 200, { ok: true });
      sendJson(res, 404, { error: { message: `Unknown control route ${m} ${path}` } });
    } catch (e) {
      sendJson(res, 400, { error: { message: e instanceof KnobError ? e.message : `Bad request: ${(e as Error).message}` } });
    }
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? '' : url.slice(q + 1);

    if (path.startsWith('/_sim/')) return readBody(req, (text) => control(req, res, path, text));

    // `/v1/...` belongs to `default`; otherwise the first segment names the provider.
    let provider = 'default';
    let sub = path;
    let ep = findEndpoint(req.method, path);
    if (!ep) {
      const i = path.indexOf('/', 1);
      if (i > 1) {
        provider = path.slice(1, i);
        sub = path.slice(i);
        ep = findEndpoint(req.method, sub);
      }
    }
    if (!ep) {
      const ctx = { provider, path, query, body: undefined, headers: req.headers, knobs: EMPTY_KNOBS, rid: tag + '0' };
      const r = FALLBACK_PROTOCOL.error(404, ctx, { message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error', param: null, code: null });
      return send(res, r, ctx);
    }
    const found = ep;
    if (found.method === 'GET') return serveApi(req, res, found, provider, sub, query);
    readBody(req, (text, raw) => serveApi(req, res, found, provider, sub, query, text, raw));
  }

  const server = createServer({ keepAlive: true, noDelay: true, requestTimeout: 0 }, onRequest);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;

  function stats(): Record<string, ProviderStats>;
  function stats(provider: string): ProviderStats;
  function stats(provider?: string): ProviderStats | Record<string, ProviderStats> {
    if (provider !== undefined) return { ...statsOf(provider) };
    const out: Record<string, ProviderStats> = {};
    for (const [p, s] of statsBy) out[p] = { ...s };
    return out;
  }

  const sim: Simulator = {
    url: `http://${hostForUrl(host)}:${port}`,
    port,
    server,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
    setKnobs(provider, patch) {
      const checked = parseKnobs(patch);
      knobsBy.set(provider, applyPatch(knobsBy.get(provider) ?? EMPTY_KNOBS, checked));
      if ('failTimes' in checked) failCounts.delete(provider);
    },
    getKnobs(provider) {
      return { ...(knobsBy.get(provider) ?? EMPTY_KNOBS) };
    },
    resetKnobs(provider) {
      if (provider === undefined) {
        knobsBy.clear();
        failCounts.clear();
      } else {
        knobsBy.delete(provider);
        failCounts.delete(provider);
      }
    },
    stats,
    resetStats() {
      // Keep in-flight counts: open requests still decrement them when they close.
      for (const s of statsBy.values()) Object.assign(s, { requests: 0, aborted: 0, failures: 0, lastBody: null, lastHeaders: null });
      log = [];
    },
    get requests() {
      return log;
    },
  };
  return sim;
}
