/**
 * POST /rerank: documents ordered by relevance to a query (the hosted API's shape; Cohere- and Jina-style providers).
 * Validate, hand over to the rerank service, answer the ranked results (`X-Generation-Id`), or an error in the envelope.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { Nullable } from '../schemas/common.js';
import { errors } from '../schemas/common.js';
import { ProviderPreferencesSchema } from '../schemas/inference.js';
import { answerOnce, CachedAnswerHeaders } from './inference.js';
import type { RerankBody as ServiceBody } from '../../services/rerank.js';
import type { Services } from '../../services/index.js';

/** At most this many documents per request (Cohere's recommendation and most servers' limit). */
export const MAX_RERANK_DOCUMENTS = 1000;

const Document = Type.Union(
  [
    Type.String({ minLength: 1 }),
    Type.Object(
      { text: Type.Optional(Type.String({ minLength: 1 })), image: Type.Optional(Type.String({ minLength: 1, description: 'An http(s) URL or a data:image/… URI.' })) },
      { additionalProperties: false, minProperties: 1, description: 'A structured document: text and/or an image (image documents go to providers that take them).' },
    ),
  ],
  { description: 'A document: a non-empty string, or `{text?, image?}` with at least one of them.' },
);

export const RerankBody = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'Rerank model id, e.g. `cohere/rerank-v3.5`.' }),
    query: Type.String({ minLength: 1, description: 'The search query.' }),
    documents: Type.Array(Document, { minItems: 1, maxItems: MAX_RERANK_DOCUMENTS, description: `The documents to rank (1 to ${MAX_RERANK_DOCUMENTS}).` }),
    top_n: Type.Optional(Type.Integer({ minimum: 1, description: 'How many of the most relevant documents to return (default: all).' })),
    provider: Type.Optional(Nullable(ProviderPreferencesSchema)),
  },
  { additionalProperties: false },
);

const RerankResponse = Type.Object(
  {
    id: Type.String(),
    model: Type.String({ description: 'The model that served.' }),
    provider: Type.Optional(Type.String()),
    results: Type.Array(
      Type.Object({
        index: Type.Integer({ description: 'Position of the document in the request.' }),
        relevance_score: Type.Number(),
        document: Type.Object({ text: Type.Optional(Type.String()), image: Type.Optional(Type.String()) }),
      }),
      { description: 'Sorted by relevance, highest first; at most top_n.' },
    ),
    usage: Type.Object(
      {
        search_units: Type.Optional(Type.Integer()),
        total_tokens: Type.Integer(),
        cost: Type.Union([Type.Number(), Type.Null()]),
        is_byok: Type.Boolean(),
        estimated: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: true },
    ),
    gateway_metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

export default async function rerankRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.post<{ Body: Static<typeof RerankBody> }>(
    '/rerank',
    {
      config: { auth: 'inference' },
      schema: {
        tags: ['Rerank'],
        summary: 'Rerank documents by relevance to a query',
        headers: CachedAnswerHeaders,
        body: RerankBody,
        response: { 200: RerankResponse, ...errors(400, 401, 402, 403, 404, 413, 429, 500, 502, 503, 524, 529) },
      },
    },
    async (req, reply) =>
      answerOnce(
        req,
        reply,
        (call) => svc.rerank.prepare(req.body as ServiceBody, call),
        (p, call) => svc.rerank.rerank(p, call),
        true,
        { tracing: svc.tracing, operation: 'rerank' },
      ),
  );
}
