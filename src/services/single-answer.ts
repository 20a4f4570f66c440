/**
 * The attempt loop of the inference APIs that answer one JSON body from one upstream JSON answer — embeddings,
 * transcriptions, rerank: the routing plan's endpoints in order until one answers validly; the endpoint's health
 * updated; an upstream error, timeout, refused connection or invalid answer moves on to the next; the client going
 * away stops at once; the last error is answered (`attemptsHttpError`), with the attempts in `gateway_metadata` when
 * asked; the generation record of every request. Each API supplies its upstream request, its parser, and what a
 * valid answer bills and answers.
 */
import type { EndpointDef, ProviderDef } from '../core/catalog-types.js';
import type { ProviderPreferences, ProviderSortBy } from '../core/provider-prefs.js';
import { planRoute, type Attempt, type ExclusionReason, type RouteCatalog, type RoutePlan } from '../core/routing.js';
import type { KeyRow } from '../store/types.js';
import type { UpstreamError } from '../core/provider-errors.js';
import type { ApiCall, ApiServiceDeps } from './api-deps.js';
import { answerRecord, type AnswerOutcome } from './generations.js';
import type { AttemptLog } from './attempts/errors.js';
import { recordingRefusal } from './attempts/refusal.js';
import { planned, runGeneration } from './attempts/runner.js';
import { cachedJson, type JsonReply } from './attempts/cache-step.js';
import { sendAttempt, sendForText } from './attempts/send.js';
import type { UpstreamExchange } from '../providers/http.js';
import { newGenerationId } from './generation-id.js';
import type { IoApi, IoCapture } from '../core/io-log.js';
import { watchAttempts } from './observability/watch.js';
import type { SpendAsk } from '../core/spend-ask.js';
import { routeMetadata } from './route-metadata.js';

/** One attempt's upstream request, and how to read its answer. */
export interface AttemptRequest<R> {
  url: URL;
  headers: Record<string, string>;
  body: string | Buffer;
  /** Parameters the caller set that this endpoint does not take (not sent; named in gateway_metadata). */
  dropped: string[];
  /** A non-2xx answer as the gateway's error. */
  parseError: (status: number, text: string, headers: Record<string, string | string[] | undefined>) => UpstreamError;
  /** A 2xx answer; throws UpstreamError (502) when it is not a valid one. */
  parse: (text: string) => R;
  /** Reads the 2xx answer as it arrives (a stream) instead of `parse` on its whole text; throws like `parse`. */
  read?: (res: UpstreamExchange) => Promise<R>;
  /** Signs the request as sent (Bedrock's SigV4), when the protocol authenticates that way. */
  authorize?: (req: { url: URL; headers: Record<string, string>; body: string }) => Promise<{ url: URL; headers: Record<string, string>; body: string }>;
}

/** What a valid answer bills, and the reply body (gateway_metadata is added by the runner when asked). */
export interface ServedAnswer {
  body: Record<string, unknown>;
  promptTokens: number;
  completionTokens: number;
  /** USD; null when the price is unknown. */
  cost: number | null;
  upstreamId: string | null;
}

export interface SingleAnswerRun<R> {
  deps: ApiServiceDeps;
  /** The generation record's `api_type`. */
  apiType: string;
  /** The model as requested. */
  requested: string;
  call: ApiCall;
  prepared: { plan: RoutePlan };
  /**
   * What an attempt reserves in the key's limits before it is sent (docs/spend.md): an upper bound of its cost at the
   * endpoint's prices; null or absent when it cannot be bounded (every limit must then have room left).
   */
  ask?(a: Attempt): SpendAsk | null;
  /** `id`: the request's generation id (e.g. for events relayed while the answer streams in). */
  request(a: Attempt, id: string): AttemptRequest<R>;
  /** A valid answer from `a`: what it bills and what the caller gets. */
  served(id: string, a: Attempt, parsed: R): ServedAnswer;
  /** The API's name in the response cache's keys, for the APIs that offer the cache (when the client asks for it). */
  cacheAs?: string;
  /** The request body, kept as its input when the workspace logs content (I/O logging); absent = never logged. */
  input?: { api: IoApi; body: Record<string, unknown> };
  /** After a failed attempt: true ends the run with that failure (e.g. part of the answer already reached the client). */
  stopAfterFailure?(): boolean;
}

export interface PlanRequest {
  key: KeyRow;
  route: RouteCatalog;
  model: string;
  /** The API's own endpoint filter, after the policy's (e.g. an endpoint that cannot honour `dimensions`). */
  endpointFilter?: (endpoint: EndpointDef, provider: ProviderDef) => ExclusionReason | undefined;
  /** The optional parameters the caller set (for `provider.require_parameters`). */
  params: string[];
  provider?: ProviderPreferences | null;
  estimatedPromptTokens?: number;
  /** Called with the plan before the limit check, e.g. to word a routing error for this API. */
  adjust?: (plan: RoutePlan) => void;
}

/**
 * The routing plan of one request of a non-chat API: organization settings and guardrails (403/404, budgets; the same
 * policy functions as chat) and the workspace's default sort. Spending limits are reserved per attempt by the runner.
 */
export async function planRequest(deps: ApiServiceDeps, r: PlanRequest): Promise<{ plan: RoutePlan }> {
  const g = deps.guardrails;
  const { endpointPolicy, defaultSort } = g ? await g.admitModel(r.key, r.route, r.model) : { endpointPolicy: undefined, defaultSort: null };
  const workspace = deps.workspaces ? await deps.workspaces.cached(r.key.workspace_id) : null;
  const filter = r.endpointFilter;
  const plan = planRoute({
    now: deps.now ? deps.now() : Date.now(),
    rng: deps.rng ?? Math.random,
    models: [r.model],
    catalog: r.route,
    hasCredentials: deps.catalog.hasCredentials,
    byok: deps.byok?.routing(r.key),
    health: deps.health.health,
    // The policy's reason first, then the API's own.
    endpointPolicy: endpointPolicy || filter ? (ep, p) => endpointPolicy?.(ep, p) ?? filter?.(ep, p) : undefined,
    params: r.params,
    provider: r.provider ?? {},
    defaultSort: (workspace?.default_provider_sort as ProviderSortBy | null | undefined) ?? defaultSort,
    estimatedPromptTokens: r.estimatedPromptTokens,
  });
  r.adjust?.(plan);
  return { plan };
}

/**
 * Runs the attempts of a prepared request (services/attempts/runner.ts) and records its generation — served or not,
 * with its cost, which also ends its in-flight count against the key's limit (`prepared.release`).
 */
export async function runSingleAnswer<R>(run: SingleAnswerRun<R>): Promise<JsonReply> {
  const step = run.deps.cache;
  const use = step && run.cacheAs ? step.use(run.call.cache, run.call.key.hash, run.cacheAs, false) : null;
  // A hit makes no attempt (nothing to reserve), but a key without room left gets its 402 all the same.
  if (use) await run.deps.guardrails?.checkRoom(run.call.key);
  return cachedJson(step, use, () => answer(run));
}

async function answer<R>(run: SingleAnswerRun<R>): Promise<{ id: string; body: Record<string, unknown> }> {
  const { deps, call } = run;
  const plan = run.prepared.plan;
  const now = deps.now ?? Date.now;
  const started = now();
  const id = newGenerationId();
  let dropped: string[] = [];
  const io = await capture(run);
  const metadata = (attempts: AttemptLog[], selected: Attempt | null) => routeMetadata(plan, run.requested, attempts, dropped, selected);
  const record = (attempts: AttemptLog[], o: Pick<AnswerOutcome, 'attempt' | 'status' | 'error' | 'cancelled'> & Partial<Omit<ServedAnswer, 'body'>>) => {
    const cost = o.cost ?? null;
    const row = answerRecord({
      ...o,
      id,
      requestId: call.requestId,
      key: call.key,
      apiType: run.apiType,
      requestedModel: run.requested,
      promptTokens: o.promptTokens ?? 0,
      completionTokens: o.completionTokens ?? 0,
      cost,
      upstreamId: o.upstreamId ?? null,
      started,
      end: now(),
      attempts,
    });
    deps.recorder.record(row, io);
    call.trace?.record(row, io);
  };
  return runGeneration({
    ...planned(plan, call.cancel, { health: deps.health, now, hooks: recordingRefusal(deps.guardrails?.spendHooks<Attempt>(call.key, (a) => run.ask?.(a) ?? null), (err) => record([], { attempt: null, status: 402, error: { status: 402, message: err.message }, cancelled: false })) }),
    observer: watchAttempts<Attempt>(io, call.trace, null),
    errorHeaders: { 'x-generation-id': id },
    attempt: async (a) => {
      const req = run.request(a, id);
      dropped = req.dropped;
      let sent = call.trace ? { ...req, headers: call.trace.headers(req.headers) } : req;
      if (req.authorize) sent = { ...sent, ...(await req.authorize({ url: sent.url, headers: sent.headers, body: String(sent.body) })) };
      if (!req.read) return req.parse(await sendForText(deps.http, sent, req.parseError, deps.catalog.timeouts(a.provider), call.cancel));
      const res = await sendAttempt(deps.http, sent, req.parseError, deps.catalog.timeouts(a.provider), call.cancel);
      try {
        return await req.read(res);
      } finally {
        res.close();
      }
    },
    failed: () => (run.stopAfterFailure?.() ? 'stop' : undefined),
    served: (a, parsed, _i, attempts) => {
      const { body, ...billed } = run.served(id, a, parsed);
      if (io) io.answer = body;
      record(attempts, { ...billed, attempt: a, status: 200, error: null, cancelled: false });
      if (call.wantMetadata) body.gateway_metadata = metadata(attempts, a);
      return { result: { id, body }, cost: billed.cost, tokens: billed.promptTokens + billed.completionTokens };
    },
    recordUnserved: (u, attempts) => record(attempts, { attempt: null, status: u.status, error: { status: u.error.status, message: u.error.message }, cancelled: u.cancelled }),
    errorMetadata: (attempts) => (call.wantMetadata ? metadata(attempts, null) : undefined),
  });
}

/** I/O logging's capture of the request, when its workspace logs it (the workspace from its cache). */
async function capture<R>(run: SingleAnswerRun<R>): Promise<IoCapture | null> {
  const io = run.deps.io;
  if (!io || !run.input) return null;
  const ws = run.deps.workspaces ? await run.deps.workspaces.cached(run.call.key.workspace_id) : null;
  return io.capture(ws, run.call.key.hash, run.input.api, run.input.body);
}
