/**
 * Chat completions (and the Messages, Responses and Gemini APIs through their codecs): the service the HTTP routes
 * call. Preparation (services/chat/prepare.ts), the JSON answer here, the streamed one in services/chat/stream.ts,
 * records and metadata in services/chat/record.ts; every attempt goes through the one attempt runner.
 */
import { outputAsk, promptTokensBound } from '../core/spend-ask.js';
import type { ServerResponse } from 'node:http';
import type { Attempt } from '../core/routing.js';
import type { UpstreamExchange } from '../providers/http.js';
import type { IrRequest } from '../core/ir.js';
import { screenOutput } from './content-guardrails.js';
import { codecFor, droppedFieldsHeader, INBOUND, type AttemptCodec, type InboundApi } from './codecs.js';
import type { AttemptLog } from './attempts/errors.js';
import { runGeneration, type AttemptHooks, type GenerationSpec, type Unserved } from './attempts/runner.js';
import { recordingRefusal } from './attempts/refusal.js';
import type { ParsedAnswer } from './codecs.js';
import { sendAttempt } from './attempts/send.js';
import { newGenerationId } from './generation-id.js';
import { cachedJson, cachedStream, type CacheUse, type JsonReply } from './attempts/cache-step.js';
import { attemptKey } from './byok.js';
import { watchAttempts } from './observability/watch.js';
import { prepareChat, type Sessions } from './chat/prepare.js';
import { answerMeta, generationRow, routingMetadata, withPipelineEntry } from './chat/record.js';
import { relayStream } from './chat/stream.js';
import { usedTokens, type ApiCallbacks, type ChatCall, type ChatDeps, type ChatEngine, type Outcome, type Prepared } from './chat/types.js';

export type { ChatCall, ChatDeps, ChatOptions } from './chat/types.js';

export class ChatService implements ChatEngine {
  private readonly sessions: Sessions = new Map();

  constructor(private readonly deps: ChatDeps) {}

  now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  private readonly clock = () => this.now();

  get keepaliveMs(): number {
    return this.deps.options.keepaliveMs;
  }

  /** Applies presets and checks cross-field rules, then plans the route. Throws HttpError (4xx) on bad input. */
  prepare(api: InboundApi, input: Record<string, unknown>, call: ChatCall): Promise<Prepared> {
    return prepareChat(this.deps, this.sessions, this.clock, api, input, call);
  }

  /** Queues the generation record; a served session is pinned to its endpoint. */
  record(p: Prepared, call: ChatCall, id: string, o: Outcome, attempts: AttemptLog[], cost: number | null): void {
    const end = this.now();
    const row = generationRow(p, call, id, o, attempts, cost, end);
    this.deps.recorder.record(row, p.io);
    call.trace?.record(row, p.io);
    if (o.attempt && o.status === 200 && p.sessionId) {
      if (this.sessions.size > 50_000) this.sessions.clear();
      this.sessions.set(`${call.key.workspace_id}|${p.sessionId}`, { model: o.attempt.model, tag: o.attempt.endpoint.tag, at: end });
    }
  }

  // ---- upstream ----------------------------------------------------------------------------------

  /** Sends one attempt; resolves with the 2xx exchange (the caller closes it), or throws the mapped UpstreamError. */
  send(p: Prepared, a: Attempt, call: ChatCall, codec: AttemptCodec, stream: boolean): Promise<UpstreamExchange> {
    const ctx = { provider: a.provider, endpoint: a.endpoint, apiKey: attemptKey(this.deps, a) };
    const { req, dropped } = codec.request(ctx, stream);
    if (dropped.length > 0) p.dropped.set(`${a.model}|${a.endpoint.tag}`, dropped);
    // Tracing on: the attempt span's context goes upstream (a copy of the headers; the built ones may be shared).
    const sent = call.trace ? { ...req, headers: call.trace.headers(req.headers) } : req;
    // Signed or token-authenticated protocols (SigV4, OAuth) finish the request here.
    if (codec.authorize) return codec.authorize(sent, ctx).then((signed) => sendAttempt(this.deps.http, signed, codec.parseError, this.deps.catalog.timeouts(a.provider), call.cancel));
    return sendAttempt(this.deps.http, sent, codec.parseError, this.deps.catalog.timeouts(a.provider), call.cancel);
  }

  codec(p: Prepared, a: Attempt): AttemptCodec {
    return codecFor(p.api, p.body, p.protocols.has('translated') ? this.ir(p) : null, a.endpoint, a.provider.protocol, p.outputFilters, p.outputHealing);
  }

  /** The IR of the request, built once (throws HttpError 400 for what the IR cannot carry). */
  private ir(p: Prepared): Omit<IrRequest, 'model'> {
    p.ir ??= INBOUND[p.api].toIr(p.body);
    return p.ir;
  }


  /**
   * What both answers (JSON and streamed) give the runner besides their attempt: the plan, the spend seam, the record
   * of an unserved request and the metadata of an error reply. One object literal of a fixed shape, `run`'s callbacks
   * copied in (a spread followed by more fields defines each of them through the runtime, on every request).
   */
  generation<T, R>(p: Prepared, call: ChatCall, id: string, o: Outcome, run: ApiCallbacks<T, R>): GenerationSpec<Attempt, T, R> {
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
      errorMetadata: (attempts: AttemptLog[]) => (call.wantMetadata ? routingMetadata(p, o, attempts) : undefined),
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

  /** Every field of an Outcome from the start (a streamed answer sets `outputPipeline`: added later, it changed the object's shape on every request). */
  fresh(): Outcome {
    return { attempt: null, attemptNo: 0, usage: null, upstreamId: null, finish: null, nativeFinish: null, status: 0, error: null, ttftMs: null, cancelled: false, estimated: false, started: this.now(), firstTokenAt: null, outputPipeline: undefined };
  }

  // ---- through the response cache ----------------------------------------------------------------

  /** The cache use of a request: its headers, or a preset's (or the body's) `cache_enabled`. */
  private cacheUse(p: Prepared, call: ChatCall) {
    return this.deps.cache?.use(call.cache, call.key.hash, p.api, p.stream, p.body) ?? null;
  }

  /**
   * A JSON answer, through the response cache when the request uses it (a hit answers without any attempt). Without
   * the cache, `complete`'s own promise: an async function returning a promise would resolve through it (two more
   * microtasks and a promise per request).
   */
  answer(p: Prepared, call: ChatCall): Promise<JsonReply> {
    const use = this.cacheUse(p, call);
    // Without the cache, the answer as is: its headers carry x-generation-id already.
    if (!use) return this.complete(p, call);
    return this.answerCached(use, p, call);
  }

  private async answerCached(use: CacheUse, p: Prepared, call: ChatCall): Promise<JsonReply> {
    // A hit makes no attempt (nothing to reserve), but a key without room left gets its 402 all the same.
    await this.deps.guardrails?.checkRoom(call.key);
    return cachedJson(this.deps.cache, use, () => this.complete(p, call));
  }

  /** A streamed answer, through the response cache when the request uses it (without it, `stream`'s own promise). */
  relay(p: Prepared, call: ChatCall, raw: ServerResponse): Promise<{ id: string } | null> {
    const use = this.cacheUse(p, call);
    if (!use) return this.stream(p, call, raw);
    return this.relayCached(use, p, call, raw);
  }

  private async relayCached(use: CacheUse, p: Prepared, call: ChatCall, raw: ServerResponse): Promise<{ id: string } | null> {
    await this.deps.guardrails?.checkRoom(call.key);
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
        // Field by field (Object.assign of a literal builds the literal, then copies it through the runtime).
        o.attempt = a;
        o.attemptNo = i + 1;
        o.status = 200;
        o.ttftMs = Math.round(now - t0);
        o.firstTokenAt = now;
        o.upstreamId = parsed.upstreamId;
        o.nativeFinish = parsed.native;
        o.finish = parsed.finish;
        o.usage = parsed.usage;
        const meta = answerMeta(p, o, attempts, id, created, call, true);
        const body = parsed.render(meta);
        if (p.io) p.io.answer = body;
        this.record(p, call, id, o, attempts, meta.cost);
        const headers = droppedFieldsHeader(p.dropped.size > 0 ? p.dropped.get(`${a.model}|${a.endpoint.tag}`) : undefined);
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

  /** Relays a streamed answer (services/chat/stream.ts). */
  stream(p: Prepared, call: ChatCall, raw: ServerResponse): Promise<{ id: string } | null> {
    return relayStream(this, p, call, raw);
  }
}
