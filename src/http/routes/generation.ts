/** GET /generation?id=: the record of one request. Inference keys see their own; management keys see any. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';
import { errors } from '../schemas/common.js';
import type { GenerationRow } from '../../store/types.js';
import type { Services } from '../../services/index.js';

const Query = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

export function generationView(g: GenerationRow) {
  return {
    id: g.id,
    request_id: g.request_id,
    upstream_id: g.upstream_id,
    created_at: g.created_at,
    model: g.model,
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
    total_cost: g.total_cost,
    usage: g.total_cost,
    upstream_inference_cost: g.upstream_inference_cost,
    is_byok: g.is_byok,
    latency: g.latency_ms,
    time_to_first_token: g.ttft_ms,
    generation_time: g.generation_time_ms,
    provider_responses: g.attempts,
    error: g.error,
    preset_id: g.preset_id,
    session_id: g.session_id,
    workspace_id: g.workspace_id,
    api_key_hash: g.key_hash,
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
    async (req) => {
      const g = svc.recorder.peek(req.query.id) ?? (await svc.store.getGeneration(req.query.id));
      // Another key's generation is indistinguishable from a missing one.
      if (!g || (req.key.kind === 'inference' && g.key_hash !== req.key.hash)) throw notFound(`Generation ${req.query.id} not found`);
      return { data: generationView(g) };
    },
  );
}
