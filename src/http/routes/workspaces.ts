/** Workspaces: GET/POST /workspaces, GET/PATCH/DELETE /workspaces/{id or slug}. Management keys only. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DeletedResponse, errors, LimitQuery, Nullable, OffsetQuery, StringEnum, Timestamp, Uuid } from '../schemas/common.js';
import { PROVIDER_SORTS } from '../schemas/inference.js';
import { workspaceView } from '../../services/workspaces.js';
import type { Services } from '../../services/index.js';

export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  slug: Type.String({ minLength: 1, maxLength: 50, pattern: SLUG_PATTERN }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  default_text_model: Type.Optional(Nullable(Type.String())),
  default_image_model: Type.Optional(Nullable(Type.String())),
  default_provider_sort: Type.Optional(Nullable(StringEnum(PROVIDER_SORTS))),
  io_logging_api_key_ids: Type.Optional(Nullable(Type.Array(Type.Integer(), { description: 'Key IDs for the I/O logging filter; null means all keys.' }))),
  io_logging_sampling_rate: Type.Optional(Type.Number({ minimum: 0.0001, maximum: 1 })),
  is_data_discount_logging_enabled: Type.Optional(Type.Boolean()),
  is_observability_broadcast_enabled: Type.Optional(Type.Boolean()),
  is_observability_io_logging_enabled: Type.Optional(Type.Boolean()),
};

const CreateBody = Type.Object(fields);
const PatchBody = Type.Object({ ...fields, name: Type.Optional(fields.name), slug: Type.Optional(fields.slug) }, { minProperties: 1 });

const WorkspaceView = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    slug: Type.String(),
    description: Nullable(Type.String()),
    default_text_model: Nullable(Type.String()),
    default_image_model: Nullable(Type.String()),
    default_provider_sort: Nullable(Type.String()),
    io_logging_api_key_ids: Nullable(Type.Array(Type.Integer())),
    io_logging_sampling_rate: Type.Number(),
    is_data_discount_logging_enabled: Type.Boolean(),
    is_observability_broadcast_enabled: Type.Boolean(),
    is_observability_io_logging_enabled: Type.Boolean(),
    default_guardrail_id: Type.String({ description: "The workspace's default guardrail (PATCH /guardrails/{id} configures it)." }),
    created_by: Type.String(),
    created_at: Timestamp,
    updated_at: Nullable(Timestamp),
  },
  { $id: 'Workspace' },
);

const WorkspaceMember = Type.Object(
  {
    id: Uuid,
    workspace_id: Uuid,
    user_id: Type.String(),
    role: StringEnum(['admin', 'member'] as const, { description: "The member's role in the organization." }),
    created_at: Timestamp,
  },
  { description: 'A membership of a workspace.' },
);
const UserIds = Type.Object({ user_ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 100, uniqueItems: true }) });

const IdParams = Type.Object({ id: Type.String({ minLength: 1, description: 'Workspace UUID or slug.' }) });
const ListQuery = Type.Object({ offset: Type.Optional(OffsetQuery), limit: Type.Optional(LimitQuery()) });
const One = Type.Object({ data: Type.Ref('Workspace') });

export default async function workspaceRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Workspaces'];
  app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof ListQuery> }>(
    '/workspaces/:id/members',
    {
      config: { auth: 'management' },
      schema: {
        tags,
        summary: "List a workspace's members (oldest first; the default workspace lists every organization member)",
        params: IdParams,
        querystring: ListQuery,
        response: { 200: Type.Object({ data: Type.Array(WorkspaceMember), total_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (req) => {
      const page = await svc.workspaces.members(req.params.id, req.query.offset ?? 0, req.query.limit ?? 50);
      return { data: page.rows, total_count: page.total };
    },
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof UserIds> }>(
    '/workspaces/:id/members/add',
    {
      config: { auth: 'management' },
      schema: {
        tags,
        summary: 'Add organization members to a workspace (with their organization role); members already in it are skipped',
        params: IdParams,
        body: UserIds,
        response: { 200: Type.Object({ added_count: Type.Integer(), data: Type.Array(WorkspaceMember) }), ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (req) => {
      const added = await svc.workspaces.addMembers(req.params.id, req.body.user_ids);
      return { added_count: added.length, data: added };
    },
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof UserIds> }>(
    '/workspaces/:id/members/remove',
    {
      config: { auth: 'management' },
      schema: {
        tags,
        summary: 'Remove members from a workspace (refused for a member who owns active keys in it)',
        params: IdParams,
        body: UserIds,
        response: { 200: Type.Object({ removed_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (req) => ({ removed_count: await svc.workspaces.removeMembers(req.params.id, req.body.user_ids) }),
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/workspaces',
    { config: { auth: 'management' }, schema: { tags, summary: 'List workspaces (oldest first)', querystring: ListQuery, response: { 200: Type.Object({ data: Type.Array(Type.Ref('Workspace')), total_count: Type.Integer() }), ...errors(400, 401, 403, 500) } } },
    async (req) => {
      const page = await svc.workspaces.list(req.query.offset ?? 0, req.query.limit ?? 50);
      return { data: page.rows.map(workspaceView), total_count: page.total };
    },
  );

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/workspaces',
    { config: { auth: 'management' }, schema: { tags, summary: 'Create a workspace', body: CreateBody, response: { 201: One, ...errors(400, 401, 403, 500) } } },
    async (req, reply) => {
      const row = await svc.workspaces.create(req.body, req.key.creator_user_id ?? 'system');
      reply.code(201);
      return { data: workspaceView(row) };
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/workspaces/:id',
    { config: { auth: 'management' }, schema: { tags, summary: 'Get a workspace by id or slug', params: IdParams, response: { 200: One, ...errors(401, 403, 404, 500) } } },
    async (req) => ({ data: workspaceView(await svc.workspaces.get(req.params.id)) }),
  );

  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof PatchBody> }>(
    '/workspaces/:id',
    { config: { auth: 'management' }, schema: { tags, summary: 'Update a workspace', params: IdParams, body: PatchBody, response: { 200: One, ...errors(400, 401, 403, 404, 500) } } },
    async (req) => ({ data: workspaceView(await svc.workspaces.update(req.params.id, req.body)) }),
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/workspaces/:id',
    {
      config: { auth: 'management' },
      schema: { tags, summary: 'Delete a workspace (refused while it has active keys; the default workspace cannot be deleted)', params: IdParams, response: { 200: DeletedResponse, ...errors(400, 401, 403, 404, 500) } },
    },
    async (req) => {
      await svc.workspaces.delete(req.params.id);
      return { deleted: true as const };
    },
  );
}

export { WorkspaceView };
