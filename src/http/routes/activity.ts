/**
 * GET /activity: the organization's served generations of the last 30 completed UTC days, summed per day, model and
 * endpoint (and workspace with `group_by=workspace`), as the hosted API reports them. Management keys only.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors, StringEnum } from '../schemas/common.js';
import type { Services } from '../../services/index.js';

const Query = Type.Object({
  date: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'One UTC day (YYYY-MM-DD) of the last 30 completed ones.' })),
  api_key_hash: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$', description: "One key's activity (its hash, as the keys API shows it)." })),
  user_id: Type.Optional(Type.String({ minLength: 1, description: 'The activity of the keys an organization member created.' })),
  group_by: Type.Optional(StringEnum(['workspace'] as const, { description: 'Split each row per workspace (and show `workspace_id`).' })),
  workspace_id: Type.Optional(Type.String({ minLength: 1, description: "One workspace's activity (id or slug)." })),
});

const ActivityItem = Type.Object({
  date: Type.String(),
  model: Type.String(),
  model_permaslug: Type.String(),
  endpoint_id: Type.String({ description: 'The endpoint tag.' }),
  provider_name: Type.String(),
  usage: Type.Number({ description: 'USD billed.' }),
  byok_usage_inference: Type.Number(),
  requests: Type.Integer(),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  reasoning_tokens: Type.Integer(),
  workspace_id: Type.Optional(Type.String()),
});

export default async function activityRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.get<{ Querystring: Static<typeof Query> }>(
    '/activity',
    {
      config: { auth: 'management' },
      schema: {
        tags: ['Analytics'],
        summary: 'Activity of the last 30 completed UTC days, per day, model and endpoint (served generations: requests, tokens, USD)',
        querystring: Query,
        response: { 200: Type.Object({ data: Type.Array(ActivityItem) }), ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (req) => ({ data: await svc.activity.report(req.query) }),
  );
}
