/**
 * A chat request's preparation (any inbound API): cross-field checks, the preset, the requested models and their
 * variants, input plugins and content guardrails, the organization's policy, then the route plan. Throws HttpError
 * (4xx) on bad input. Every step that can answer from memory does so without an await (the hot path).
 */
import { estimatePromptTokens, irPromptTokens } from '../../core/chat-shape.js';
import { lazyPromptTokens } from '../../core/lazy-body.js';
import { lazyIr, lazyIrPromptTokens } from './lazy-ir.js';
import { requestParams } from '../../core/params.js';
import { mergePreset, parsePresetModel } from '../../core/presets.js';
import { splitVariant } from '../../core/variants.js';
import { applyDeprecatedRoute, type ProviderPreferences, type ProviderSortBy } from '../../core/provider-prefs.js';
import { planRoute } from '../../core/routing.js';
import { badRequest } from '../../core/errors.js';
import type { WorkspaceRow } from '../../store/types.js';
import type { IrRequest } from '../../core/ir.js';
import { NO_PLUGINS, type AnyPipelineEntry as PipelineEntry, type PluginSettings } from '../../core/plugins.js';
import { screenInput } from '../content-guardrails.js';
import { forgetRaw } from '../../core/raw-json.js';
import { INBOUND, irParams, type InboundApi } from '../codecs.js';
import { checkMessagesBody, messagesFallbackModels } from '../../inbound/messages.js';
import { checkStateless } from '../../inbound/responses.js';
import { resolveRequestedModels } from '../model-resolution.js';
import type { GuardrailService } from '../guardrails.js';
import type { ChatCall, ChatDeps, Prepared } from './types.js';

/** Where a session is pinned (session id → the endpoint that served it last). */
export type Sessions = Map<string, { model: string; tag: string; at: number }>;

type Body = Record<string, unknown>;

/** Applies presets and checks cross-field rules, then plans the route. Throws HttpError (4xx) on bad input. */
export async function prepareChat(deps: ChatDeps, sessions: Sessions, clock: () => number, api: InboundApi, input: Body, call: ChatCall): Promise<Prepared> {
  checkApiBody(api, input);
  const preset = presetOf(input);
  const withPreset = preset.slug ? await applyPreset(deps, api, input, call, preset.slug, preset.model) : null;
  let body = withPreset?.body ?? input;
  checkReasoning(body);
  const peeked = deps.workspaces.peek(call.key.workspace_id);
  const workspace = peeked !== undefined ? peeked : await deps.workspaces.cached(call.key.workspace_id);
  const requestedModels = requestedModelIds(api, body, workspace);
  const { models, provider } = variantsApplied(body, requestedModels);
  // Model ids as clients send them (bare, dated, aliases) → catalog ids (src/services/model-resolution.ts).
  const g = deps.guardrails;
  const orgAliases = g ? (g.peekSettings() ?? (await g.settings())).model_aliases : null;
  const fallback = { enabled: deps.options.unknownModelFallback === true, model: workspace?.default_text_model };
  const resolved = resolveRequestedModels(deps.catalog, models, orgAliases, fallback);
  models.splice(0, models.length, ...resolved.models);
  refuseOtherApiModels(deps, models);

  // Plugins on the input (docs/plugins.md): file inputs and file-parser, middle-out — before the guardrails screen it.
  const plugins = deps.plugins?.settings(body) ?? NO_PLUGINS;
  const steps = deps.plugins?.needsInput(api, body, plugins) ? await deps.plugins.input(api, body, { workspaceId: call.key.workspace_id, models, plugins, maxTokens: maxTokensOf(body) }) : null;
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
  const pipeline: PipelineEntry[] = steps || screened ? [...(steps?.pipeline ?? []), ...(screened?.pipeline ?? [])] : [];
  // The moderation plugin: the text as it would be sent, before any upstream call (403 when flagged).
  if (plugins.moderation && deps.plugins) pipeline.push(await deps.plugins.moderate(api, body));
  // Chat bodies are routed from their own fields (the fast path needs no IR); the other APIs through the IR.
  // A large conversation still as bytes (core/lazy-body.ts) stays so: its IR is built when some attempt reads it.
  const ir: Omit<IrRequest, 'model'> | undefined = api === 'chat' ? undefined : (lazyIrOf(api, body) ?? INBOUND[api].toIr(body));
  if (ir && call.anthropicBeta?.length) ir.anthropic_beta = call.anthropicBeta;
  // ---- organization settings and guardrails (src/services/guardrails.ts) ----------------------------------------
  // A spent budget or a blocked model refuses the request here (403/404); the models left, the endpoint filter and
  // the organization's default sort go to planRoute. The same policy function lists GET /models/user.
  let decided = policy ? g!.decide(call.key, policy, models) : null;
  if (decided instanceof Promise) decided = await decided;
  const ctx: PlanContext = { deps, sessions, clock, api, body, ir, call, workspace, provider, plugins, pipeline, filters, presetId: withPreset?.presetId ?? null, requested: requestedModels.join(', ') };
  const prepared = planned(ctx, decided?.models ?? models, decided);
  // An id that resolved to no model: the 404 names the candidates or the closest ids (docs/agents.md).
  const plan = prepared.plan;
  if (resolved.problem && plan.error?.code === 'model_not_found') plan.error = { ...plan.error, message: resolved.problem.message, suggestions: resolved.problem.suggestions, ambiguous: resolved.problem.ambiguous } as typeof plan.error;
  return prepared;
}

/** The organization policy's decision for a request's models (services/guardrails.ts). */
type Decided = Exclude<Awaited<ReturnType<GuardrailService['decide']>>, null>;

/** What `planned` needs besides the models. */
interface PlanContext {
  deps: ChatDeps;
  sessions: Sessions;
  clock: () => number;
  api: InboundApi;
  body: Body;
  ir: Omit<IrRequest, 'model'> | undefined;
  call: ChatCall;
  workspace: WorkspaceRow | null | undefined;
  provider: ProviderPreferences;
  plugins: PluginSettings;
  pipeline: PipelineEntry[];
  filters: Prepared['filters'];
  presetId: string | null;
  requested: string;
}

/** The route plan and the prepared request (its IR built at once when some attempt translates: a 400 before any attempt). */
function planned(c: PlanContext, models: string[], decided: Decided | null): Prepared {
  const { deps, api, body, call, ir } = c;
  const now = c.clock();
  const maxOut = ir ? ir.max_tokens : ((body.max_completion_tokens ?? body.max_tokens) as number | null | undefined);
  const sessionId = (typeof body.session_id === 'string' ? body.session_id : undefined) ?? call.sessionHeader ?? null;
  const sticky = sessionId ? c.sessions.get(`${call.key.workspace_id}|${sessionId}`) : undefined;
  const promptEstimate = ir ? (lazyIrPromptTokens(ir) ?? irPromptTokens(ir)) : (lazyPromptTokens(body) ?? estimatePromptTokens(body.messages));
  const plan = planRoute({
    now,
    rng: deps.rng ?? Math.random,
    models,
    endpointPolicy: decided?.endpointPolicy,
    catalog: deps.catalog.route,
    hasCredentials: deps.catalog.hasCredentials,
    byok: deps.byok?.routing(call.key),
    health: deps.health.health,
    params: ir ? irParams(ir) : requestParams(body),
    provider: c.provider,
    defaultSort: (c.workspace?.default_provider_sort as ProviderSortBy | null | undefined) ?? decided?.defaultSort ?? null,
    estimatedPromptTokens: promptEstimate,
    maxOutputTokens: typeof maxOut === 'number' ? maxOut : undefined,
    stickyEndpoint: sticky && now - sticky.at < deps.options.sessionTtlMs ? { model: sticky.model, tag: sticky.tag } : undefined,
  });
  const protocols = new Set<'translated'>();
  // A streamed reply screened by content guardrails goes through the IR, where its deltas are redacted as they pass.
  const outputFilters = body.stream === true ? c.filters : null;
  // response-healing on a stream: the text deltas are healed at the end of each part (plugins/healing.ts), in the IR too.
  const outputHealing = body.stream === true && c.plugins.responseHealing ? (deps.plugins?.streamHealing(api, body) ?? null) : null;
  if (outputFilters || outputHealing || plan.attempts.some((a) => !(api === 'chat' && a.provider.protocol === 'openai'))) protocols.add('translated');
  const io = deps.io ? deps.io.capture(c.workspace, call.key.hash, api, body) : null;
  const prepared: Prepared = { api, body, ir, protocols, requested: c.requested, plan, stream: body.stream === true, presetId: c.presetId, sessionId, dropped: new Map(), maxOut: typeof maxOut === 'number' ? maxOut : null, promptEstimate, filters: c.filters, pipeline: c.pipeline, outputFilters, outputHealing, plugins: c.plugins, io };
  if (protocols.size > 0) prepared.ir ??= INBOUND[api].toIr(body);
  return prepared;
}

/** The IR of a Messages, Responses or Gemini body whose conversation is lazy (chat/lazy-ir.ts), or null. */
function lazyIrOf(api: InboundApi, body: Body): Omit<IrRequest, 'model'> | null {
  return api === 'chat' ? null : lazyIr(INBOUND[api], body, api === 'messages' ? 'messages' : api === 'responses' ? 'input' : 'contents');
}

/** The Responses API is stateless here; a Messages body's own cross-field rules. */
function checkApiBody(api: InboundApi, body: Body): void {
  if (api === 'responses') {
    const problem = checkStateless(body);
    if (problem) throw badRequest(problem, { field: body.store === true ? 'store' : 'previous_response_id' });
  }
  if (api === 'messages') {
    const problem = checkMessagesBody(body);
    if (problem) throw badRequest(problem);
  }
}

/** The preset a body names (`preset`, or `@preset/slug` as its model), and the model left once it is taken out. */
function presetOf(body: Body): { slug: string | undefined; model: string | undefined } {
  const fromModel = parsePresetModel(typeof body.model === 'string' ? body.model : undefined);
  return { slug: (typeof body.preset === 'string' ? body.preset : undefined) ?? fromModel.preset, model: fromModel.model };
}

/** The body merged over the workspace's designated preset version; its system prompt where the API puts one. */
async function applyPreset(deps: ChatDeps, api: InboundApi, input: Body, call: ChatCall, slug: string, model: string | undefined): Promise<{ body: Body; presetId: string }> {
  const { preset, version } = await deps.presets.designatedCached(call.key.workspace_id, slug);
  const request = { ...input, model };
  if (request.model === undefined) delete request.model;
  const body = mergePreset(version.config, request);
  // The preset's system prompt: prepended in chat; in the other APIs, used when the request has none.
  if (version.system_prompt) {
    if (api === 'chat' && Array.isArray(body.messages)) body.messages = [{ role: 'system', content: version.system_prompt }, ...(body.messages as unknown[])];
    if (api === 'messages' && body.system === undefined) body.system = version.system_prompt;
    if (api === 'responses' && (body.instructions === undefined || body.instructions === null)) body.instructions = version.system_prompt;
  }
  return { body, presetId: preset.id };
}

function checkReasoning(body: Body): void {
  const reasoning = body.reasoning as { effort?: string | null } | undefined;
  if (body.reasoning_effort != null && reasoning?.effort != null && body.reasoning_effort !== reasoning.effort) {
    throw badRequest(`reasoning_effort ("${body.reasoning_effort}") differs from reasoning.effort ("${reasoning.effort}"); send one or make them equal`, { field: 'reasoning_effort' });
  }
}

/** `model` (or the workspace's default), then `models` (and a Messages body's fallbacks), without repeats. */
function requestedModelIds(api: InboundApi, body: Body, workspace: WorkspaceRow | null | undefined): string[] {
  const requestedModels: string[] = [];
  const first = typeof body.model === 'string' ? body.model : (workspace?.default_text_model ?? undefined);
  if (first) requestedModels.push(first);
  const more = api === 'messages' ? [...messagesFallbackModels(body), ...((body.models as string[] | undefined) ?? [])] : ((body.models as string[] | undefined) ?? []);
  for (const m of more) if (!requestedModels.includes(m)) requestedModels.push(m);
  if (requestedModels.length === 0) throw badRequest('model is required (or models, a preset, or the workspace default_text_model)', { field: 'model' });
  return requestedModels;
}

/** The models without their variants (`:nitro`, `:floor`, `:free`), and the provider preferences the variants imply. */
function variantsApplied(body: Body, requestedModels: string[]): { models: string[]; provider: ProviderPreferences } {
  let provider = applyDeprecatedRoute((body.provider as ProviderPreferences | null | undefined) ?? undefined, body.route as 'fallback' | 'sort' | undefined) ?? {};
  const models: string[] = [];
  for (const id of requestedModels) {
    const { base, variant } = splitVariant(id);
    models.push(base);
    if (variant === 'nitro' && !provider.sort) provider = { ...provider, sort: 'throughput' };
    if (variant === 'floor' && !provider.sort) provider = { ...provider, sort: 'price' };
    if (variant === 'free') provider = { ...provider, max_price: { ...provider.max_price, prompt: 0, completion: 0 } };
  }
  return { models, provider };
}

/** Embeddings, rerank and transcription models have no chat endpoints: say where they are served, not "no endpoints". */
function refuseOtherApiModels(deps: ChatDeps, models: string[]): void {
  const other = deps.catalog.otherApi.get(models[0]);
  if (other && models.every((id) => deps.catalog.otherApi.get(id) === other)) {
    throw badRequest(`${models.join(', ')} ${models.length > 1 ? `are ${other.kind} models` : `is ${other.article} ${other.kind} model`}: use ${other.path}`, { field: 'model', error_type: 'invalid_request' });
  }
}

/** The output limit a body asks for, in any API's field (for middle-out's budget). */
function maxTokensOf(body: Body): number | null {
  const gen = body.generationConfig as { maxOutputTokens?: unknown } | undefined;
  const v = body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens ?? gen?.maxOutputTokens;
  return typeof v === 'number' ? v : null;
}
