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
import { attemptKey, type ByokService } from './byok.js';
import type { ProviderDef } from '../core/catalog-types.js';
import type { ProviderSortBy } from '../core/provider-prefs.js';
import { planRoute } from '../core/routing.js';
import { splitVariant } from '../core/variants.js';
import { HttpError } from '../core/errors.js';
import { messagesInbound } from '../inbound/messages.js';
import type { IrRequest } from '../core/ir.js';
import type { Cancellation, UpstreamHttp } from '../providers/http.js';
import { tokenCounterOf } from '../providers/registry.js';
import type { KeyRow } from '../store/types.js';
import type { CatalogService } from './catalog.js';
import { attemptsHttpError } from './attempts/errors.js';
import { runAttempts } from './attempts/runner.js';
import { sendForText } from './attempts/send.js';
import type { GuardrailService } from './guardrails.js';
import type { HealthTracker } from './health.js';
import type { WorkspaceService } from './workspaces.js';

export interface CountTokensCall {
  key: KeyRow;
  /** The caller's `anthropic-beta` header, passed on to Anthropic endpoints (betas can change the count). */
  beta?: string;
  cancel: Cancellation;
}

/** Whether an endpoint's provider has a token-counting API. */
export const canCount = (p: ProviderDef): boolean => tokenCounterOf(p) !== undefined;

export class CountTokensService {
  constructor(
    private readonly deps: {
      catalog: CatalogService;
      health: HealthTracker;
      http: UpstreamHttp;
      workspaces: WorkspaceService;
      guardrails?: GuardrailService;
      /** BYOK credentials (docs/byok.md): a workspace's own keys count its tokens too. */
      byok?: ByokService;
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
      byok: this.deps.byok?.routing(call.key),
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
    let ir: Omit<IrRequest, 'model'> | undefined;
    const input = { body, beta: call.beta, ir: () => (ir ??= messagesInbound.toIr({ ...body, max_tokens: 1 })) };
    const out = await runAttempts({
      targets: countable,
      cancel: call.cancel,
      // Endpoint health is left alone: a counting failure says nothing sure about generation.
      health: null,
      now: this.deps.now ?? Date.now,
      attempt: async (a) => {
        const c = tokenCounterOf(a.provider)!(input, { provider: a.provider, endpoint: a.endpoint, apiKey: attemptKey(this.deps, a) });
        return c.parse(await sendForText(this.deps.http, c, c.parseError, this.deps.catalog.timeouts(a.provider), call.cancel));
      },
      served: (_a, n) => ({ result: { input_tokens: n }, cost: null }),
      // The request itself is wrong: the next provider would say the same.
      failed: (e) => (e.type === 'invalid_request' ? 'stop' : undefined),
    });
    if (out.ok) return out.result;
    throw attemptsHttpError(out.last, out.lastAttempt, out.attempts, []);
  }
}
