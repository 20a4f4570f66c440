/**
 * Guardrails (as the reference): GET/POST /guardrails, GET/PATCH/DELETE /guardrails/{id},
 * GET/POST /guardrails/{id}/assignments/{keys|members}, POST …/{keys|members}/remove,
 * GET /guardrails/assignments/{keys|members}. Management keys only.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DeletedResponse, errors, LimitQuery, Nullable, OffsetQuery, StringEnum, Timestamp } from '../schemas/common.js';
import { RateLimitSchema, rateLimitSetting } from '../schemas/rate-limit.js';
import { guardrailView } from '../../services/guardrails.js';
import type { Services } from '../../services/index.js';

const Interval = Nullable(StringEnum(['daily', 'weekly', 'monthly'] as const), { description: 'Budget reset (midnight UTC; weeks Monday–Sunday); null = lifetime budget.' });
const NullableBool = (description: string) => Type.Optional(Nullable(Type.Boolean(), { description }));
const List = (description: string) => Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 1000 }), { description }));
const Action = StringEnum(['redact', 'block', 'flag'] as const, { description: 'redact: replace each match by the label; block: refuse the request (403); flag: only report it.' });
const Slug = StringEnum(['email', 'phone', 'ssn', 'credit-card', 'ip-address', 'person-name', 'address', 'regex-prompt-injection'] as const, { description: 'The builtin filter' });
const ScanScope = StringEnum(['user_only', 'all_messages'] as const, { description: 'Which message roles regex-prompt-injection scans (default all_messages); ignored by the other builtins.' });
const ContentFilterEntry = Type.Object(
  {
    pattern: Type.String({ minLength: 1, description: 'A JavaScript regular expression (flag g), at most 100,000 characters. Lookaround, backreferences and nested quantifiers are refused (400 invalid_regex_pattern); run on a linear-time engine (RE2).' }),
    action: Action,
    label: Type.Optional(Nullable(Type.String({ maxLength: 100 }), { description: 'Redaction placeholder and name in blocks; [REDACTED] when null.' })),
  },
  { additionalProperties: false, description: 'A custom regex content filter' },
);
const BuiltinInput = Type.Object(
  {
    slug: Slug,
    action: Action,
    label: Type.Optional(Type.String({ maxLength: 100, deprecated: true, description: 'Deprecated: labels are system-assigned; accepted and ignored.' })),
    scan_scope: Type.Optional(ScanScope),
  },
  { additionalProperties: false, description: 'A builtin content filter' },
);
const BuiltinView = Type.Object({ slug: Slug, action: Action, label: Type.String({ description: 'System-assigned redaction placeholder, e.g. [EMAIL].' }), scan_scope: Type.Optional(ScanScope) });
const RateLimit = RateLimitSchema(
  "Extension (the reference's guardrail has no rate limit): at most `requests` requests per `interval` and/or `tokens_per_minute` tokens per clock minute, counted like the guardrail's budget — per key for a key-assigned guardrail, per member (all the member's keys) for a member-assigned one, shared by the whole workspace for its default guardrail. Checked with the key's own rate limit, the strictest wins; over it, 429 naming the guardrail with Retry-After and X-RateLimit-*. null removes it.",
);
const FilterList = <T extends TSchema>(item: T, description: string) => Type.Optional(Nullable(Type.Array(item, { maxItems: 100 }), { description }));

const fields = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
  limit_usd: Type.Optional(Nullable(Type.Number({ minimum: 0 }), { description: 'Budget in USD over `reset_interval`; requests are refused (403) once it is spent.' })),
  reset_interval: Type.Optional(Interval),
  include_byok_in_budgets: Type.Optional(Type.Boolean()),
  allowed_models: List('Model ids or canonical slugs (stored as canonical slugs); null = every model.'),
  ignored_models: List('Model ids or canonical slugs never routed to.'),
  allowed_providers: List('Provider slugs (or endpoint tags); null = every provider.'),
  ignored_providers: List('Provider slugs (or endpoint tags) never routed to.'),
  enforce_zdr: NullableBool('Deprecated: fills every enforce_zdr_<vendor> the body leaves unset.'),
  enforce_zdr_anthropic: NullableBool('Only zero-data-retention endpoints for anthropic/* models.'),
  enforce_zdr_openai: NullableBool('Only zero-data-retention endpoints for openai/* models.'),
  enforce_zdr_google: NullableBool('Only zero-data-retention endpoints for google/* models.'),
  enforce_zdr_xai: NullableBool('Only zero-data-retention endpoints for x-ai/* models.'),
  enforce_zdr_other: NullableBool('Only zero-data-retention endpoints for every other model.'),
  enable_free_model_publication: NullableBool('Accepted and stored; the catalog has no publication flag to enforce it on.'),
  enable_free_model_training: NullableBool('false = no free endpoint that trains on prompts.'),
  enable_paid_model_training: NullableBool('false = no paid endpoint that trains on prompts.'),
  content_filters: FilterList(ContentFilterEntry, 'Custom regex filters applied to request texts (and replies); null removes them.'),
  content_filter_builtins: FilterList(BuiltinInput, 'Builtin filters (PII detectors, prompt injection); null removes them.'),
  rate_limit: Type.Optional(RateLimit),
};

const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  workspace_id: Type.Optional(Type.String({ minLength: 1, description: 'Workspace id or slug; the default workspace when omitted. Places the guardrail; it applies only once assigned.' })),
  ...fields,
});
const PatchBody = Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), ...fields }, { minProperties: 1 });

const GuardrailView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    workspace_id: Nullable(Type.String()),
    limit_usd: Nullable(Type.Number()),
    reset_interval: Nullable(Type.String()),
    include_byok_in_budgets: Type.Boolean(),
    allowed_models: Nullable(Type.Array(Type.String())),
    ignored_models: Nullable(Type.Array(Type.String())),
    allowed_providers: Nullable(Type.Array(Type.String())),
    ignored_providers: Nullable(Type.Array(Type.String())),
    enforce_zdr: Nullable(Type.Boolean()),
    enforce_zdr_anthropic: Type.Boolean(),
    enforce_zdr_openai: Type.Boolean(),
    enforce_zdr_google: Type.Boolean(),
    enforce_zdr_xai: Type.Boolean(),
    enforce_zdr_other: Type.Boolean(),
    enable_free_model_publication: Nullable(Type.Boolean()),
    enable_free_model_training: Nullable(Type.Boolean()),
    enable_paid_model_training: Nullable(Type.Boolean()),
    content_filters: Nullable(Type.Array(ContentFilterEntry)),
    content_filter_builtins: Nullable(Type.Array(BuiltinView)),
    rate_limit: RateLimit,
    is_workspace_default: Type.Boolean({ description: "Extension: whether this is its workspace's default guardrail." }),
    created_at: Timestamp,
    updated_at: Nullable(Timestamp),
  },
  { description: 'A guardrail' },
);
const One = Type.Object({ data: GuardrailView });

const KeyAssignment = Type.Object({
  id: Type.String(),
  key_hash: Type.String(),
  guardrail_id: Type.String(),
  key_name: Type.String(),
  key_label: Type.String(),
  assigned_by: Nullable(Type.String()),
  created_at: Timestamp,
});
const MemberAssignment = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  organization_id: Type.String(),
  guardrail_id: Type.String(),
  assigned_by: Nullable(Type.String()),
  created_at: Timestamp,
});

const IdParams = Type.Object({ id: Type.String({ minLength: 1, description: 'Guardrail id.' }) });
const PageQuery = Type.Object({ offset: Type.Optional(Type.Union([OffsetQuery, Type.Null()])), limit: Type.Optional(LimitQuery(50, 100)) });
const ListQuery = Type.Object({ ...PageQuery.properties, workspace_id: Type.Optional(Type.String({ minLength: 1, description: 'Workspace id or slug; the default workspace when omitted.' })) });
const Hashes = Type.Object({ key_hashes: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 1000 }) });
const Members = Type.Object({ member_user_ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 1000 }) });

type PageQ = Static<typeof PageQuery>;

export default async function guardrailRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Guardrails'];
  const g = svc.guardrails;
  const auth = { auth: 'management' as const };
  const page = (q: PageQ) => ({ offset: q.offset ?? 0, limit: q.limit ?? 50 });

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/guardrails',
    {
      config: auth,
      schema: { tags, summary: "List a workspace's guardrails, oldest first", querystring: ListQuery, response: { 200: Type.Object({ data: Type.Array(GuardrailView), total_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) } },
    },
    async (req) => {
      const { offset, limit } = page(req.query);
      const p = await g.list(req.query.workspace_id, offset, limit);
      return { data: p.rows.map(guardrailView), total_count: p.total };
    },
  );

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/guardrails',
    {
      config: auth,
      schema: { tags, summary: 'Create a guardrail (it enforces nothing until assigned to keys or members)', body: CreateBody, response: { 201: One, ...errors(400, 401, 403, 404, 500) } },
    },
    async (req, reply) => {
      const row = await g.create({ ...req.body, rate_limit: rateLimitSetting(req.body.rate_limit) });
      reply.code(201);
      return { data: guardrailView(row) };
    },
  );

  // The literal `assignments` segment is registered before `:id`, so these never read as a guardrail id.
  app.get<{ Querystring: PageQ }>(
    '/guardrails/assignments/keys',
    { config: auth, schema: { tags, summary: 'List every key assignment, oldest first', querystring: PageQuery, response: { 200: Type.Object({ data: Type.Array(KeyAssignment), total_count: Type.Integer() }), ...errors(400, 401, 403, 500) } } },
    async (req) => g.keyAssignments(null, page(req.query).offset, page(req.query).limit),
  );

  app.get<{ Querystring: PageQ }>(
    '/guardrails/assignments/members',
    { config: auth, schema: { tags, summary: 'List every member assignment, oldest first', querystring: PageQuery, response: { 200: Type.Object({ data: Type.Array(MemberAssignment), total_count: Type.Integer() }), ...errors(400, 401, 403, 500) } } },
    async (req) => g.memberAssignments(null, page(req.query).offset, page(req.query).limit),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/guardrails/:id',
    { config: auth, schema: { tags, summary: 'Get a guardrail (404 for a workspace default guardrail not configured yet)', params: IdParams, response: { 200: One, ...errors(401, 403, 404, 500) } } },
    async (req) => ({ data: guardrailView(await g.get(req.params.id)) }),
  );

  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof PatchBody> }>(
    '/guardrails/:id',
    {
      config: auth,
      schema: {
        tags,
        summary: "Update a guardrail (lists are replaced); the first PATCH of a workspace's default guardrail configures it (its name cannot change)",
        params: IdParams,
        body: PatchBody,
        response: { 200: One, ...errors(400, 401, 403, 404, 500) },
      },
    },
    async (req) => ({ data: guardrailView(await g.update(req.params.id, { ...req.body, rate_limit: rateLimitSetting(req.body.rate_limit) })) }),
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/guardrails/:id',
    { config: auth, schema: { tags, summary: 'Delete a guardrail and its assignments', params: IdParams, response: { 200: DeletedResponse, ...errors(401, 403, 404, 500) } } },
    async (req) => {
      await g.delete(req.params.id);
      return { deleted: true as const };
    },
  );

  app.get<{ Params: Static<typeof IdParams>; Querystring: PageQ }>(
    '/guardrails/:id/assignments/keys',
    { config: auth, schema: { tags, summary: "List a guardrail's key assignments", params: IdParams, querystring: PageQuery, response: { 200: Type.Object({ data: Type.Array(KeyAssignment), total_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) } } },
    async (req) => g.keyAssignments(req.params.id, page(req.query).offset, page(req.query).limit),
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof Hashes> }>(
    '/guardrails/:id/assignments/keys',
    {
      config: auth,
      schema: { tags, summary: 'Assign keys to a guardrail (replaces their earlier assignment)', params: IdParams, body: Hashes, response: { 200: Type.Object({ assigned_count: Type.Integer() }), ...errors(400, 401, 403, 404, 409, 500) } },
    },
    async (req) => ({ assigned_count: await g.assignKeys(req.params.id, req.body.key_hashes, req.key.creator_user_id) }),
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof Hashes> }>(
    '/guardrails/:id/assignments/keys/remove',
    { config: auth, schema: { tags, summary: 'Unassign keys from a guardrail', params: IdParams, body: Hashes, response: { 200: Type.Object({ unassigned_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) } } },
    async (req) => ({ unassigned_count: await g.unassignKeys(req.params.id, req.body.key_hashes) }),
  );

  app.get<{ Params: Static<typeof IdParams>; Querystring: PageQ }>(
    '/guardrails/:id/assignments/members',
    { config: auth, schema: { tags, summary: "List a guardrail's member assignments", params: IdParams, querystring: PageQuery, response: { 200: Type.Object({ data: Type.Array(MemberAssignment), total_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) } } },
    async (req) => g.memberAssignments(req.params.id, page(req.query).offset, page(req.query).limit),
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof Members> }>(
    '/guardrails/:id/assignments/members',
    {
      config: auth,
      schema: { tags, summary: "Assign members to a guardrail (replaces their earlier assignment; their keys inherit it)", params: IdParams, body: Members, response: { 200: Type.Object({ assigned_count: Type.Integer() }), ...errors(400, 401, 403, 404, 409, 500) } },
    },
    async (req) => ({ assigned_count: await g.assignMembers(req.params.id, req.body.member_user_ids, req.key.creator_user_id) }),
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof Members> }>(
    '/guardrails/:id/assignments/members/remove',
    { config: auth, schema: { tags, summary: 'Unassign members from a guardrail', params: IdParams, body: Members, response: { 200: Type.Object({ unassigned_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) } } },
    async (req) => ({ unassigned_count: await g.unassignMembers(req.params.id, req.body.member_user_ids) }),
  );
}
