/**
 * Chat completions: presets, model and routing resolution, upstream attempts with fallbacks, streaming relay,
 * cost, gateway metadata and the generation record. The HTTP route only validates and hands over.
 */
import { outputAsk, promptTokensBound } from '../core/spend-ask.js';
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
import type { UpstreamError } from '../core/provider-errors.js';
import type { Cancellation, UpstreamExchange, UpstreamHttp } from '../providers/http.js';
import type { GenerationRow, KeyRow } from '../store/types.js';
import type { IrRequest } from '../core/ir.js';
import { unpricedCostDetails, type AnswerMeta } from '../core/adapters.js';
import type { CompiledFilter } from '../core/content-filters/index.js';
import type { StreamHealer } from './plugins/healing.js';
import { NO_PLUGINS, type AnyPipelineEntry as PipelineEntry, type PluginSettings } from '../core/plugins.js';
import type { PluginSteps } from './plugins/index.js';
import { screenInput, screenOutput, streamBlockedError } from './content-guardrails.js';
import { forgetRaw } from '../core/raw-json.js';
import { codecFor, droppedFieldsHeader, INBOUND, irParams, type AttemptCodec, type InboundApi, type StreamSession } from './codecs.js';
import { checkMessagesBody, messagesFallbackModels } from '../inbound/messages.js';
import { checkStateless } from '../inbound/responses.js';
import type { CatalogService } from './catalog.js';
import { resolveRequestedModels } from './model-resolution.js';
import type { GenerationRecorder } from './generations.js';
import type { HealthTracker } from './health.js';
import type { PresetService } from './presets.js';
import type { WorkspaceService } from './workspaces.js';
import type { GuardrailService } from './guardrails.js';
import type { AttemptLog } from './attempts/errors.js';
import { runGeneration, type AttemptHooks, type GenerationSpec, type Unserved } from './attempts/runner.js';
import { recordingRefusal } from './attempts/refusal.js';
import type { ParsedAnswer } from './codecs.js';
import { sendAttempt } from './attempts/send.js';
import { newGenerationId } from './generation-id.js';
import { StreamOut } from './reply-stream.js';
import { cachedJson, cachedStream, type CacheAsk, type CacheStep, type JsonReply } from './attempts/cache-step.js';
import { attemptKey, type ByokService } from './byok.js';
import type { IoCapture } from '../core/io-log.js';
import { ioObserver, type IoLogging } from './observability/io-logging.js';
import type { RequestTrace } from './observability/tracing.js';
import { watchAttempts } from './observability/watch.js';

export interface ChatOptions {
  /** Interval of `: GATEWAY PROCESSING` comments while a stream waits (ms). */
  keepaliveMs: number;
  /** How long a session stays pinned to its endpoint (ms). */
  sessionTtlMs: number;
  /** An unknown model falls back to the workspace's `default_text_model` (GATEWAY_UNKNOWN_MODEL_FALLBACK). */
  unknownModelFallback?: boolean;
}

export interface ChatCall {
  key: KeyRow;
  requestId: string;
  wantMetadata: boolean;
  sessionHeader?: string;
  /** The request's `anthropic-beta` values, forwarded to Anthropic-protocol upstreams. */
  anthropicBeta?: string[];
  /** Set when the client goes away. */
  cancel: Cancellation;
  /** What the client asked of the response cache. */
  cache?: CacheAsk;
  /** The request's trace when tracing is on (docs/observability.md); absent = off. */
  trace?: RequestTrace;
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
  /** The output the request asks for at most (null: the endpoint's maximum) and its rough prompt size (tokens). */
  maxOut: number | null;
  promptEstimate: number;
  /** The key's content filters (content guardrails), null when it has none. */
  filters: CompiledFilter[] | null;
  /** `gateway_metadata.pipeline` entries (content guardrails, plugins). */
  pipeline?: PipelineEntry[];
  /** Content guardrails on a streamed reply (null: none apply, or the reply is not streamed). */
  outputFilters?: CompiledFilter[] | null;
  /** response-healing on a streamed reply: makes each attempt's healer (null when off or no JSON is asked for). */
  outputHealing?: (() => StreamHealer) | null;
  /** The request's plugins (docs/plugins.md). */
  plugins: PluginSettings;
  /** I/O logging: what this request keeps of its content; null when its workspace does not log it. */
  io: IoCapture | null;
}


/** What each answer (JSON, streamed) gives the runner: how an attempt is made and what becomes of it. */
type ApiCallbacks<T, R> = Pick<GenerationSpec<Attempt, T, R>, 'attempt' | 'served' | 'sample' | 'failed' | 'exhausted'>;

/** The attempt being relayed: its stream session, and output held back for the final write. */
interface Relay {
  session: StreamSession | null;
  held: string;
  /** I/O logging's copy of the client-bound text (references to the same strings); null when not logged. */
  tap: string[] | null;
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
  /** The usage was counted by the gateway (a cut stream without the upstream's usage), not reported. */
  estimated?: boolean;
  started: number;
  firstTokenAt: number | null;
  /** What content guardrails did to a streamed reply (gateway_metadata.pipeline, after the input's entries). */
  outputPipeline?: PipelineEntry[];
}

/** Tokens an answer used (token rate limits settle to it); undefined when unknown. */
const usedTokens = (o: Outcome) => (o.usage ? o.usage.promptTokens + o.usage.completionTokens : undefined);

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
      /** The response cache step (services/attempts/cache-step.ts); absent = no cache. */
      cache?: CacheStep;
      /** Request plugins as preparation and reply steps (services/plugins); absent = none run. */
      plugins?: PluginSteps;
      /** I/O logging (docs/observability.md); absent = never. */
      io?: IoLogging;
      /** BYOK credentials (docs/byok.md): absent = the operator's keys only. */
      byok?: ByokService;
      now?: () => number;
      rng?: () => number;
    },
  ) {}

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  private readonly clock = () => this.now();

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

    const peeked = this.deps.workspaces.peek(call.key.workspace_id);
    const workspace = peeked !== undefined ? peeked : await this.deps.workspaces.cached(call.key.workspace_id);
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
    // Model ids as clients send them (bare, dated, aliases) → catalog ids (src/services/model-resolution.ts).
    const g = this.deps.guardrails;
    const orgAliases = g ? (g.peekSettings() ?? (await g.settings())).model_aliases : null;
    const fallback = { enabled: this.deps.options.unknownModelFallback === true, model: workspace?.default_text_model };
    const resolved = resolveRequestedModels(this.deps.catalog, models, orgAliases, fallback);
    models.splice(0, models.length, ...resolved.models);

    // Embeddings, rerank and transcription models have no chat endpoints: say where they are served, not "no endpoints".
    const other = this.deps.catalog.otherApi.get(models[0]);
    if (other && models.every((id) => this.deps.catalog.otherApi.get(id) === other)) {
      throw badRequest(`${models.join(', ')} ${models.length > 1 ? `are ${other.kind} models` : `is ${other.article} ${other.kind} model`}: use ${other.path}`, { field: 'model', error_type: 'invalid_request' });
    }

    // Plugins on the input (docs/plugins.md): file inputs and file-parser, middle-out — before the guardrails screen it.
    const plugins = this.deps.plugins?.settings(body) ?? NO_PLUGINS;
    const steps = this.deps.plugins?.needsInput(api, body, plugins) ? await this.deps.plugins.input(api, body, { workspaceId: call.key.workspace_id, models, plugins, maxTokens: maxTokensOf(body) }) : null;
    if (steps) {
      // Input plugins may change messages in place (file parts → text): the client's raw bytes no longer say what the body holds.
      forgetRaw(body);
      forgetRaw(steps.body);
      body = steps.body;
    }
    // Content guardrails (docs/guardrails.md): a blocking filter → 403; redactions go into the body sent upstream.
    // The key's policy, read once (from memory on the hot path): filters here, the model rules and budgets below.
    const policy = g ? (g.peekPolicy(call.key) ?? (await g.policyFor(call.key))) : null;
    const filters = policy ? g!.contentFilters(policy) : null;
    const screened = filters ? screenInput(filters, api, body) : null;
    if (screened) body = screened.body;
    const pipeline: PipelineEntry[] = [...(steps?.pipeline ?? []), ...(screened?.pipeline ?? [])];
    // The moderation plugin: the text as it would be sent, before any upstream call (403 when flagged).
    if (plugins.moderation && this.deps.plugins) pipeline.push(await this.deps.plugins.moderate(api, body));
    // Chat bodies are routed from their own fields (the fast path needs no IR); the other APIs through the IR.
    const ir = api === 'chat' ? undefined : INBOUND[api].toIr(body);
    if (ir && call.anthropicBeta?.length) ir.anthropic_beta = call.anthropicBeta;
    const maxOut = ir ? ir.max_tokens : ((body.max_completion_tokens ?? body.max_tokens) as number | null | undefined);
    const sessionId = (typeof body.session_id === 'string' ? body.session_id : undefined) ?? call.sessionHeader ?? null;
    const sticky = sessionId ? this.sessions.get(`${call.key.workspace_id}|${sessionId}`) : undefined;
    // ---- organization settings and guardrails (src/services/guardrails.ts) ----------------------------------------
    // A spent budget or a blocked model refuses the request here (403/404); the models left, the endpoint filter and
    // the organization's default sort go to planRoute. The same policy function lists GET /models/user.
    let decided = policy ? g!.decide(call.key, policy, models) : null;
    if (decided instanceof Promise) decided = await decided;
    // ---- end of organization settings and guardrails -------------------------------------------------------------
    let promptEstimate = 0;
    const plan = planRoute({
      now: this.now(),
      rng: this.deps.rng ?? Math.random,
      models: decided?.models ?? models,
      endpointPolicy: decided?.endpointPolicy,
      catalog: this.deps.catalog.route,
      hasCredentials: this.deps.catalog.hasCredentials,
      byok: this.deps.byok?.routing(call.key),
      health: this.deps.health.health,
      params: ir ? irParams(ir) : requestParams(body),
      provider,
      defaultSort: (workspace?.default_provider_sort as ProviderSortBy | null | undefined) ?? decided?.defaultSort ?? null,
      estimatedPromptTokens: (promptEstimate = ir ? irPromptTokens(ir) : estimatePromptTokens(body.messages)),
      maxOutputTokens: typeof maxOut === 'number' ? maxOut : undefined,
      stickyEndpoint: sticky && this.now() - sticky.at < this.deps.options.sessionTtlMs ? { model: sticky.model, tag: sticky.tag } : undefined,
    });
    // An id that resolved to no model: the 404 names the candidates or the closest ids (docs/agents.md).
    if (resolved.problem && plan.error?.code === 'model_not_found') plan.error = { ...plan.error, message: resolved.problem.message, suggestions: resolved.problem.suggestions, ambiguous: resolved.problem.ambiguous } as typeof plan.error;
    const protocols = new Set<'translated'>();
    // A streamed reply screened by content guardrails goes through the IR, where its deltas are redacted as they pass.
    const outputFilters = body.stream === true ? filters : null;
    // response-healing on a stream: the text deltas are healed at the end of each part (plugins/healing.ts), in the IR too.
    const outputHealing = body.stream === true && plugins.responseHealing ? (this.deps.plugins?.streamHealing(api, body) ?? null) : null;
    if (outputFilters || outputHealing || plan.attempts.some((a) => !(api === 'chat' && a.provider.protocol === 'openai'))) protocols.add('translated');
    const io = this.deps.io ? this.deps.io.capture(workspace, call.key.hash, api, body) : null;
    const prepared: Prepared = { api, body, ir, protocols, requested: requestedModels.join(', '), plan, stream: body.stream === true, presetId, sessionId, dropped: new Map(), maxOut: typeof maxOut === 'number' ? maxOut : null, promptEstimate, filters, pipeline, outputFilters, outputHealing, plugins, io };
    // A chat request that some attempt must translate: build its IR now, so that a 400 comes before any attempt.
    if (protocols.size > 0) this.ir(prepared);
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
      is_byok: o.attempt?.byok !== undefined,
      endpoints: {
        total: p.plan.considered.filter((c) => c.provider).length,
        available: available.map((c) => ({ model: c.model, provider: c.provider, selected: `${c.model}|${c.tag}` === selected })),
      },
      attempts,
      excluded,
      ...(dropped && dropped.length > 0 ? { dropped_parameters: dropped } : {}),
      ...pipelineField([...(p.pipeline ?? []), ...(o.outputPipeline ?? [])]),
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
      is_byok: o.attempt?.byok !== undefined,
      latency_ms: Math.round(end - o.started),
      ttft_ms: o.ttftMs,
      generation_time_ms: o.firstTokenAt !== null ? Math.round(end - o.firstTokenAt) : null,
      attempts,
      // What content guardrails and plugins did (also in gateway_metadata.pipeline), kept on the record.
      pipeline: recordedPipeline([...(p.pipeline ?? []), ...(o.outputPipeline ?? [])]),
      error: o.error ? { status: o.error.status, message: o.estimated ? `${o.error.message} (usage estimated: output counted as relayed, prompt estimated)` : o.error.message } : null,
      preset_id: p.presetId,
      session_id: p.sessionId,
      created_at: isoTime(end),
    };
    this.deps.recorder.record(row, p.io);
    call.trace?.record(row, p.io);
    if (o.attempt && o.status === 200 && p.sessionId) {
      if (this.sessions.size > 50_000) this.sessions.clear();
      this.sessions.set(`${call.key.workspace_id}|${p.sessionId}`, { model: o.attempt.model, tag: o.attempt.endpoint.tag, at: end });
    }
  }

  // ---- upstream ----------------------------------------------------------------------------------

  /** Sends one attempt; resolves with the 2xx exchange (the caller closes it), or throws the mapped UpstreamError. */
  private send(p: Prepared, a: Attempt, call: ChatCall, codec: AttemptCodec, stream: boolean): Promise<UpstreamExchange> {
    const ctx = { provider: a.provider, endpoint: a.endpoint, apiKey: attemptKey(this.deps, a) };
    const { req, dropped } = codec.request(ctx, stream);
    if (dropped.length > 0) p.dropped.set(`${a.model}|${a.endpoint.tag}`, dropped);
    // Tracing on: the attempt span's context goes upstream (a copy of the headers; the built ones may be shared).
    const sent = call.trace ? { ...req, headers: call.trace.headers(req.headers) } : req;
    // Signed or token-authenticated protocols (SigV4, OAuth) finish the request here.
    if (codec.authorize) return codec.authorize(sent, ctx).then((signed) => sendAttempt(this.deps.http, signed, codec.parseError, this.deps.catalog.timeouts(a.provider), call.cancel));
    return sendAttempt(this.deps.http, sent, codec.parseError, this.deps.catalog.timeouts(a.provider), call.cancel);
  }

  private codec(p: Prepared, a: Attempt): AttemptCodec {
    return codecFor(p.api, p.body, p.protocols.has('translated') ? this.ir(p) : null, a.endpoint, a.provider.protocol, p.outputFilters, p.outputHealing);
  }

  /** The IR of the request, built once (throws HttpError 400 for what the IR cannot carry). */
  private ir(p: Prepared): Omit<IrRequest, 'model'> {
    p.ir ??= INBOUND[p.api].toIr(p.body);
    return p.ir;
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
    if (a.byok) meta.is_byok = true;
    if (withCost && call.wantMetadata) meta.gateway_metadata = this.metadata(p, o, attempts);
    return meta;
  }

  /**
   * What both answers (JSON and streamed) give the runner besides their attempt: the plan, the spend seam, the record
   * of an unserved request and the metadata of an error reply. One object literal of a fixed shape, `run`'s callbacks
   * copied in (a spread followed by more fields defines each of them through the runtime, on every request).
   */
  private generation<T, R>(p: Prepared, call: ChatCall, id: string, o: Outcome, run: ApiCallbacks<T, R>): GenerationSpec<Attempt, T, R> {
    return {
      attempt: run.attempt,
      served: run.served,
      sample: run.sample,
      failed: run.failed,
      exhausted: run.exhausted,
      plan: p.plan,
      targets: p.plan.attempts,
      cancel: call.cancel,
      health: this.deps.health,
      now: this.clock,
      hooks: this.spendHooks(p, call),
      observer: watchAttempts<Attempt>(p.io, call.trace, o),
      recordUnserved: (u: Unserved<Attempt>, attempts: AttemptLog[]) => {
        o.cancelled = u.cancelled;
        this.record(p, call, id, { ...o, status: u.status, error: u.error }, attempts, null);
      },
      errorMetadata: (attempts: AttemptLog[]) => (call.wantMetadata ? this.metadata(p, o, attempts) : undefined),
    };
  }

  /**
   * Spend control (docs/spend.md): each attempt reserves its maximum cost at its endpoint's prices — the prompt's byte
   * bound plus the most output it may produce — and the runner settles it to the real cost. None when nothing can
   * apply to the key (`nothingToAdmit`: known from memory, no await). A request refused at its first attempt
   * (nothing sent upstream) is recorded with status 402, so the request log shows it.
   */
  private spendHooks(p: Prepared, call: ChatCall): AttemptHooks<Attempt> | undefined {
    const g = this.deps.guardrails;
    if (!g) return undefined;
    const policy = g.peekPolicy(call.key);
    if (policy && g.nothingToAdmit(call.key, policy)) return undefined;
    let bound: number | null = null;
    const hooks = g.spendHooks<Attempt>(call.key, (a) => outputAsk(a.endpoint, (bound ??= promptTokensBound(p.body)), p.maxOut));
    return recordingRefusal(hooks, (err) => this.record(p, call, newGenerationId(), { ...this.fresh(), status: 402, error: err }, [], null));
  }

  private fresh(): Outcome {
    return { attempt: null, attemptNo: 0, usage: null, upstreamId: null, finish: null, nativeFinish: null, status: 0, error: null, ttftMs: null, cancelled: false, started: this.now(), firstTokenAt: null };
  }

  // ---- through the response cache ----------------------------------------------------------------

  /** The cache use of a request: its headers, or a preset's (or the body's) `cache_enabled`. */
  private cacheUse(p: Prepared, call: ChatCall) {
    return this.deps.cache?.use(call.cache, call.key.hash, p.api, p.stream, p.body) ?? null;
  }

  /** A JSON answer, through the response cache when the request uses it (a hit answers without any attempt). */
  async answer(p: Prepared, call: ChatCall): Promise<JsonReply> {
    const use = this.cacheUse(p, call);
    // Without the cache, the answer as is: its headers carry x-generation-id already.
    if (!use) return this.complete(p, call);
    // A hit makes no attempt (nothing to reserve), but a key without room left gets its 402 all the same.
    await this.deps.guardrails?.checkRoom(call.key);
    return cachedJson(this.deps.cache, use, () => this.complete(p, call));
  }

  /** A streamed answer, through the response cache when the request uses it. */
  async relay(p: Prepared, call: ChatCall, raw: ServerResponse): Promise<{ id: string } | null> {
    const use = this.cacheUse(p, call);
    if (use) await this.deps.guardrails?.checkRoom(call.key);
    return cachedStream(this.deps.cache, use, raw, call.requestId, call.wantMetadata, () => this.stream(p, call, raw));
  }

  // ---- non-streaming -----------------------------------------------------------------------------

  /** `headers`: x-generation-id, and X-Gateway-Dropped-Fields when the serving attempt dropped something. */
  async complete(p: Prepared, call: ChatCall): Promise<{ id: string; body: Record<string, unknown>; headers: Record<string, string> }> {
    const id = newGenerationId();
    const o = this.fresh();
    const created = Math.floor(this.now() / 1000);
    let t0 = 0;
    const answer = await runGeneration(this.generation<ParsedAnswer, { id: string; body: Record<string, unknown>; headers: Record<string, string> }>(p, call, id, o, {
      attempt: async (a, _i, start) => {
        t0 = start;
        const codec = this.codec(p, a);
        const res = await this.send(p, a, call, codec, false);
        let text: string;
        try {
          text = await res.text();
        } finally {
          res.close();
        }
        return codec.parse(text);
      },
      served: (a, parsed, i, attempts) => {
        const now = this.now();
        Object.assign(o, { attempt: a, attemptNo: i + 1, status: 200, ttftMs: Math.round(now - t0), firstTokenAt: now });
        o.upstreamId = parsed.upstreamId;
        o.nativeFinish = parsed.native;
        o.finish = parsed.finish;
        o.usage = parsed.usage;
        const meta = this.answerMeta(p, o, attempts, id, created, call, true);
        const body = parsed.render(meta);
        if (p.io) p.io.answer = body;
        this.record(p, call, id, o, attempts, meta.cost);
        const headers = droppedFieldsHeader(p.dropped.get(`${a.model}|${a.endpoint.tag}`));
        headers['x-generation-id'] = id;
        return { result: { id, body, headers }, cost: meta.cost, tokens: usedTokens(o) };
      },
    }));
    // response-healing (docs/plugins.md): invalid JSON repaired in place and checked, before the guardrails read it.
    const healed = p.plugins.responseHealing ? this.deps.plugins?.heal(p.api, p.body, answer.body) : null;
    if (healed) withPipelineEntry(p, answer.body, healed);
    // Content guardrails on the reply (docs/guardrails.md): redacted in place; a blocking filter → 403 (the answer is
    // recorded and billed all the same).
    const blocked = p.filters ? screenOutput(p.filters, p.api, answer.body, p.pipeline) : null;
    if (blocked) throw blocked;
    return answer;
  }

  // ---- streaming ---------------------------------------------------------------------------------

  /**
   * Relays a stream. Until the first content is forwarded, any failure moves on to the next endpoint; the 200 status
   * is committed with the first content, or earlier by a keep-alive comment when the wait is long. After content has
   * flowed, an error ends the stream with the API's error event (chat: a chunk with `finish_reason: "error"`).
   * Resolves with the generation id when the stream ended normally, null when it ended with an error (or the client
   * left).
   */
  async stream(p: Prepared, call: ChatCall, raw: ServerResponse): Promise<{ id: string } | null> {
    const id = newGenerationId();
    const o = this.fresh();
    const created = Math.floor(this.now() / 1000);
    // The head names what the serving attempt dropped (X-Gateway-Dropped-Fields), known once it is chosen.
    const out = new StreamOut(raw, id, call.requestId, () => this.now(), () => (o.attempt ? droppedFieldsHeader(p.dropped.get(`${o.attempt.model}|${o.attempt.endpoint.tag}`)) : undefined));
    // Keep-alive comments while nothing else is written (before the first token, and in long pauses) — from the first
    // attempt on, once its spend is admitted: a refusal (402/429/503) must still find the status uncommitted.
    let keepalive: NodeJS.Timeout | undefined;
    const keepAlive = () =>
      (keepalive ??= setInterval(() => {
        if (raw.destroyed || this.now() - out.lastWrite < this.deps.options.keepaliveMs) return;
        out.commit();
        void out.write(': GATEWAY PROCESSING\n\n');
      }, Math.max(50, Math.floor(this.deps.options.keepaliveMs / 2))));
    // The current attempt's stream, and the output of its last read once the upstream body is complete (written with
    // the final event, in one write).
    const cur: Relay = { session: null, held: '', tap: p.io ? p.io.chunks : null };
    try {
      return await runGeneration(this.generation<StreamSession, { id: string } | null>(p, call, id, o, {
        attempt: async (a, i, t0) => {
          keepAlive();
          cur.session = null;
          cur.held = '';
          const codec = this.codec(p, a);
          const res = await this.send(p, a, call, codec, true);
          try {
            // Until content flows, the attempt may still be replaced: it is "current" only for metadata.
            Object.assign(o, { attempt: a, attemptNo: i + 1 });
            const s = (cur.session = codec.openStream(this.answerMeta(p, o, [], id, created, call, false)));
            await this.pipe(cur, s, res, out, o, t0);
            // Success: what the record and the final event need.
            if (o.ttftMs === null) o.ttftMs = Math.round(this.now() - t0);
            o.status = 200;
            o.usage = s.usage();
            o.upstreamId = s.upstreamId;
            o.finish = s.finish;
            o.nativeFinish = s.native;
            return s;
          } finally {
            res.close();
          }
        },
        sample: () => {
          const genMs = o.firstTokenAt !== null ? this.now() - o.firstTokenAt : 0;
          return { ttftMs: o.ttftMs ?? 0, tokensPerSecond: o.usage && genMs > 0 ? (o.usage.completionTokens * 1000) / genMs : null };
        },
        served: (_a, s, _i, attempts) => {
          o.outputPipeline = s.outputPipeline?.();
          if (s.blocked) return this.blockedStream(p, call, id, created, o, s, attempts, out, raw, cur);
          // Usage (with cost) and metadata on the API's final event, then its terminator.
          const meta = this.answerMeta(p, o, attempts, id, created, call, true);
          out.commit();
          // The last output, the final event and the end of the response in one socket write.
          raw.end(cur.held + s.finishOut(meta));
          this.record(p, call, id, o, attempts, meta.cost);
          return { result: { id }, cost: meta.cost, tokens: usedTokens(o) };
        },
        failed: (e, _a, attempts) => {
          const s = cur.session;
          if (cur.held && !s?.contentStarted) {
            raw.write(cur.held); // what was produced stays sent, as when it is written at once
            cur.held = '';
          }
          if (!s?.contentStarted) return undefined;
          // Too late to fall back (or the client left): what was produced is billed — the upstream's usage when it
          // came, else the output counted so far (docs/spend.md, "Cut streams"); the stream ends with the error event.
          const cancelled = e.type === 'cancelled' || call.cancel.aborted;
          Object.assign(o, { status: e.status, error: e, cancelled, finish: 'error', ...cutUsage(p, s), upstreamId: s.upstreamId, nativeFinish: s.native });
          const meta = this.answerMeta(p, o, attempts, id, created, call, true);
          const masked = e.status >= 500 ? 'Provider error during the stream' : e.message;
          out.commit();
          raw.end(cur.held + s.errorOut(e.status, masked, e.type, meta));
          this.record(p, call, id, o, attempts, meta.cost);
          return { result: null, cost: meta.cost, tokens: usedTokens(o) };
        },
        exhausted: (error, cancelled, lastAttempt, attempts) => {
          if (cancelled) return { result: null };
          if (!out.committed) return undefined;
          // Only keep-alive comments were sent: the error goes in the stream, in the API's own shape.
          const meta: AnswerMeta = { id, model: lastAttempt?.model ?? p.requested, provider: lastAttempt?.provider.name ?? '', created, cost: null, cost_details: unpricedCostDetails() };
          if (call.wantMetadata) meta.gateway_metadata = this.metadata(p, o, attempts);
          const s = lastAttempt ? this.codec(p, lastAttempt).openStream(meta) : null;
          if (s) raw.end(s.errorOut(error.status, error.message, String(error.metadata?.error_type ?? 'provider_unavailable'), meta));
          return { result: null };
        },
      }));
    } finally {
      clearInterval(keepalive);
      if (out.committed && !raw.writableEnded) raw.end();
    }
  }

  /**
   * A streamed reply that a content guardrail blocked (the upstream was left at the block): what was sent stays sent,
   * the stream ends with the API's error event (403, naming the guardrail), and the generation is recorded as blocked
   * with the usage reported so far.
   */
  private blockedStream(p: Prepared, call: ChatCall, id: string, created: number, o: Outcome, s: StreamSession, attempts: AttemptLog[], out: StreamOut, raw: ServerResponse, cur: Relay) {
    const err = streamBlockedError(s.blocked!, [...(p.pipeline ?? []), ...(o.outputPipeline ?? [])]);
    // Billed and settled like a cut stream: the upstream's usage when it came, else the output it produced so far.
    Object.assign(o, { status: err.status, error: err, finish: 'content_filter', ...cutUsage(p, s) });
    const meta = this.answerMeta(p, o, attempts, id, created, call, true);
    out.commit();
    raw.end(cur.held + s.errorOut(err.status, err.message, 'content_filter', meta));
    this.record(p, call, id, o, attempts, meta.cost);
    return { result: null, cost: meta.cost, tokens: usedTokens(o) };
  }

  /**
   * Relays an upstream stream to the client until it ends; the output of its last read is held back in `cur.held`, to
   * go out with the final event. Throws the stream's failure once what came before it was written (or held).
   */
  private async pipe(cur: Relay, session: StreamSession, res: UpstreamExchange, out: StreamOut, o: Outcome, t0: number): Promise<void> {
    const decoder = new StringDecoder('utf8'); // keeps characters split across reads; cheaper than TextDecoder
    for (let chunk = await res.read(); chunk !== null; chunk = await res.read()) {
      const text = session.push(session.binary ? chunk : decoder.write(chunk));
      if (session.contentStarted && o.firstTokenAt === null) {
        o.firstTokenAt = this.now();
        o.ttftMs = Math.round(o.firstTokenAt - t0);
      }
      if (text) {
        if (cur.tap) cur.tap.push(typeof text === 'string' ? text : text.toString());
        out.commit();
        if (res.finished) cur.held += text;
        else {
          const pushback = out.write(text);
          if (pushback) await pushback;
        }
      }
      if (session.failure) throw session.failure;
      if (session.blocked) return; // a content guardrail stopped the reply: nothing more is read
    }
    const tail = session.end();
    if (tail) {
      if (cur.tap) cur.tap.push(tail);
      out.commit();
      cur.held += tail;
    }
    if (session.failure) throw session.failure;
  }
}

/**
 * The usage of a stream that ended early (cut, failed or blocked after content flowed): the upstream's when it came,
 * else the output counted so far with the prompt estimated (docs/spend.md, "Cut streams").
 */
function cutUsage(p: Prepared, s: StreamSession): { usage: Outcome['usage']; estimated: boolean } {
  const usage = s.usage();
  if (usage) return { usage, estimated: false };
  return { usage: { promptTokens: p.promptEstimate, completionTokens: Math.min(s.producedTokens, p.maxOut ?? Infinity) }, estimated: true };
}

/** `gateway_metadata.pipeline` when something acted (content guardrails on the input and the output). */
function pipelineField(pipeline: PipelineEntry[]): { pipeline?: PipelineEntry[] } {
  return pipeline.length > 0 ? { pipeline } : {};
}

/** The output limit a body asks for, in any API's field (for middle-out's budget). */
function maxTokensOf(body: Record<string, unknown>): number | null {
  const gen = body.generationConfig as { maxOutputTokens?: unknown } | undefined;
  const v = body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens ?? gen?.maxOutputTokens;
  return typeof v === 'number' ? v : null;
}

/** Adds a pipeline entry after the reply was rendered: to the request's list and to the body's gateway_metadata. */
function withPipelineEntry(p: Prepared, body: Record<string, unknown>, entry: PipelineEntry): void {
  p.pipeline = [...(p.pipeline ?? []), entry];
  const meta = body.gateway_metadata as Record<string, unknown> | undefined;
  if (meta && typeof meta === 'object') meta.pipeline = p.pipeline;
}

function recordedPipeline(entries: PipelineEntry[]): Array<Record<string, unknown>> | null {
  return entries.length > 0 ? (entries as unknown as Array<Record<string, unknown>>) : null;
}
