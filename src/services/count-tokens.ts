/**
 * Token counting for the Messages API (`POST /messages/count_tokens`, docs/chat.md): the Anthropic SDK's
 * `messages.countTokens`, which Claude Code calls on every turn to manage its context window.
 *
 * Decisions:
 * - Counts are exact or not given. The model's endpoints are routed as for `/messages` (guardrails, provider
 *   preferences, health); the first with a counting API answers: Anthropic's `/messages/count_tokens` (the caller's
 *   fields, with the upstream model id), Gemini's `:countTokens` (the request translated as for generateContent), or
 *   OpenAI's `/responses/input_tokens` (the request translated as for the Responses API) for OpenAI Responses
 *   endpoints and providers that declare it (`token_counting: openai-responses`, as the shipped `openai` provider
 *   does). Other endpoints are skipped; when none is left the answer is a 404 — never a made-up
 *   number: a client such as Claude Code then uses its own estimate, whereas a wrong 200 (say `input_tokens: 0`) would
 *   be trusted and would stop its auto-compaction from ever triggering.
 * - Counting is free at the providers and bills nothing here: no generation record, no spend, and it does not count
 *   against the key's request rate limit (Claude Code sends dozens at start-up); the key must still be an enabled
 *   inference key within its guardrails.
 * - An upstream failure moves on to the next countable endpoint; the last one is answered like a `/messages` error.
 *   Endpoint health is left alone: a counting failure says nothing sure about generation.
 */
import type { ProviderDef } from '../core/catalog-types.js';
import type { ProviderSortBy } from '../core/provider-prefs.js';
import { planRoute, type Attempt } from '../core/routing.js';
import { splitVariant } from '../core/variants.js';
import { HttpError } from '../core/errors.js';
import { messagesInbound } from '../inbound/messages.js';
import { anthropicError, anthropicHeaders, anthropicUrl } from '../providers/anthropic/index.js';
import { UpstreamError } from '../core/provider-errors.js';
import { parseGoogleError } from '../providers/google/errors.js';
import { geminiHeaders, geminiMethodUrl, geminiModelPath, toGeminiBody } from '../providers/google/request.js';
import { invalidResponse, parseJsonObject, tokenCount } from '../providers/openai/ir-upstream.js';
import { chatHeaders, openaiError } from '../providers/openai/chat.js';
import { buildResponsesBody } from '../providers/openai-responses/upstream.js';
import type { UpstreamContext } from '../core/adapters.js';
import { networkError, type Cancellation, type UpstreamExchange, type UpstreamHttp } from '../providers/http.js';
import type { KeyRow } from '../store/types.js';
import type { CatalogService } from './catalog.js';
import { attemptsHttpError, type AttemptLog } from './chat.js';
import type { GuardrailService } from './guardrails.js';
import type { HealthTracker } from './health.js';
import type { WorkspaceService } from './workspaces.js';

/** Fields of an Anthropic count_tokens request (everything else of a Messages body is left out upstream). */
const ANTHROPIC_COUNT_FIELDS = ['messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers'] as const;

export interface CountTokensCall {
  key: KeyRow;
  /** The caller's `anthropic-beta` header, passed on to Anthropic endpoints (betas can change the count). */
  beta?: string;
  cancel: Cancellation;
}

type Counter = (
  body: Record<string, unknown>,
  ctx: UpstreamContext,
  call: CountTokensCall,
) => { url: URL; headers: Record<string, string>; body: string; parse: (text: string) => number; parseError: (status: number, text: string, headers: Record<string, string | string[] | undefined>) => UpstreamError };

/** The count in an upstream answer (`field` a non-negative integer), or a 502. */
function countIn(text: string, field: string): number {
  const json = parseJsonObject(text);
  const n = tokenCount(json[field]);
  if (n === null) throw invalidResponse(`Provider returned an invalid response (no ${field})`, json);
  return n;
}

/** Fields of a Responses body that `/responses/input_tokens` takes (it refuses the others, e.g. `store`, `max_output_tokens`). */
const RESPONSES_COUNT_FIELDS = ['model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'reasoning', 'text'] as const;

/** OpenAI's `/responses/input_tokens`: the request as the Responses API would get it (translated alike). */
const responsesCounter: Counter = (body, ctx) => {
  const full = buildResponsesBody({ ...messagesInbound.toIr({ ...body, max_tokens: 1 }), model: ctx.endpoint.upstreamModel, stream: false });
  const out: Record<string, unknown> = {};
  for (const f of RESPONSES_COUNT_FIELDS) if (full[f] !== undefined) out[f] = full[f];
  return {
    url: new URL(`${ctx.provider.baseUrl}/responses/input_tokens`),
    headers: chatHeaders(ctx.provider, ctx.apiKey, false),
    body: JSON.stringify(out),
    parse: (t) => countIn(t, 'input_tokens'),
    parseError: openaiError,
  };
};

const COUNTERS: Partial<Record<ProviderDef['protocol'], Counter>> = {
  'openai-responses': responsesCounter,
  anthropic: (body, ctx, call) => {
    const out: Record<string, unknown> = { model: ctx.endpoint.upstreamModel };
    for (const f of ANTHROPIC_COUNT_FIELDS) if (body[f] !== undefined && body[f] !== null) out[f] = body[f];
    const headers = anthropicHeaders(ctx, false);
    if (call.beta) headers['anthropic-beta'] = call.beta;
    return { url: anthropicUrl(ctx.provider, 'messages/count_tokens'), headers, body: JSON.stringify(out), parse: (t) => countIn(t, 'input_tokens'), parseError: anthropicError };
  },
  google: (body, ctx) => {
    // The request as generateContent would get it (system, tools and contents translated alike).
    const model = ctx.endpoint.upstreamModel;
    const g = toGeminiBody({ ...messagesInbound.toIr({ ...body, max_tokens: 1 }), model, stream: false });
    delete g.generationConfig;
    return {
      url: geminiMethodUrl(ctx.provider.baseUrl, model, 'countTokens'),
      headers: geminiHeaders(ctx, false),
      body: JSON.stringify({ generateContentRequest: { model: geminiModelPath(model), ...g } }),
      parse: (t) => countIn(t, 'totalTokens'),
      parseError: parseGoogleError,
    };
  },
};

/** The token-counting API of a provider: its protocol's, or the one it declares (`token_counting`). */
const counterOf = (p: ProviderDef): Counter | undefined => COUNTERS[p.protocol] ?? (p.tokenCounting === 'openai-responses' ? responsesCounter : undefined);

/** Whether an endpoint's provider has a token-counting API. */
export const canCount = (p: ProviderDef): boolean => counterOf(p) !== undefined;

export class CountTokensService {
  constructor(
    private readonly deps: {
      catalog: CatalogService;
      health: HealthTracker;
      http: UpstreamHttp;
      workspaces: WorkspaceService;
      guardrails?: GuardrailService;
      now?: () => number;
    },
  ) {}

  /** `{ input_tokens }` for a Messages body (schema-validated by the route). Throws HttpError when it cannot be counted. */
  async count(body: Record<string, unknown>, call: CountTokensCall): Promise<{ input_tokens: number }> {
    // Model ids as clients send them (Claude Code's bare ids) resolve as on /messages (src/core/model-aliases.ts).
    const requested = splitVariant(String(body.model)).base;
    const resolved = this.deps.catalog.resolve(requested, this.deps.guardrails ? (await this.deps.guardrails.settings()).model_aliases : null);
    const model = resolved.kind === 'found' ? resolved.id : requested;
    const decision = this.deps.guardrails ? await this.deps.guardrails.enforce(call.key, [model]) : null;
    const workspace = await this.deps.workspaces.cached(call.key.workspace_id);
    const plan = planRoute({
      now: this.deps.now ? this.deps.now() : Date.now(),
      rng: Math.random,
      models: decision?.models ?? [model],
      catalog: this.deps.catalog.route,
      hasCredentials: this.deps.catalog.hasCredentials,
      health: this.deps.health.health,
      endpointPolicy: decision?.endpointPolicy,
      params: [],
      provider: (body.provider as Record<string, unknown> | null | undefined) ?? {},
      defaultSort: (workspace?.default_provider_sort as ProviderSortBy | null | undefined) ?? decision?.defaultSort ?? null,
    });
    if (plan.error) {
      throw new HttpError(plan.error.status, plan.error.message, { error_type: plan.error.code === 'model_not_found' ? 'not_found' : plan.error.code });
    }
    const countable = plan.attempts.filter((a) => canCount(a.provider));
    if (countable.length === 0) {
      const protocols = [...new Set(plan.attempts.map((a) => a.provider.protocol))].join(', ');
      throw new HttpError(404, `Token counting is not available for ${model}: its providers (${protocols}) have no token-counting API, and the gateway does not estimate counts`, {
        error_type: 'not_found',
      });
    }
    const attempts: AttemptLog[] = [];
    let last: UpstreamError | null = null;
    let lastAttempt: Attempt | null = null;
    for (const a of countable) {
      if (call.cancel.aborted) break;
      let res: UpstreamExchange | null = null;
      try {
        const c = counterOf(a.provider)!(body, { provider: a.provider, endpoint: a.endpoint, apiKey: this.deps.catalog.apiKey(a.provider) }, call);
        res = await this.deps.http.post({ url: c.url, headers: c.headers, body: c.body, timeouts: this.deps.catalog.timeouts(a.provider), cancel: call.cancel });
        const text = await res.text();
        if (res.statusCode < 200 || res.statusCode >= 300) throw c.parseError(res.statusCode, text, res.headers);
        return { input_tokens: c.parse(text) };
      } catch (err) {
        if (err instanceof HttpError) throw err;
        const e = err instanceof UpstreamError ? err : networkError(err);
        attempts.push({ provider: a.provider.slug, model: a.model, status: e.status, message: e.message });
        last = e;
        lastAttempt = a;
        // The request itself is wrong (the next provider would say the same), or the client is gone.
        if (e.type === 'invalid_request' || e.type === 'cancelled' || call.cancel.aborted) break;
      } finally {
        res?.close();
      }
    }
    throw attemptsHttpError(last, lastAttempt, attempts, []);
  }
}

