/** POST /generation/feedback: structured feedback on a generation, stored per generation. Management keys only. */
import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../core/errors.js';
import { FEEDBACK_CATEGORIES } from '../../store/feedback.js';
import { errors, StringEnum } from '../schemas/common.js';
import type { Services } from '../../services/index.js';

const Body = Type.Object(
  {
    generation_id: Type.String({ minLength: 1, maxLength: 200, description: 'The generation to submit feedback on.' }),
    category: StringEnum(FEEDBACK_CATEGORIES, { description: 'The category of feedback being reported.' }),
    comment: Type.Optional(Type.String({ maxLength: 1000, description: 'An optional free-text comment describing the feedback.' })),
  },
  { additionalProperties: false, description: 'Structured feedback about a specific generation.' },
);

const Reply = Type.Object({ data: Type.Object({ success: Type.Literal(true, { description: 'Whether the feedback was recorded.' }) }) });

export default async function generationFeedbackRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.post<{ Body: Static<typeof Body> }>(
    '/generation/feedback',
    {
      config: { auth: 'management' },
      schema: {
        tags: ['Generations'],
        summary: 'Submit feedback for a generation',
        body: Body,
        response: { 200: Reply, ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (req) => {
      const { generation_id, category, comment } = req.body;
      // A record still in the recorder's batch counts: its row is written with the next flush.
      const known = svc.recorder.peek(generation_id) ?? (await svc.store.getGeneration(generation_id));
      if (!known) throw notFound(`Generation ${generation_id} not found`, { field: 'generation_id' });
      await svc.store.addGenerationFeedback({
        id: randomUUID(),
        generation_id,
        category,
        comment: comment ?? null,
        key_hash: req.key.hash,
        created_at: new Date().toISOString(),
      });
      return { data: { success: true as const } };
    },
  );
}
