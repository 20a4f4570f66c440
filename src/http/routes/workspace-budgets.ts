/**
 * Workspace budgets (docs/spend.md): GET /workspaces/{id}/budgets and GET/PUT/DELETE
 * /workspaces/{id}/budgets/{daily|weekly|monthly|lifetime}, as the hosted router's API has them (plus each budget's
 * current `usage`). Management keys only.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DeletedResponse, errors, Nullable, StringEnum, Timestamp, Uuid } from '../schemas/common.js';
import { BUDGET_INTERVALS } from '../../services/spend/budgets.js';
import type { Services } from '../../services/index.js';

const IncludeByok = Type.Boolean({
  description: "Whether BYOK spend counts toward the workspace's budgets: a workspace-wide setting for every interval.",
});

export const WorkspaceBudgetView = Type.Object(
  {
    id: Uuid,
    workspace_id: Uuid,
    limit_usd: Type.Number({ description: 'Spending limit in USD for this interval' }),
    reset_interval: Nullable(StringEnum(['daily', 'weekly', 'monthly'] as const), { description: 'Interval at which spend resets; null: a lifetime budget' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    usage: Type.Number({ description: "USD spent by the workspace's keys in the current window (our extension)" }),
  },
  { $id: 'WorkspaceBudget' },
);

const Params = Type.Object({
  id: Type.String({ minLength: 1, description: 'The workspace ID (UUID) or slug' }),
  interval: StringEnum(BUDGET_INTERVALS, { description: 'Budget reset interval; "lifetime" never resets' }),
});
const IdParams = Type.Object({ id: Type.String({ minLength: 1, description: 'The workspace ID (UUID) or slug' }) });
const PutBody = Type.Object(
  {
    limit_usd: Type.Number({ exclusiveMinimum: 0, description: 'Spending limit in USD. Must be greater than 0.' }),
    include_byok_in_budgets: Type.Optional({ ...IncludeByok, description: `${IncludeByok.description} Omit to leave it unchanged.` }),
  },
  { additionalProperties: false },
);
const One = Type.Object({ data: Type.Ref('WorkspaceBudget'), include_byok_in_budgets: IncludeByok });

export default async function workspaceBudgetRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Workspaces'];
  app.get<{ Params: Static<typeof IdParams> }>(
    '/workspaces/:id/budgets',
    {
      config: { auth: 'management' },
      schema: {
        tags,
        summary: "List a workspace's budgets",
        params: IdParams,
        response: { 200: Type.Object({ data: Type.Array(Type.Ref('WorkspaceBudget')), include_byok_in_budgets: IncludeByok }), ...errors(401, 403, 404, 500) },
      },
    },
    async (req) => svc.budgets.list(req.params.id),
  );

  app.get<{ Params: Static<typeof Params> }>(
    '/workspaces/:id/budgets/:interval',
    { config: { auth: 'management' }, schema: { tags, summary: "A workspace's budget for one interval", params: Params, response: { 200: One, ...errors(400, 401, 403, 404, 500) } } },
    async (req) => svc.budgets.get(req.params.id, req.params.interval),
  );

  app.put<{ Params: Static<typeof Params>; Body: Static<typeof PutBody> }>(
    '/workspaces/:id/budgets/:interval',
    {
      config: { auth: 'management' },
      schema: {
        tags,
        summary: 'Create or update a workspace budget (limits strictly decrease: lifetime > monthly > weekly > daily)',
        params: Params,
        body: PutBody,
        response: { 200: One, ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (req) => svc.budgets.put(req.params.id, req.params.interval, req.body),
  );

  app.delete<{ Params: Static<typeof Params> }>(
    '/workspaces/:id/budgets/:interval',
    { config: { auth: 'management' }, schema: { tags, summary: 'Delete a workspace budget', params: Params, response: { 200: DeletedResponse, ...errors(400, 401, 403, 404, 500) } } },
    async (req) => {
      await svc.budgets.delete(req.params.id, req.params.interval);
      return { deleted: true as const };
    },
  );
}
