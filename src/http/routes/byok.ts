/**
 * BYOK credentials (docs/byok.md): GET/POST /byok, GET/PATCH/DELETE /byok/{id}, management keys only. The raw key is
 * write-only (encrypted at rest, never returned); PATCH with `key` rotates it; DELETE wipes it.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { byokView } from '../../services/byok.js';
import { DeletedResponse, errors, LimitQuery, Nullable, OffsetQuery, Timestamp, Uuid } from '../schemas/common.js';
import type { Services } from '../../services/index.js';

const StringList = (what: string, item = Type.String({ minLength: 1, maxLength: 200 })) => Nullable(Type.Array(item, { maxItems: 100 }), { description: `${what}; null: no restriction.` });
const KeyHashes = Nullable(Type.Array(Type.String({ pattern: '^[a-f0-9]{64}$' }), { minItems: 1, maxItems: 100 }), {
  description: 'Gateway API key hashes (`hash` of GET /keys) that may use this credential; null: every key of its workspace. At least one when given.',
});

export const ByokView = Type.Object(
  {
    id: Uuid,
    provider: Type.String({ description: 'The provider slug (GET /providers) this credential authenticates against.' }),
    workspace_id: Nullable(Uuid, { description: 'Its workspace, or null: usable by every workspace (global).' }),
    name: Nullable(Type.String()),
    label: Type.String({ description: 'Masked snippet of the key (e.g. `sk-...AbCd`).' }),
    disabled: Type.Boolean(),
    is_fallback: Type.Boolean({ description: 'Tried only after the shared endpoints (the operator keys) instead of before them.' }),
    always_use: Type.Boolean({ description: 'Extension: requests never fall back to the operator key of this provider.' }),
    sort_order: Type.Integer({ description: 'Credentials of a provider are tried in ascending sort order.' }),
    allowed_models: StringList('Model ids this credential may be used for'),
    allowed_api_key_hashes: Nullable(Type.Array(Type.String(), { maxItems: 100 })),
    allowed_user_ids: StringList('Member ids whose keys may use this credential'),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'BYOKKey' },
);

const Common = {
  name: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  disabled: Type.Optional(Type.Boolean()),
  is_fallback: Type.Optional(Type.Boolean({ description: 'Use only after the shared endpoints have been tried.' })),
  always_use: Type.Optional(Type.Boolean({ description: 'Extension: never fall back to the operator key of this provider (default false).' })),
  sort_order: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Extension: position among the provider\'s credentials (default: after the last one).' })),
  allowed_models: Type.Optional(StringList('Model ids this credential may be used for')),
  allowed_api_key_hashes: Type.Optional(KeyHashes),
  allowed_user_ids: Type.Optional(StringList('Member ids whose keys may use this credential')),
};

const CreateBody = Type.Object(
  {
    provider: Type.String({ minLength: 1, maxLength: 100, description: 'A provider slug of the catalog (GET /providers).' }),
    key: Type.String({ minLength: 1, maxLength: 20_000, description: 'The raw provider key. Encrypted at rest, never returned.' }),
    workspace_id: Type.Optional(Nullable(Type.String({ minLength: 1 }), { description: 'Workspace id or slug (default: the default workspace); null (extension): every workspace.' })),
    ...Common,
  },
  { additionalProperties: false },
);
const UpdateBody = Type.Object(
  { key: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000, description: 'A new raw key: rotates the credential in place.' })), ...Common },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Uuid });
const ListQuery = Type.Object({
  offset: Type.Optional(OffsetQuery),
  limit: Type.Optional(LimitQuery()),
  workspace_id: Type.Optional(Type.String({ minLength: 1, description: 'Workspace id or slug (default: the default workspace); `global` lists the credentials of every workspace.' })),
  provider: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});

export default async function byokRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['BYOK'];
  const one = Type.Object({ data: Type.Ref('BYOKKey') });

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/byok',
    {
      config: { auth: 'management' },
      schema: { tags, summary: 'List BYOK provider credentials', querystring: ListQuery, response: { 200: Type.Object({ data: Type.Array(Type.Ref('BYOKKey')), total_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) } },
    },
    async (req) => svc.byok.list({ workspace_id: req.query.workspace_id, provider: req.query.provider, offset: req.query.offset ?? 0, limit: req.query.limit ?? 50 }),
  );

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/byok',
    {
      config: { auth: 'management' },
      schema: { tags, summary: 'Create a BYOK provider credential', body: CreateBody, response: { 201: one, ...errors(400, 401, 403, 404, 500, 503) } },
    },
    async (req, reply) => {
      reply.code(201);
      return { data: await svc.byok.create(req.body) };
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/byok/:id',
    { config: { auth: 'management' }, schema: { tags, summary: 'Get a BYOK provider credential', params: IdParams, response: { 200: one, ...errors(400, 401, 403, 404, 500) } } },
    async (req) => ({ data: byokView(await svc.byok.get(req.params.id)) }),
  );

  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof UpdateBody> }>(
    '/byok/:id',
    {
      config: { auth: 'management' },
      schema: { tags, summary: 'Update or rotate a BYOK provider credential', params: IdParams, body: UpdateBody, response: { 200: one, ...errors(400, 401, 403, 404, 500, 503) } },
    },
    async (req) => ({ data: await svc.byok.update(req.params.id, req.body) }),
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/byok/:id',
    { config: { auth: 'management' }, schema: { tags, summary: 'Delete a BYOK provider credential (its key is wiped)', params: IdParams, response: { 200: DeletedResponse, ...errors(400, 401, 403, 404, 500) } } },
    async (req) => {
      await svc.byok.remove(req.params.id);
      return { deleted: true as const };
    },
  );
}
