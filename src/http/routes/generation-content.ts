/**
 * GET /generation/content?id=: the logged input, output and error of a generation (I/O logging, docs/observability.md),
 * in the hosted API's shape (`tool_calls` is our extension). 404 when its content was not logged. Inference keys see
 * their own generations' content; management keys any.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors, Nullable } from '../schemas/common.js';
import type { Services } from '../../services/index.js';

/** The route's full path (the API prefix included), as `GET /generations` links to it. */
export const CONTENT_PATH = '/api/v1/generation/content';

const Query = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200, description: 'The generation ID' }) }, { additionalProperties: false });

const ErrorAttempt = Type.Object(
  {
    code: Type.Integer({ description: 'HTTP status returned by this attempt' }),
    message: Type.String({ description: 'Error message returned by this attempt' }),
    provider_name: Nullable(Type.String({ description: 'Provider that served this attempt, when known' })),
    raw: Nullable(Type.String({ description: 'Raw error body returned by the provider, when stored' })),
  },
  { description: 'A single failed upstream attempt recorded for the generation' },
);

export const GenerationContentData = Type.Object(
  {
    input: Type.Union([Type.Object({ prompt: Type.String() }), Type.Object({ messages: Type.Array(Type.Unknown()) })], {
      description: 'The input to the generation — either a prompt string or an array of messages',
    }),
    output: Type.Object(
      {
        completion: Nullable(Type.String({ description: 'The completion output' })),
        reasoning: Nullable(Type.String({ description: 'Reasoning/thinking output, if any' })),
        tool_calls: Nullable(
          Type.Array(Type.Object({ id: Nullable(Type.String()), name: Type.String(), arguments: Type.String({ description: 'JSON text, as the model wrote it' }) })),
          { description: 'Tool calls the model made (gateway extension)' },
        ),
      },
      { description: 'The output from the generation' },
    ),
    error: Nullable(
      Type.Object({
        status: Nullable(Type.Integer({ description: 'HTTP status returned to the client' })),
        message: Nullable(Type.String({ description: 'Error message returned to the client' })),
        provider_name: Nullable(Type.String({ description: 'Provider whose error was returned to the client, when known' })),
        raw: Nullable(Type.String({ description: 'Raw error body behind the returned error, when stored' })),
        previous_errors: Type.Array(ErrorAttempt, { description: 'Every upstream attempt that failed before the returned error, in attempt order' }),
      }),
      { description: 'The stored failure for this generation, or null when it succeeded' },
    ),
  },
  { description: 'Stored prompt and completion content, plus the failure error when one was stored' },
);

export default async function generationContentRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.get<{ Querystring: { id: string } }>(
    '/generation/content',
    {
      config: { auth: 'any' },
      schema: {
        tags: ['Generations'],
        summary: 'Get stored prompt, completion, and error content for a generation',
        querystring: Query,
        response: { 200: Type.Object({ data: GenerationContentData }), ...errors(400, 401, 404, 500) },
      },
    },
    async (req) => ({ data: await svc.io.content(req.query.id, req.key) }),
  );
}
