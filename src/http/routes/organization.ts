/**
 * Organization members: GET /organization/members (as the spec), plus our extensions for a self-hosted organization
 * without sign-up: POST /organization/members and DELETE /organization/members/{id}.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DeletedResponse, errors, LimitQuery, OffsetQuery, StringEnum } from '../schemas/common.js';
import { memberView } from '../../services/members.js';
import type { Services } from '../../services/index.js';

export const MemberView = Type.Object(
  { id: Type.String(), email: Type.String(), first_name: Type.String(), last_name: Type.String(), role: StringEnum(['org:admin', 'org:member'] as const) },
  { $id: 'OrganizationMember' },
);
const ListQuery = Type.Object({ offset: Type.Optional(Type.Union([OffsetQuery, Type.Null()])), limit: Type.Optional(LimitQuery(50, 100)) });
const AddBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 320 }),
  first_name: Type.Optional(Type.String({ maxLength: 100 })),
  last_name: Type.Optional(Type.String({ maxLength: 100 })),
  role: Type.Optional(StringEnum(['org:admin', 'org:member'] as const)),
});
const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) });

export default async function organizationRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Organization'];
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/organization/members',
    {
      config: { auth: 'management' },
      schema: {
        tags,
        summary: 'List organization members, oldest first (ties by id)',
        querystring: ListQuery,
        response: { 200: Type.Object({ data: Type.Array(Type.Ref('OrganizationMember')), total_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (req) => {
      const page = await svc.members.list(req.query.offset ?? 0, req.query.limit ?? 50);
      return { data: page.rows.map(memberView), total_count: page.total };
    },
  );

  app.post<{ Body: Static<typeof AddBody> }>(
    '/organization/members',
    {
      config: { auth: 'management' },
      schema: { tags, summary: 'Extension: add a member to the organization', body: AddBody, response: { 201: Type.Object({ data: Type.Ref('OrganizationMember') }), ...errors(400, 401, 403, 409, 500) } },
    },
    async (req, reply) => {
      const row = await svc.members.add(req.body);
      reply.code(201);
      return { data: memberView(row) };
    },
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/organization/members/:id',
    {
      config: { auth: 'management' },
      schema: {
        tags,
        summary: 'Extension: remove a member (refused for the last admin and for members who own active keys)',
        params: IdParams,
        response: { 200: DeletedResponse, ...errors(401, 403, 404, 409, 500) },
      },
    },
    async (req) => {
      await svc.members.remove(req.params.id);
      return { deleted: true as const };
    },
  );
}
