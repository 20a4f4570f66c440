/**
 * What a chat request records and shows: the generation record, the cost and ids added to an answer, and the routing
 * metadata (`gateway_metadata`, when the client asks for it).
 */
import { computeCost } from '../../core/pricing.js';
import { isoTime } from '../../core/time.js';
import { unpricedCostDetails, type AnswerMeta } from '../../core/adapters.js';
import type { AnyPipelineEntry as PipelineEntry } from '../../core/plugins.js';
import type { GenerationRow } from '../../store/types.js';
import type { AttemptLog } from '../attempts/errors.js';
import type { ChatCall, Outcome, Prepared } from './types.js';

export function routingMetadata(p: Prepared, o: Outcome, attempts: AttemptLog[]): Record<string, unknown> {
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

/** The generation record of a request (`end`: when it ended). */
export function generationRow(p: Prepared, call: ChatCall, id: string, o: Outcome, attempts: AttemptLog[], cost: number | null, end: number): GenerationRow {
  const u = o.usage;
  return {
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
    pipeline: recordedPipeline(p.pipeline, o.outputPipeline),
    error: o.error ? { status: o.error.status, message: o.estimated ? `${o.error.message} (usage estimated: output counted as relayed, prompt estimated)` : o.error.message } : null,
    preset_id: p.presetId,
    session_id: p.sessionId,
    created_at: isoTime(end),
  };
}

/** What the client sees added to an answer: ids, serving model, cost and (when asked) routing metadata. */
export function answerMeta(p: Prepared, o: Outcome, attempts: AttemptLog[], id: string, created: number, call: ChatCall, withCost: boolean): AnswerMeta {
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
  if (withCost && call.wantMetadata) meta.gateway_metadata = routingMetadata(p, o, attempts);
  return meta;
}

/** The meta of an error event when no attempt served (only keep-alive comments were sent): no cost, the last attempt's model. */
export function unservedMeta(p: Prepared, o: Outcome, attempts: AttemptLog[], id: string, created: number, call: ChatCall, last: { model: string; provider: { name: string } } | null): AnswerMeta {
  const meta: AnswerMeta = { id, model: last?.model ?? p.requested, provider: last?.provider.name ?? '', created, cost: null, cost_details: unpricedCostDetails() };
  if (call.wantMetadata) meta.gateway_metadata = routingMetadata(p, o, attempts);
  return meta;
}

/** `gateway_metadata.pipeline` when something acted (content guardrails on the input and the output). */
function pipelineField(pipeline: PipelineEntry[]): { pipeline?: PipelineEntry[] } {
  return pipeline.length > 0 ? { pipeline } : {};
}

/** Adds a pipeline entry after the reply was rendered: to the request's list and to the body's gateway_metadata. */
export function withPipelineEntry(p: Prepared, body: Record<string, unknown>, entry: PipelineEntry): void {
  p.pipeline = [...(p.pipeline ?? []), entry];
  const meta = body.gateway_metadata as Record<string, unknown> | undefined;
  if (meta && typeof meta === 'object') meta.pipeline = p.pipeline;
}

/** The input's and the output's pipeline entries as the record keeps them (null: none; no array made for nothing). */
function recordedPipeline(input: PipelineEntry[] | undefined, output: PipelineEntry[] | undefined): Array<Record<string, unknown>> | null {
  if (!input?.length && !output?.length) return null;
  return [...(input ?? []), ...(output ?? [])] as unknown as Array<Record<string, unknown>>;
}
