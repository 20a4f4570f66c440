/**
 * POST /embeddings: validate, hand over to the embeddings service, answer the vectors (OpenAI SDK
 * `embeddings.create` compatible, `X-Generation-Id`), or an error in the envelope. GET /embeddings/models is with the
 * other catalog listings (routes/models.ts).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { Cancellation } from '../../providers/http.js';
import { errors } from '../schemas/common.js';
import { EmbeddingsBody, EmbeddingsResponse, type EmbeddingsBodyT } from '../schemas/embeddings.js';
import { wantsMetadata } from './inference.js';
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
        headers: Type.Object({ 'x-gateway-metadata': Type.Optional(Type.String({ description: 'enabled adds gateway_metadata.' })) }),
        body: EmbeddingsBody,
        response: { 200: EmbeddingsResponse, ...errors(400, 401, 402, 403, 404, 408, 413, 429, 500, 502, 503, 524, 529) },
      },
    },
    async (req, reply) => {
      // A client that goes away aborts the upstream request at once.
      const cancel = Cancellation.of(reply.raw);
      const call = { key: req.key, requestId: req.id, wantMetadata: wantsMetadata(req.headers), cancel };
      const prepared = await svc.embeddings.prepare(req.body as ServiceBody, call);
      try {
        const { id, body } = await svc.embeddings.create(prepared, call);
        reply.header('x-generation-id', id);
        return body;
      } finally {
        prepared.release(null); // normally already released by the generation record
      }
    },
  );
}
