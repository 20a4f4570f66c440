/**
 * Chat completions: presets, model and routing resolution, upstream attempts with fallbacks, streaming relay,
 * cost, gateway metadata and the generation record. The HTTP route only validates and hands over.
 */
import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { estimatePromptTokens, irPromptTokens } from '../core/chat-shape.js';
import { requestParams } from '../core/params.js';
import { computeCost, type TokenUsage } from '../core/pricing.js';
import { mergePreset, parsePresetModel } from '../core/presets.js';
import { isoTime } from '../core/time.js';
import { splitVariant } from '../core/variants.js';
import { applyDeprecatedRoute, type ProviderPreferences, type ProviderSortBy } from '../core/provider-prefs.js';
import { planRoute, type Attempt, type RoutePlan } from '../core/routing.js';
import { badRequest, HttpError } from '../core/errors.js';
import { UpstreamError } from '../core/provider-errors.js';
import { networkError, type Cancellation, type UpstreamExchange, type UpstreamHttp } from '../providers/http.js';
import type { GenerationRow, KeyRow } from '../store/types.js';
import type { IrRequest } from '../core/ir.js';
import { unpricedCostDetails, type AnswerMeta } from '../core/adapters.js';
import type { PipelineEntry } from '../core/content-filters/index.js';
import { codecFor, INBOUND, irParams, type AttemptCodec, type InboundApi, type StreamSession } from './codecs.js';
import { checkMessagesBody, messagesFallbackModels } from '../inbound/messages.js';
import { checkStateless } from '../inbound/responses.js';
import type { CatalogService } from './catalog.js';
import type { GenerationRecorder } from './generations.js';
import type { HealthTracker } from './health.js';
import type { PresetService } from './presets.js';
import type { WorkspaceService } from './workspaces.js';
import type { GuardrailService } from './guardrails.js';

export interface ChatOptions {
  /** Interval of `: GATEWAY PROCESSING` comments while a stream waits (ms). */
  keepaliveMs: number;
  /** How long a session stays pinned to its endpoint (ms). */
  sessionTtlMs: number;
}

export interface ChatCall {
  key: KeyRow;
  requestId: string;
  wantMetadata: boolean;
  sessionHeader?: string;
  /** Set when the client goes away. */
  cancel: Cancellation;
}

interface Prepared {
  api: InboundApi;
  body: Record<string, unknown>;
  /** The request in the internal representation (built when an attempt needs translation). */
  ir?: Omit<IrRequest, 'model'>;
  /** 'translated' when some attempt goes through the IR (any pair but chat → OpenAI protocol). */
  protocols: Set<'translated'>;
  requested: string;
  plan: RoutePlan;
  stream: boolean;
  presetId: string | null;
  sessionId: string | null;
  dropped: Map<string, string[]>;
  /** Ends the request's in-flight count against the key's limit (idempotent; called by record and by the route). */
  release: (cost: number | null) => void;
  /** `gateway_metadata.pipeline` entries (content guardrails). */
  pipeline?: PipelineEntry[];
}

export interface AttemptLog {
  provider: string;
  model: string;
  status: number;
  message?: string;
}

interface Outcome {
  attempt: Attempt | null;
  attemptNo: number;
  usage: TokenUsage | null;
  upstreamId: string | null;
  finish: string | null;
  nativeFinish: string | null;
  status: number;
  error: UpstreamError | HttpError | null;
  ttftMs: number | null;
  cancelled: boolean;
  started: number;
  firstTokenAt: number | null;
}

/** A random per-process prefix and a counter: unique across instances, and cheap on the hot path. */
const GEN_PREFIX = randomBytes(9).toString('base64url');
let genCounter = 0;

export function newGenerationId(): string {
  genCounter = (genCounter + 1) % 0x7fffffff;
  return `gen-${Math.floor(Date.now() / 1000)}-${GEN_PREFIX}${genCounter.toString(36)}`;
}

/** The response head of an event stream (every streamed answer: chat, server-tool loops, cache hits). */
export function eventStreamHead(generationId: string | null, requestId: string): Record<string, string> {
  const head: Record<string, string> = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no', 'x-request-id': requestId };
  if (generationId) head['x-generation-id'] = generationId;
  return head;
}

/** Resolves when a response that pushed back can take more (or is closed). Shared with speech. */
export function drained(raw: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      raw.off('drain', done);
      raw.off('close', done);
      resolve();
    };
    raw.on('drain', done);
    raw.on('close', done);
  });
}

/** `headers` with `retry-after` (seconds) added when there is one; `headers` as given (possibly undefined) otherwise. */
function withRetryAfter(headers: Record<string, string> | undefined, seconds: number | null): Record<string, string> | undefined {
  return seconds !== null ? { ...headers, 'retry-after': String(seconds) } : headers;
}

/** The routing error of an empty plan as an HttpError; `headers` are added to the reply (shared with speech). */
export function planHttpError(plan: RoutePlan, headers?: Record<string, string>): HttpError {
  const e = plan.error!;
  const metadata: Record<string, unknown> = { error_type: e.code === 'model_not_found' ? 'not_found' : e.code, excluded_by: e.excluded_by ?? [] };
  const unroutable = plan.considered.filter((c) => c.excluded === 'no_credentials').map((c) => c.provider);
  if (unroutable.length > 0) metadata.providers_without_credentials = [...new Set(unroutable)];
  return new HttpError(e.status, e.message, metadata, withRetryAfter(headers, e.retry_after_ms ? Math.ceil(e.retry_after_ms / 1000) : null));
}

/**
 * The error reply after every attempt failed: the last error, with the provider detail in metadata; `headers` are
 * added to the reply (shared with speech).
 */
export function attemptsHttpError(last: UpstreamError | null, lastAttempt: Attempt | null, attempts: AttemptLog[], retryHints: number[], headers?: Record<string, string>): HttpError {
  if (!last) return new HttpError(503, 'No endpoint could serve the request', { error_type: 'provider_unavailable' }, headers);
  const metadata: Record<string, unknown> = {
    error_type: last.type,
    provider_name: lastAttempt?.provider.name ?? null,
    raw: last.raw,
    is_byok: false,
    previous_errors: attempts.slice(0, -1),
  };
  if (last.providerCode !== null) metadata.provider_code = last.providerCode;
  // Retry-After only when every attempt gave one: the smallest of them.
  const hint = retryHints.length > 0 && retryHints.length === attempts.length ? Math.min(...retryHints) : null;
  const message = last.status >= 500 && last.type !== 'timeout' ? `Provider returned error: ${last.message}` : last.message;
  return new HttpError(last.status, message, metadata, withRetryAfter(headers, hint));
}

export class ChatService {
  private readonly sessions = new Map<string, { model: string; tag: string; at: number }>();

  constructor(
    private readonly deps: {
      catalog: CatalogService;
      health: HealthTracker;
      http: UpstreamHttp;
      recorder: GenerationRecorder;
      presets: PresetService;
      workspaces: WorkspaceService;
      /** Organization settings and guardrails; absent = no policy. */
      guardrails?: GuardrailService;
      log: Logger;
      options: ChatOptions;
      now?: () => number;
      rng?: () => number;
    },
  ) {}

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  // ---- preparation -------------------------------------------------------------------------------

  /** Applies presets and checks cross-field rules, then plans the route. Throws HttpError (4xx) on bad input. */
  async prepare(api: InboundApi, input: Record<string, unknown>, call: ChatCall): Promise<Prepared> {
    let body = input;
    if (api === 'responses') {
      const problem = checkStateless(body);
      if (problem) throw badRequest(problem, { field: body.store === true ? 'store' : 'previous_response_id' });
    }
    if (api === 'messages') {
      const problem = checkMessagesBody(body);
      if (problem) throw badRequest(problem);
    }
    const fromModel = parsePresetModel(typeof body.model === 'string' ? body.model : undefined);
    const presetSlug = (typeof body.preset === 'string' ? body.preset : undefined) ?? fromModel.preset;
    let presetId: string | null = null;
    if (presetSlug) {
      const { preset, version } = await this.deps.presets.designatedCached(call.key.workspace_id, presetSlug);
      presetId = preset.id;
      const request = { ...body, model: fromModel.model };
      if (request.model === undefined) delete request.model;
      body = mergePreset(version.config, request);
      // The preset's system prompt: prepended in chat; in the other APIs, used when the request has none.
      if (version.system_prompt) {
        if (api === 'chat' && Array.isArray(body.messages)) body.messages = [{ role: 'system', content: version.system_prompt }, ...(body.messages as unknown[])];
        if (api === 'messages' && body.system === undefined) body.system = version.system_prompt;
        if (api === 'responses' && (body.instructions === undefined || body.instructions === null)) body.instructions = version.system_prompt;
      }
    }

    const reasoning = body.reasoning as { effort?: string | null } | undefined;
    if (body.reasoning_effort != null && reasoning?.effort != null && body.reasoning_effort !== reasoning.effort) {
      throw badRequest(`reasoning_effort ("${body.reasoning_effort}") differs from reasoning.effort ("${reasoning.effort}"); send one or make them equal`, { field: 'reasoning_effort' });
    }

    const workspace = await this.deps.workspaces.cached(call.key.workspace_id);
    const requestedModels: string[] = [];
    const first = typeof body.model === 'string' ? body.model : (workspace?.default_text_model ?? undefined);
    if (first) requestedModels.push(first);
    const more = api === 'messages' ? [...messagesFallbackModels(body), ...((body.models as string[] | undefined) ?? [])] : ((body.models as string[] | undefined) ?? []);
    for (const m of more) if (!requestedModels.includes(m)) requestedModels.push(m);
    if (requestedModels.length === 0) throw badRequest('model is required (or models, a preset, or the workspace default_text_model)', { field: 'model' });

    let provider = applyDeprecatedRoute((body.provider as ProviderPreferences | null | undefined) ?? undefined, body.route as 'fallback' | 'sort' | undefined) ?? {};
    const models: string[] = [];
    for (const id of requestedModels) {
      const { base, variant } = splitVariant(id);
      models.push(base);
      if (variant === 'nitro' && !provider.sort) provider = { ...provider, sort: 'throughput' };
      if (variant === 'floor' && !provider.sort) provider = { ...provider, sort: 'price' };
      if (variant === 'free') provider = { ...provider, max_price: { ...provider.max_price, prompt: 0, completion: 0 } };
    }

    // Embeddings, rerank and transcription models have no chat endpoints: say where they are served, not "no endpoints".
    const other = this.deps.catalog.otherApi.get(models[0]);
    if (other && models.every((id) => this.deps.catalog.otherApi.get(id) === other)) {
      throw badRequest(`${models.join(', ')} ${models.length > 1 ? `are ${other.kind} models` : `is ${other.article} ${other.kind} model`}: use ${other.path}`, { field: 'model', error_type: 'invalid_request' });
    }

    // Content guardrails (docs/guardrails.md): a blocking filter → 403; redactions go into the body sent upstream.
    const screened = this.deps.guardrails ? await this.deps.guardrails.screenInput(call.key, api, body) : null;
    if (screened) body = screened.body;
    // Chat bodies are routed from their own fields (the fast path needs no IR); the other APIs through the IR.
    const ir = api === 'chat' ? undefined : INBOUND[api].toIr(body);
    const maxOut = ir ? ir.max_tokens : ((body.max_completion_tokens ?? body.max_tokens) as number | null | undefined);
    const sessionId = (typeof body.session_id === 'string' ? body.session_id : undefined) ?? call.sessionHeader ?? null;
    const sticky = sessionId ? this.sessions.get(`${call.key.workspace_id}|${sessionId}`) : undefined;
    // ---- organization settings and guardrails (src/services/guardrails.ts) ----------------------------------------
    // A spent budget or a blocked model refuses the request here (403/404); the models left, the endpoint filter and
    // the organization's default sort go to planRoute. The same policy function lists GET /models/user.
    const policy = this.deps.guardrails ? await this.deps.guardrails.enforce(call.key, models) : null;
    // ---- end of organization settings and guardrails -------------------------------------------------------------
    const plan = planRoute({
      now: this.now(),
      rng: this.deps.rng ?? Math.random,
      models: policy?.models ?? models,
      endpointPolicy: policy?.endpointPolicy,
      catalog: this.deps.catalog.route,
      hasCredentials: this.deps.catalog.hasCredentials,
      health: this.deps.health.health,
      params: ir ? irParams(ir) : requestParams(body),
      provider,
      defaultSort: (workspace?.default_provider_sort as ProviderSortBy | null | undefined) ?? policy?.defaultSort ?? null,
      estimatedPromptTokens: ir ? irPromptTokens(ir) : estimatePromptTokens(body.messages),
      maxOutputTokens: typeof maxOut === 'number' ? maxOut : undefined,
      stickyEndpoint: sticky && this.now() - sticky.at < this.deps.options.sessionTtlMs ? { model: sticky.model, tag: sticky.tag } : undefined,
    });
    const protocols = new Set<'translated'>();
    if (plan.attempts.some((a) => !(api === 'chat' && a.provider.protocol === 'openai'))) protocols.add('translated');
    const prepared: Prepared = { api, body, ir, protocols, requested: requestedModels.join(', '), plan, stream: body.stream === true, presetId, sessionId, dropped: new Map(), release: () => undefined, pipeline: screened?.pipeline };
    // A chat request that some attempt must translate: build its IR now, so that a 400 comes before any attempt.
    if (protocols.size > 0) this.ir(prepared);
    // Last, with nothing left to throw: the key's own spending limit (402 once the current window's spend reached it);
    // otherwise the request counts as in flight against it until its generation record (or the route) releases it.
    if (call.key.limit !== null && this.deps.guardrails) prepared.release = await this.deps.guardrails.admitWithinLimit(call.key);
    return prepared;
  }

  // ---- metadata and records ----------------------------------------------------------------------

  private metadata(p: Prepared, o: Outcome, attempts: AttemptLog[]): Record<string, unknown> {
    const available = p.plan.considered.filter((c) => !c.excluded && c.provider);
    const selected = o.attempt ? `${o.attempt.model}|${o.attempt.endpoint.tag}` : null;
    const excluded = p.plan.considered.filter((c) => c.excluded).map((c) => ({ model: c.model, provider: c.provider, reason: c.excluded }));
    const summary = o.attempt
      ? `Routed to ${o.attempt.provider.slug} for ${o.attempt.model}${attempts.length > 1 ? ` after ${attempts.length - 1} failed attempt(s)` : ''}`
      : `No attempt succeeded (${attempts.length} tried)`;
    const dropped = o.attempt ? p.dropped.get(`${o.attempt.model}|${o.attempt.endpoint.tag}`) : undefined;
    return {
      attempt: o.attemptNo,
      requested: p.requested,
      strategy: o.attempt && o.attempt.model !== p.plan.attempts[0]?.model ? 'fallback' : p.plan.strategy,
      summary,
      region: 'self-hosted',
      is_byok: false,
      endpoints: {
        total: p.plan.considered.filter((c) => c.provider).length,
        available: available.map((c) => ({ model: c.model, provider: c.provider, selected: `${c.model}|${c.tag}` === selected })),
      },
      attempts,
      excluded,
      ...(dropped && dropped.length > 0 ? { dropped_parameters: dropped } : {}),
      ...(p.pipeline && p.pipeline.length > 0 ? { pipeline: p.pipeline } : {}),
      ...(o.attempt && !o.attempt.endpoint.pricing ? { pricing: 'unknown' } : {}),
    };
  }

  private record(p: Prepared, call: ChatCall, id: string, o: Outcome, attempts: AttemptLog[], cost: number | null): void {
    const end = this.now();
    const u = o.usage;
    const row: GenerationRow = {
      id,
      request_id: call.requestId,
      key_hash: call.key.hash,
      workspace_id: call.key.workspace_id,
      api_type: 'completions',
      requested_model: p.requested,
      model: o.attempt?.model ?? null,
      provider_name: o.attempt?.provider.slug ?? null,
      endpoint_tag: o.attempt?.endpoint.tag ?? null,
      upstream_id: o.upstreamId,
      streamed: p.stream,
      cancelled: o.cancelled,
      status: o.status,
      finish_reason: o.finish,
      native_finish_reason: o.nativeFinish,
      tokens_prompt: u?.promptTokens ?? 0,
      tokens_completion: u?.completionTokens ?? 0,
      native_tokens_reasoning: u?.reasoningTokens ?? 0,
      native_tokens_cached: u?.cachedReadTokens ?? 0,
      native_tokens_cache_write: u?.cacheWriteTokens ?? 0,
      total_cost: cost,
      upstream_inference_cost: cost,
      is_byok: false,
      latency_ms: Math.round(end - o.started),
      ttft_ms: o.ttftMs,
      generation_time_ms: o.firstTokenAt !== null ? Math.round(end - o.firstTokenAt) : null,
      attempts,
      error: o.error ? { status: o.error instanceof HttpError ? o.error.status : o.error.status, message: o.error.message } : null,
      preset_id: p.presetId,
      session_id: p.sessionId,
      created_at: isoTime(end),
    };
    this.deps.recorder.record(row);
    // After the record: its spend is counted (and, with Redis, sent) before the request stops counting as in flight.
    p.release(cost);
    if (o.attempt && o.status === 200 && p.sessionId) {
      if (this.sessions.size > 50_000) this.sessions.clear();
      this.sessions.set(`${call.key.workspace_id}|${p.sessionId}`, { model: o.attempt.model, tag: o.attempt.endpoint.tag, at: end });
    }
  }

  // ---- upstream ----------------------------------------------------------------------------------

  /**
   * Sends one attempt; resolves with the 2xx exchange (the caller closes it), or throws the mapped UpstreamError. The
   * client going away or the total timeout aborts the exchange.
   */
  private async send(p: Prepared, a: Attempt, call: ChatCall, codec: AttemptCodec, stream: boolean): Promise<UpstreamExchange> {
    const ctx = { provider: a.provider, endpoint: a.endpoint, apiKey: this.deps.catalog.apiKey(a.provider) };
    const { req, dropped } = codec.request(ctx, stream);
    if (dropped.length > 0) p.dropped.set(`${a.model}|${a.endpoint.tag}`, dropped);
    const res = await this.deps.http.post({ url: req.url, headers: req.headers, body: req.body, timeouts: this.deps.catalog.timeouts(a.provider), cancel: call.cancel });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await res.text().catch(() => '');
      res.close();
      throw codec.parseError(res.statusCode, text, res.headers);
    }
    return res;
  }

  private codec(p: Prepared, a: Attempt): AttemptCodec {
    return codecFor(p.api, p.body, p.protocols.has('translated') ? this.ir(p) : null, a.endpoint, a.provider.protocol);
  }

  /** The IR of the request, built once (throws HttpError 400 for what the IR cannot carry). */
  private ir(p: Prepared): Omit<IrRequest, 'model'> {
    p.ir ??= INBOUND[p.api].toIr(p.body);
    return p.ir;
  }

  private failed(a: Attempt, err: unknown, attempts: AttemptLog[]): UpstreamError {
    const e = err instanceof UpstreamError ? err : networkError(err);
    attempts.push({ provider: a.provider.slug, model: a.model, status: e.status, message: e.message });
    if (e.type !== 'cancelled' && e.type !== 'invalid_request' && e.type !== 'context_length_exceeded') this.deps.health.failure(a.endpoint);
    return e;
  }

  /** What the client sees added to an answer: ids, serving model, cost and (when asked) routing metadata. */
  private answerMeta(p: Prepared, o: Outcome, attempts: AttemptLog[], id: string, created: number, call: ChatCall, withCost: boolean): AnswerMeta {
    const a = o.attempt!;
    const cost = withCost && o.usage ? computeCost(a.endpoint.pricing, o.usage) : null;
    const meta: AnswerMeta = {
      id,
      model: a.model,
      provider: a.provider.name,
      created,
      // Unknown prices are reported as null (and flagged in gateway_metadata), never as $0.
      cost: cost ? cost.cost : null,
      cost_details: {
        upstream_inference_prompt_cost: cost?.priced ? cost.promptCost : null,
        upstream_inference_completions_cost: cost?.priced ? cost.completionCost : null,
        upstream_inference_cost: cost ? cost.cost : null,
      },
    };
    if (withCost && call.wantMetadata) meta.gateway_metadata = this.metadata(p, o, attempts);
    return meta;
  }

  /** A new generation: its id and outcome; a plan without attempts is recorded and refused here. */
  private begin(p: Prepared, call: ChatCall): { id: string; created: number; attempts: AttemptLog[]; o: Outcome } {
    const id = newGenerationId();
    const attempts: AttemptLog[] = [];
    const o = this.fresh();
    if (p.plan.error) {
      const err = planHttpError(p.plan);
      this.record(p, call, id, { ...o, status: err.status, error: err }, attempts, null);
      throw this.withMetadata(err, p, o, attempts, call);
    }
    return { id, created: Math.floor(this.now() / 1000), attempts, o };
  }

  private fresh(): Outcome {
    return { attempt: null, attemptNo: 0, usage: null, upstreamId: null, finish: null, nativeFinish: null, status: 0, error: null, ttftMs: null, cancelled: false, started: this.now(), firstTokenAt: null };
  }

  // ---- non-streaming -----------------------------------------------------------------------------

  async complete(p: Prepared, call: ChatCall): Promise<{ id: string; body: Record<string, unknown> }> {
    const { id, created, attempts, o } = this.begin(p, call);
    let last: UpstreamError | null = null;
    let lastAttempt: Attempt | null = null;
    const retryHints: number[] = [];
    for (const [i, a] of p.plan.attempts.entries()) {
      if (call.cancel.aborted) break;
      const t0 = this.now();
      try {
        const codec = this.codec(p, a);
        const res = await this.send(p, a, call, codec, false);
        let text: string;
        try {
          text = await res.text();
        } finally {
          res.close();
        }
        const parsed = codec.parse(text);
        const now = this.now();
        Object.assign(o, { attempt: a, attemptNo: i + 1, status: 200, ttftMs: Math.round(now - t0), firstTokenAt: now });
        o.upstreamId = parsed.upstreamId;
        o.nativeFinish = parsed.native;
        o.finish = parsed.finish;
        o.usage = parsed.usage;
        attempts.push({ provider: a.provider.slug, model: a.model, status: 200 });
        this.deps.health.success(a.endpoint, o.ttftMs ?? 0, null);
        const meta = this.answerMeta(p, o, attempts, id, created, call, true);
        const body = parsed.render(meta);
        // Content guardrails on the reply (docs/guardrails.md): redacted in place; a blocking filter → 403, still billed.
        const blocked = this.deps.guardrails ? await this.deps.guardrails.screenOutput(call.key, p.api, body, p.pipeline) : null;
        this.record(p, call, id, o, attempts, meta.cost);
        if (blocked) throw blocked;
        return { id, body };
      } catch (err) {
        if (err instanceof HttpError) throw err;
        last = this.failed(a, err, attempts);
        lastAttempt = a;
        if (last.retryAfter !== null) retryHints.push(last.retryAfter);
        if (last.type === 'cancelled') break;
      }
    }
    o.cancelled = call.cancel.aborted;
    const finalError = attemptsHttpError(last, lastAttempt, attempts, retryHints);
    this.record(p, call, id, { ...o, status: o.cancelled ? 499 : finalError.status, error: finalError }, attempts, null);
    throw this.withMetadata(finalError, p, o, attempts, call);
  }

  private withMetadata(err: HttpError, p: Prepared, o: Outcome, attempts: AttemptLog[], call: ChatCall): HttpError {
    if (!call.wantMetadata) return err;
    err.gatewayMetadata = this.metadata(p, o, attempts);
    return err;
  }

  // ---- streaming ---------------------------------------------------------------------------------

  /**
   * Relays a stream. Until the first content is forwarded, any failure moves on to the next endpoint; the 200 status
   * is committed with the first content, or earlier by a keep-alive comment when the wait is long. After content has
   * flowed, an error ends the stream with the API's error event (chat: a chunk with `finish_reason: "error"`).
   */
  /** Resolves with the generation id when the stream ended normally, null when it ended with an error (or the client left). */
  async stream(p: Prepared, call: ChatCall, raw: ServerResponse): Promise<{ id: string } | null> {
    const { id, created, attempts, o } = this.begin(p, call);

    let committed = false;
    let lastWrite = this.now();
    // A promise only when the socket pushes back (the usual write costs no promise).
    const write = (s: string): Promise<void> | undefined => {
      if (s.length === 0) return undefined;
      lastWrite = this.now();
      return raw.write(s) ? undefined : drained(raw);
    };
    const commit = () => {
      if (committed) return;
      committed = true;
      raw.writeHead(200, eventStreamHead(id, call.requestId));
    };
    // Keep-alive comments while nothing else is written (before the first token, and in long pauses).
    const keepalive = setInterval(() => {
      if (raw.destroyed || this.now() - lastWrite < this.deps.options.keepaliveMs) return;
      commit();
      void write(': GATEWAY PROCESSING\n\n');
    }, Math.max(50, Math.floor(this.deps.options.keepaliveMs / 2)));

    let last: UpstreamError | null = null;
    let lastAttempt: Attempt | null = null;
    const retryHints: number[] = [];
    try {
      for (const [i, a] of p.plan.attempts.entries()) {
        if (call.cancel.aborted) break;
        const t0 = this.now();
        let session: StreamSession | null = null;
        let res: UpstreamExchange | null = null;
        // Output of the upstream's last read, once its body is complete: written with the final event, in one write.
        let held = '';
        try {
          const codec = this.codec(p, a);
          res = await this.send(p, a, call, codec, true);
          // Until content flows, the attempt may still be replaced: it is "current" only for metadata.
          Object.assign(o, { attempt: a, attemptNo: i + 1 });
          session = codec.openStream(this.answerMeta(p, o, attempts, id, created, call, false));
          const decoder = new StringDecoder('utf8'); // keeps characters split across reads; cheaper than TextDecoder
          for (let chunk = await res.read(); chunk !== null; chunk = await res.read()) {
            const out = session.push(decoder.write(chunk));
            if (session.contentStarted && o.firstTokenAt === null) {
              o.firstTokenAt = this.now();
              o.ttftMs = Math.round(o.firstTokenAt - t0);
            }
            if (out) {
              commit();
              if (res.finished) held += out;
              else {
                const pushback = write(out);
                if (pushback) await pushback;
              }
            }
            if (session.failure) throw session.failure;
          }
          const tailOut = session.end();
          if (tailOut) {
            commit();
            held += tailOut;
          }
          if (session.failure) throw session.failure;
          // Success: usage (with cost) and metadata on the API's final event, then its terminator.
          if (o.ttftMs === null) o.ttftMs = Math.round(this.now() - t0);
          o.status = 200;
          o.usage = session.usage();
          o.upstreamId = session.upstreamId;
          o.finish = session.finish;
          o.nativeFinish = session.native;
          attempts.push({ provider: a.provider.slug, model: a.model, status: 200 });
          const meta = this.answerMeta(p, o, attempts, id, created, call, true);
          commit();
          // The last output, the final event and the end of the response in one socket write.
          raw.end(held + session.finishOut(meta));
          const genMs = o.firstTokenAt !== null ? this.now() - o.firstTokenAt : 0;
          this.deps.health.success(a.endpoint, o.ttftMs ?? 0, o.usage && genMs > 0 ? (o.usage.completionTokens * 1000) / genMs : null);
          this.record(p, call, id, o, attempts, meta.cost);
          return { id };
        } catch (err) {
          if (err instanceof HttpError) throw err;
          last = this.failed(a, err, attempts);
          lastAttempt = a;
          if (last.retryAfter !== null) retryHints.push(last.retryAfter);
          if (last.type === 'cancelled' || call.cancel.aborted) break;
          if (held && !session?.contentStarted) {
            raw.write(held); // what was produced stays sent, as when it is written at once
            held = '';
          }
          if (session?.contentStarted) {
            // Too late to fall back: end the stream with the API's error event; the status stays 200.
            Object.assign(o, { status: last.status, error: last, finish: 'error', usage: session.usage(), upstreamId: session.upstreamId, nativeFinish: session.native });
            const meta = this.answerMeta(p, o, attempts, id, created, call, true);
            const masked = last.status >= 500 ? 'Provider error during the stream' : last.message;
            commit();
            raw.end(held + session.errorOut(last.status, masked, last.type, meta));
            this.record(p, call, id, o, attempts, meta.cost);
            return null;
          }
        } finally {
          res?.close();
        }
      }
      // Every attempt failed before any content.
      o.cancelled = call.cancel.aborted;
      const error = attemptsHttpError(last, lastAttempt, attempts, retryHints);
      this.record(p, call, id, { ...o, status: o.cancelled ? 499 : error.status, error }, attempts, null);
      if (o.cancelled) return null;
      if (!committed) throw this.withMetadata(error, p, o, attempts, call);
      // Only keep-alive comments were sent: the error goes in the stream, in the API's own shape.
      const meta: AnswerMeta = { id, model: lastAttempt?.model ?? p.requested, provider: lastAttempt?.provider.name ?? '', created, cost: null, cost_details: unpricedCostDetails() };
      if (call.wantMetadata) meta.gateway_metadata = this.metadata(p, o, attempts);
      const session = lastAttempt ? this.codec(p, lastAttempt).openStream(meta) : null;
      commit();
      if (session) raw.end(session.errorOut(error.status, error.message, String(error.metadata?.error_type ?? 'provider_unavailable'), meta));
      return null;
    } finally {
      clearInterval(keepalive);
      if (committed && !raw.writableEnded) raw.end();
    }
  }
}
