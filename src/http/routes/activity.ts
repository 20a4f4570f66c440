/**
 * GET /activity: the organization's served generations of the last 30 completed UTC days, summed per day, model and
 * endpoint (and workspace with `group_by=workspace`), as the hosted API reports them. Management keys only.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../core/errors.js';
import { errors, StringEnum } from '../schemas/common.js';
import type { Services } from '../../services/index.js';

const DAY_MS = 24 * 3600_000;
const WINDOW_DAYS = 30;

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
    async (req) => {
      const q = req.query;
      const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
      let from = today - WINDOW_DAYS * DAY_MS;
      let to = today;
      if (q.date !== undefined) {
        const day = Date.parse(`${q.date}T00:00:00.000Z`);
        if (!Number.isFinite(day) || new Date(day).toISOString().slice(0, 10) !== q.date || day < from || day >= to) {
          throw badRequest(`date must be one of the last ${WINDOW_DAYS} completed UTC days (YYYY-MM-DD), from ${iso(from)} to ${iso(to - DAY_MS)}`, { field: 'date' });
        }
        [from, to] = [day, day + DAY_MS];
      }
      let keyHashes: string[] | null = q.api_key_hash ? [q.api_key_hash] : null;
      if (q.user_id !== undefined) {
        if (!(await svc.store.getMember(q.user_id))) throw badRequest(`user_id ${q.user_id} is not a member of the organization`, { field: 'user_id' });
        const theirs = await svc.store.listKeyHashes({ creator_user_id: q.user_id });
        keyHashes = keyHashes ? keyHashes.filter((h) => theirs.includes(h)) : theirs;
      }
      const workspaceId = q.workspace_id !== undefined ? (await svc.workspaces.get(q.workspace_id)).id : null;
      const rows = await svc.store.activity({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), keyHashes, workspaceId, byWorkspace: q.group_by === 'workspace' });
      const models = svc.catalog.route.models;
      const providers = svc.catalog.route.providers;
      return {
        data: rows.map(({ endpoint_tag, provider_name, ...r }) => ({
          ...r,
          model_permaslug: models.get(r.model)?.canonical_slug ?? r.model,
          endpoint_id: endpoint_tag,
          provider_name: providers.get(provider_name)?.name ?? provider_name,
        })),
      };
    },
  );
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
