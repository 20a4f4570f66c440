/**
 * The provider simulator: one `node:http` server hosting any number of
 * simulated providers (`/<provider>/v1/...`, plus `/v1/...` = `default`),
 * each with its own behaviour knobs, a control API under `/_sim/`, stats and
 * a request log. Protocol modules (see `protocol.ts`) render responses; this
 * file routes and applies knobs, model-call.ts paces replies and injects faults.
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
import { anthropicEndpoints } from './anthropic.js';
import { embeddingEndpoints } from './embeddings.js';
import { geminiEndpoints } from './gemini.js';
import { applyPatch, headerKnobs, KnobError, parseKnobs, type KnobPatch, type Knobs } from './knobs.js';
import { openaiEndpoints, openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext } from './protocol.js';
import { runModel, send, type ReqState } from './model-call.js';
import { responsesEndpoints } from './responses.js';
import { ttsEndpoints } from './tts.js';
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
    runModel(res, ep, ctx, state, { failCounts, statsOf }).catch((err: unknown) => {
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
    if (found.method === 'GET' || found.method === 'DELETE') return serveApi(req, res, found, provider, sub, query);
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
