/**
 * POST /embeddings: validate, hand over to the embeddings service, answer the vectors (OpenAI SDK
 * `embeddings.create` compatible, `X-Generation-Id`), or an error in the envelope. GET /embeddings/models is with the
 * other catalog listings (routes/models.ts).
 */
import type { FastifyInstance } from 'fastify';
import { errors } from '../schemas/common.js';
import { EmbeddingsBody, EmbeddingsResponse, type EmbeddingsBodyT } from '../schemas/embeddings.js';
import { answerOnce, CachedAnswerHeaders } from './inference.js';
import type { EmbeddingsBody as ServiceBody } from '../../services/embeddings.js';
import type { Services } from '../../services/index.js';

export default async function embeddingRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.post<{ Body: EmbeddingsBodyT }>(
    '/embeddings',
    {
      config: { auth: 'inference' },
      schema: {
        tags: ['Embeddings'],
        summary: 'Create embeddings: vectors for text, token or multimodal inputs (OpenAI SDK `embeddings.create` compatible)',
        headers: CachedAnswerHeaders,
        body: EmbeddingsBody,
        response: { 200: EmbeddingsResponse, ...errors(400, 401, 402, 403, 404, 408, 413, 429, 500, 502, 503, 524, 529) },
      },
    },
    async (req, reply) =>
      answerOnce(
        req,
        reply,
        (call) => svc.embeddings.prepare(req.body as ServiceBody, call),
        (p, call) => svc.embeddings.create(p, call),
        true,
        { tracing: svc.tracing, operation: 'embeddings' },
      ),
  );
}
