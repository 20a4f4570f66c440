/**
 * Chat completions: presets, model and routing resolution, upstream attempts with fallbacks, streaming relay,
 * cost, gateway metadata and the generation record. The HTTP route only validates and hands over.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Logger } from 'pino';
import type { ProviderDef } from '../core/catalog-types.js';
import { carriesOutput, estimatePromptTokens, normalizeChoices } from '../core/chat-shape.js';
import { openaiBody, requestParams } from '../core/params.js';
import { computeCost, type TokenUsage } from '../core/pricing.js';
import { mergePreset, parsePresetModel } from '../core/presets.js';
import { applyDeprecatedRoute, type ProviderPreferences, type ProviderSortBy } from '../core/provider-prefs.js';
import { planRoute, type Attempt, type RoutePlan } from '../core/routing.js';
import { badRequest, HttpError } from '../http/errors.js';
import { UpstreamError } from '../providers/errors.js';
import { networkError, type UpstreamHttp } from '../providers/http.js';
import { chatHeaders, chatUrl, openaiError, streamError, tokenUsage, type OpenAIUsage } from '../providers/openai/chat.js';
import type { GenerationRow, KeyRow } from '../store/types.js';
import type { CatalogService } from './catalog.js';
import type { GenerationRecorder } from './generations.js';
import type { HealthTracker } from './health.js';
import type { PresetService } from './presets.js';
import type { WorkspaceService } from './workspaces.js';

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
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

interface Prepared {
  body: Record<string, unknown>;
  requested: string;
  plan: RoutePlan;
  stream: boolean;
  presetId: string | null;
  sessionId: string | null;
  dropped: Map<string, string[]>;
}

interface AttemptLog {
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

const VARIANTS = new Set(['free', 'nitro', 'floor', 'exacto', 'online', 'thinking', 'extended']);

export function newGenerationId(): string {
  return `gen-${Math.floor(Date.now() / 1000)}-${randomBytes(10).toString('base64url')}`;
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
  async prepare(input: Record<string, unknown>, call: ChatCall): Promise<Prepared> {
    let body = input;
    const fromModel = parsePresetModel(typeof body.model === 'string' ? body.model : undefined);
    const presetSlug = (typeof body.preset === 'string' ? body.preset : undefined) ?? fromModel.preset;
    let presetId: string | null = null;
    if (presetSlug) {
      const { preset, version } = await this.deps.presets.designatedCached(call.key.workspace_id, presetSlug);
      presetId = preset.id;
      const request = { ...body, model: fromModel.model };
      if (request.model === undefined) delete request.model;
      body = mergePreset(version.config, request);
      if (version.system_prompt && Array.isArray(body.messages)) {
        body.messages = [{ role: 'system', content: version.system_prompt }, ...(body.messages as unknown[])];
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
    if (Array.isArray(body.models)) for (const m of body.models as string[]) if (!requestedModels.includes(m)) requestedModels.push(m);
    if (requestedModels.length === 0) throw badRequest('model is required (or models, a preset, or the workspace default_text_model)', { field: 'model' });

    let provider = applyDeprecatedRoute((body.provider as ProviderPreferences | null | undefined) ?? undefined, body.route as 'fallback' | 'sort' | undefined) ?? {};
    const models: string[] = [];
    for (const id of requestedModels) {
      const colon = id.lastIndexOf(':');
      const variant = colon > 0 ? id.slice(colon + 1) : '';
      if (!VARIANTS.has(variant)) {
        models.push(id);
        continue;
      }
      models.push(id.slice(0, colon));
      if (variant === 'nitro' && !provider.sort) provider = { ...provider, sort: 'throughput' };
      if (variant === 'floor' && !provider.sort) provider = { ...provider, sort: 'price' };
      if (variant === 'free') provider = { ...provider, max_price: { ...provider.max_price, prompt: 0, completion: 0 } };
    }

    const sessionId = (typeof body.session_id === 'string' ? body.session_id : undefined) ?? call.sessionHeader ?? null;
    const sticky = sessionId ? this.sessions.get(`${call.key.workspace_id}|${sessionId}`) : undefined;
    const maxOut = (body.max_completion_tokens ?? body.max_tokens) as number | null | undefined;
    const plan = planRoute({
      now: this.now(),
      rng: this.deps.rng ?? Math.random,
      models,
      catalog: this.deps.catalog.route,
      hasCredentials: this.deps.catalog.hasCredentials,
      health: this.deps.health.health,
      params: requestParams(body),
      provider,
      defaultSort: (workspace?.default_provider_sort as ProviderSortBy | null | undefined) ?? null,
      estimatedPromptTokens: estimatePromptTokens(body.messages),
      maxOutputTokens: typeof maxOut === 'number' ? maxOut : undefined,
      stickyEndpoint: sticky && this.now() - sticky.at < this.deps.options.sessionTtlMs ? { model: sticky.model, tag: sticky.tag } : undefined,
    });
    return { body, requested: requestedModels.join(', '), plan, stream: body.stream === true, presetId, sessionId, dropped: new Map() };
  }

  /** The routing error of an empty plan as an HttpError. */
  private planError(p: Prepared): HttpError {
    const e = p.plan.error!;
    const metadata: Record<string, unknown> = { error_type: e.code === 'model_not_found' ? 'not_found' : e.code, excluded_by: e.excluded_by ?? [] };
    const unroutable = p.plan.considered.filter((c) => c.excluded === 'no_credentials').map((c) => c.provider);
    if (unroutable.length > 0) metadata.providers_without_credentials = [...new Set(unroutable)];
    const headers = e.retry_after_ms ? { 'retry-after': String(Math.ceil(e.retry_after_ms / 1000)) } : undefined;
    return new HttpError(e.status, e.message, metadata, headers);
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
      ...(o.attempt && !o.attempt.endpoint.pricing ? { pricing: 'unknown' } : {}),
    };
  }

  private usageView(o: Outcome, raw: OpenAIUsage | null) {
    const pricing = o.attempt?.endpoint.pricing ?? null;
    const u = o.usage ?? { promptTokens: 0, completionTokens: 0 };
    const cost = computeCost(pricing, u);
    return {
      ...(raw ?? {}),
      prompt_tokens: u.promptTokens,
      completion_tokens: u.completionTokens,
      total_tokens: u.promptTokens + u.completionTokens,
      prompt_tokens_details: { ...(raw?.prompt_tokens_details ?? {}), cached_tokens: u.cachedReadTokens ?? 0, cache_write_tokens: u.cacheWriteTokens ?? 0 },
      completion_tokens_details: { ...(raw?.completion_tokens_details ?? {}), reasoning_tokens: u.reasoningTokens ?? 0 },
      // Unknown prices are reported as null (and flagged in gateway_metadata), never as $0.
      cost: cost.cost,
      is_byok: false,
      cost_details: {
        upstream_inference_prompt_cost: cost.priced ? cost.promptCost : null,
        upstream_inference_completions_cost: cost.priced ? cost.completionCost : null,
        upstream_inference_cost: cost.cost,
      },
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
      created_at: new Date(end).toISOString(),
    };
    this.deps.recorder.record(row);
    if (o.attempt && o.status === 200 && p.sessionId) {
      if (this.sessions.size > 50_000) this.sessions.clear();
      this.sessions.set(`${call.key.workspace_id}|${p.sessionId}`, { model: o.attempt.model, tag: o.attempt.endpoint.tag, at: end });
    }
  }

  // ---- upstream ----------------------------------------------------------------------------------

  private async send(p: Prepared, a: Attempt, call: ChatCall, stream: boolean) {
    const { body, dropped } = openaiBody(p.body, a.endpoint, stream);
    p.dropped.set(`${a.model}|${a.endpoint.tag}`, dropped);
    const timeouts = this.deps.catalog.timeouts(a.provider);
    const signal = AbortSignal.any([call.signal, AbortSignal.timeout(timeouts.totalMs)]);
    const res = await this.deps.http.post({
      url: chatUrl(a.provider),
      headers: chatHeaders(a.provider, this.deps.catalog.apiKey(a.provider), stream),
      body: JSON.stringify(body),
      timeouts,
      signal,
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await res.body.text().catch(() => '');
      throw openaiError(res.statusCode, text, res.headers);
    }
    return { res, signal };
  }

  private failed(a: Attempt, err: unknown, attempts: AttemptLog[], signal?: AbortSignal): UpstreamError {
    const e = err instanceof UpstreamError ? err : networkError(err, signal);
    attempts.push({ provider: a.provider.slug, model: a.model, status: e.status, message: e.message });
    if (e.type !== 'cancelled' && e.type !== 'invalid_request' && e.type !== 'context_length_exceeded') this.deps.health.failure(a.endpoint);
    return e;
  }

  /** The error reply after every attempt failed: the last error, with the provider detail in metadata. */
  private finalError(last: UpstreamError | null, lastAttempt: Attempt | null, attempts: AttemptLog[], retryHints: number[]): HttpError {
    if (!last) return new HttpError(503, 'No endpoint could serve the request', { error_type: 'provider_unavailable' });
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
    return new HttpError(last.status, message, metadata, hint !== null ? { 'retry-after': String(hint) } : undefined);
  }

  // ---- non-streaming -----------------------------------------------------------------------------

  async complete(p: Prepared, call: ChatCall): Promise<{ id: string; body: Record<string, unknown> }> {
    const id = newGenerationId();
    const attempts: AttemptLog[] = [];
    const o: Outcome = { attempt: null, attemptNo: 0, usage: null, upstreamId: null, finish: null, nativeFinish: null, status: 0, error: null, ttftMs: null, cancelled: false, started: this.now(), firstTokenAt: null };
    if (p.plan.error) {
      const err = this.planError(p);
      this.record(p, call, id, { ...o, status: err.status, error: err }, attempts, null);
      throw this.withMetadata(err, p, o, attempts, call);
    }
    let last: UpstreamError | null = null;
    let lastAttempt: Attempt | null = null;
    const retryHints: number[] = [];
    for (const [i, a] of p.plan.attempts.entries()) {
      if (call.signal.aborted) break;
      const t0 = this.now();
      let signal: AbortSignal | undefined;
      try {
        const sent = await this.send(p, a, call, false);
        signal = sent.signal;
        const text = await sent.res.body.text();
        let json: Record<string, unknown>;
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          throw new UpstreamError(502, 'Provider returned an invalid (non-JSON) response', 'provider_unavailable', 200, text.slice(0, 512));
        }
        if (!json || !Array.isArray(json.choices)) {
          const err = (json as { error?: unknown })?.error;
          if (err) throw streamError(json as { error?: { message?: string } });
          throw new UpstreamError(502, 'Provider returned an invalid response (no choices)', 'provider_unavailable', 200, json);
        }
        const now = this.now();
        o.attempt = a;
        o.attemptNo = i + 1;
        o.status = 200;
        o.ttftMs = Math.round(now - t0);
        o.firstTokenAt = now;
        o.upstreamId = typeof json.id === 'string' ? json.id : null;
        const finish = (json.choices as Array<{ finish_reason?: string }>)[0]?.finish_reason ?? null;
        o.nativeFinish = finish;
        o.finish = normalizeChoices(json.choices);
        o.usage = tokenUsage(json.usage as OpenAIUsage);
        const usage = this.usageView(o, (json.usage as OpenAIUsage) ?? null);
        attempts.push({ provider: a.provider.slug, model: a.model, status: 200 });
        this.deps.health.success(a.endpoint, o.ttftMs, null);
        const out: Record<string, unknown> = {
          ...json,
          id,
          object: 'chat.completion',
          model: a.model,
          provider: a.provider.name,
          system_fingerprint: json.system_fingerprint ?? null,
          usage,
        };
        if (call.wantMetadata) out.gateway_metadata = this.metadata(p, o, attempts);
        this.record(p, call, id, o, attempts, usage.cost);
        return { id, body: out };
      } catch (err) {
        last = this.failed(a, err, attempts, signal);
        lastAttempt = a;
        if (last.retryAfter !== null) retryHints.push(last.retryAfter);
        if (last.type === 'cancelled') break;
      }
    }
    o.cancelled = call.signal.aborted;
    const finalError = this.finalError(last, lastAttempt, attempts, retryHints);
    this.record(p, call, id, { ...o, status: finalError.status, error: finalError }, attempts, null);
    throw this.withMetadata(finalError, p, o, attempts, call);
  }

  private withMetadata(err: HttpError, p: Prepared, o: Outcome, attempts: AttemptLog[], call: ChatCall): HttpError {
    if (!call.wantMetadata) return err;
    err.gatewayMetadata = this.metadata(p, o, attempts);
    return err;
  }

  // ---- streaming ---------------------------------------------------------------------------------

  /**
   * Relays a stream. Until the first content chunk is forwarded, any failure moves on to the next endpoint; the 200
   * status is committed with the first upstream chunk that carries output (an opening role-only chunk is held back
   * until then), or earlier by a keep-alive comment when the wait is long.
   * After content has flowed, an error ends the stream with an error chunk (`finish_reason: "error"`).
   */
  async stream(p: Prepared, call: ChatCall, raw: ServerResponse): Promise<void> {
    const id = newGenerationId();
    const created = Math.floor(this.now() / 1000);
    const attempts: AttemptLog[] = [];
    const o: Outcome = { attempt: null, attemptNo: 0, usage: null, upstreamId: null, finish: null, nativeFinish: null, status: 0, error: null, ttftMs: null, cancelled: false, started: this.now(), firstTokenAt: null };
    if (p.plan.error) {
      const err = this.planError(p);
      this.record(p, call, id, { ...o, status: err.status, error: err }, attempts, null);
      throw this.withMetadata(err, p, o, attempts, call);
    }

    let committed = false;
    let contentStarted = false;
    let lastWrite = this.now();
    const write = async (s: string) => {
      lastWrite = this.now();
      if (!raw.write(s)) await new Promise<void>((resolve) => {
        const done = () => {
          raw.off('drain', done);
          raw.off('close', done);
          resolve();
        };
        raw.on('drain', done);
        raw.on('close', done);
      });
    };
    const commit = () => {
      if (committed) return;
      committed = true;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-generation-id': id,
        'x-request-id': call.requestId,
      });
    };
    // Keep-alive comments while nothing else is written (before the first token, and in long pauses).
    const keepalive = setInterval(() => {
      if (raw.destroyed || this.now() - lastWrite < this.deps.options.keepaliveMs) return;
      commit();
      void write(': GATEWAY PROCESSING\n\n');
    }, Math.max(50, Math.floor(this.deps.options.keepaliveMs / 2)));

    const chunkBase = (model: string, provider: ProviderDef) => ({ id, object: 'chat.completion.chunk', created, model, provider: provider.name });
    let last: UpstreamError | null = null;
    let lastAttempt: Attempt | null = null;
    const retryHints: number[] = [];
    try {
      for (const [i, a] of p.plan.attempts.entries()) {
        if (call.signal.aborted) break;
        const t0 = this.now();
        let signal: AbortSignal | undefined;
        let rawUsage: OpenAIUsage | null = null;
        let done = false;
        // Chunks without output (the opening role chunk) wait for the first output: until then nothing is sent and
        // a failure still falls back to the next endpoint.
        const held: string[] = [];
        try {
          const sent = await this.send(p, a, call, true);
          signal = sent.signal;
          const events: EventSourceMessage[] = [];
          const parser = createParser({ onEvent: (ev) => events.push(ev) });
          const decoder = new TextDecoder();
          for await (const chunk of sent.res.body) {
            parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
            for (const ev of events) {
              if (done) break;
              if (ev.data === '[DONE]') {
                done = true;
                break;
              }
              let json: Record<string, unknown>;
              try {
                json = JSON.parse(ev.data) as Record<string, unknown>;
              } catch {
                throw new UpstreamError(502, 'Provider sent an invalid stream event', 'provider_unavailable', 200, ev.data.slice(0, 512));
              }
              if (json.error) throw streamError(json as { error?: { message?: string } });
              if (json.usage) {
                rawUsage = json.usage as OpenAIUsage;
                delete json.usage;
              }
              if (typeof json.id === 'string') o.upstreamId = json.id;
              const choices = json.choices;
              if (!Array.isArray(choices) || choices.length === 0) continue; // usage-only chunk: folded into ours
              const fin = (choices as Array<{ finish_reason?: string | null }>).find((c) => c.finish_reason)?.finish_reason ?? null;
              if (fin) o.nativeFinish = fin;
              const norm = normalizeChoices(choices);
              if (norm) o.finish = norm;
              const out = `data: ${JSON.stringify({ ...json, ...chunkBase(a.model, a.provider) })}\n\n`;
              if (!contentStarted && !carriesOutput(choices)) {
                held.push(out);
                continue;
              }
              if (!contentStarted) {
                contentStarted = true;
                o.firstTokenAt = this.now();
                o.ttftMs = Math.round(o.firstTokenAt - t0);
                o.attempt = a;
                o.attemptNo = i + 1;
              }
              commit();
              await write(held.splice(0).join('') + out);
            }
            events.length = 0;
            if (done) break;
          }
          if (!done) throw new UpstreamError(502, 'Provider stream ended before completion', 'provider_unavailable', 200, null);
          // Success: the final usage chunk (choices empty), metadata on it when asked, then [DONE].
          if (!contentStarted) {
            o.attempt = a;
            o.attemptNo = i + 1;
            o.ttftMs = Math.round(this.now() - t0);
          }
          o.status = 200;
          o.usage = tokenUsage(rawUsage);
          attempts.push({ provider: a.provider.slug, model: a.model, status: 200 });
          const usage = this.usageView(o, rawUsage);
          const tail: Record<string, unknown> = { ...chunkBase(a.model, a.provider), choices: [], usage };
          if (call.wantMetadata) tail.gateway_metadata = this.metadata(p, o, attempts);
          commit();
          await write(`${held.splice(0).join('')}data: ${JSON.stringify(tail)}\n\ndata: [DONE]\n\n`);
          const genMs = o.firstTokenAt !== null ? this.now() - o.firstTokenAt : 0;
          this.deps.health.success(a.endpoint, o.ttftMs ?? 0, o.usage && genMs > 0 ? (o.usage.completionTokens * 1000) / genMs : null);
          this.record(p, call, id, o, attempts, usage.cost);
          return;
        } catch (err) {
          last = this.failed(a, err, attempts, signal);
          lastAttempt = a;
          if (last.retryAfter !== null) retryHints.push(last.retryAfter);
          if (last.type === 'cancelled' || call.signal.aborted) break;
          if (contentStarted) {
            // Too late to fall back: end the stream with an error chunk, status stays 200.
            o.status = last.status;
            o.error = last;
            o.finish = 'error';
            o.usage = tokenUsage(rawUsage);
            const masked = last.status >= 500 ? 'Provider error during the stream' : last.message;
            const errChunk = {
              ...chunkBase(a.model, a.provider),
              error: { code: last.status, message: masked, metadata: { error_type: last.type, ...(last.status < 500 && last.providerCode ? { provider_code: last.providerCode } : {}) } },
              choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error' }],
            };
            await write(`data: ${JSON.stringify(errChunk)}\n\ndata: [DONE]\n\n`);
            const cost = o.usage ? computeCost(a.endpoint.pricing, o.usage).cost : null;
            this.record(p, call, id, o, attempts, cost);
            return;
          }
        }
      }
      // Every attempt failed before any content.
      o.cancelled = call.signal.aborted;
      const withHint = this.finalError(last, lastAttempt, attempts, retryHints);
      this.record(p, call, id, { ...o, status: o.cancelled ? 499 : withHint.status, error: withHint }, attempts, null);
      if (o.cancelled) return;
      if (!committed) throw this.withMetadata(withHint, p, o, attempts, call);
      const errChunk: Record<string, unknown> = {
        id,
        object: 'chat.completion.chunk',
        created,
        model: lastAttempt?.model ?? p.requested,
        error: { code: withHint.status, message: withHint.message, metadata: withHint.metadata },
        choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error' }],
      };
      if (call.wantMetadata) errChunk.gateway_metadata = this.metadata(p, o, attempts);
      await write(`data: ${JSON.stringify(errChunk)}\n\ndata: [DONE]\n\n`);
    } finally {
      clearInterval(keepalive);
      if (committed && !raw.writableEnded) raw.end();
    }
  }
}
