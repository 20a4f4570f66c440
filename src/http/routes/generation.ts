/** GET /generation?id=: the record of one request. Inference keys see their own; management keys see any. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../schemas/common.js';
import type { GenerationRow } from '../../store/types.js';
import type { Services } from '../../services/index.js';

const Query = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

/**
 * A generation record in the hosted API's shape (every field its SDK requires), plus the gateway's own. `total_cost`
 * and `usage` are numbers there: 0 when nothing was billed (a failed or cancelled request) — and for an endpoint
 * whose price is unknown, 0 with `pricing: "unknown"` and `upstream_inference_cost: null`, so it is never silent.
 * Fields about what the gateway does not record or do (app attribution, referer, user agent, media counts, server
 * tools, moderation) are null.
 */
export function generationView(g: GenerationRow) {
  const unpriced = g.total_cost === null && g.status === 200 && !g.cancelled;
  return {
    id: g.id,
    request_id: g.request_id,
    upstream_id: g.upstream_id,
    created_at: g.created_at,
    model: g.model ?? g.requested_model ?? '',
    requested_model: g.requested_model,
    provider_name: g.provider_name,
    endpoint_tag: g.endpoint_tag,
    api_type: g.api_type,
    streamed: g.streamed,
    cancelled: g.cancelled,
    status: g.status,
    finish_reason: g.finish_reason,
    native_finish_reason: g.native_finish_reason,
    tokens_prompt: g.tokens_prompt,
    tokens_completion: g.tokens_completion,
    native_tokens_prompt: g.tokens_prompt,
    native_tokens_completion: g.tokens_completion,
    native_tokens_reasoning: g.native_tokens_reasoning,
    native_tokens_cached: g.native_tokens_cached,
    native_tokens_cache_write: g.native_tokens_cache_write,
    total_cost: g.total_cost ?? 0,
    usage: g.total_cost ?? 0,
    upstream_inference_cost: g.upstream_inference_cost,
    ...(unpriced ? { pricing: 'unknown' as const } : {}),
    is_byok: g.is_byok,
    latency: g.latency_ms,
    time_to_first_token: g.ttft_ms,
    generation_time: g.generation_time_ms,
    provider_responses: g.attempts,
    pipeline: g.pipeline ?? null,
    error: g.error,
    preset_id: g.preset_id,
    session_id: g.session_id,
    workspace_id: g.workspace_id,
    api_key_hash: g.key_hash,
    data_region: 'global' as const,
    origin: '',
    router: null,
    service_tier: null,
    app_id: null,
    external_user: null,
    http_referer: null,
    user_agent: null,
    cache_discount: null,
    moderation_latency: null,
    native_tokens_completion_images: null,
    num_media_prompt: null,
    num_input_audio_prompt: null,
    num_media_completion: null,
    num_search_results: null,
    num_fetches: null,
    web_search_engine: null,
  };
}

export default async function generationRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.get<{ Querystring: Static<typeof Query> }>(
    '/generation',
    {
      config: { auth: 'any' },
      schema: {
        tags: ['Generations'],
        summary: 'Get the record of a generation (tokens, cost, latency, attempts)',
        querystring: Query,
        response: { 200: Type.Object({ data: Type.Object({}, { additionalProperties: true }) }), ...errors(400, 401, 404, 500) },
      },
    },
    async (req) => ({ data: generationView(await svc.generations.get(req.query.id, req.key)) }),
  );
}
