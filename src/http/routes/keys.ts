/** API keys: GET/POST /keys, GET/PATCH/DELETE /keys/{hash}, GET /key. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DeletedResponse, errors, Nullable, StringEnum, Timestamp, Uuid } from '../schemas/common.js';
import { KeyService } from '../../services/keys.js';
import { RateLimitSchema, rateLimitSetting } from '../schemas/rate-limit.js';
import type { Services } from '../../services/index.js';

const LimitReset = Nullable(StringEnum(['daily', 'weekly', 'monthly'] as const), { description: 'Reset period of the limit (midnight UTC; weeks Monday–Sunday); null never resets.' });
const RateLimit = RateLimitSchema(
  'Extension: at most `requests` requests per `interval` with this key (every authenticated request it is admitted for counts; a refused one does not) and/or at most `tokens_per_minute` tokens per minute; over a limit, 429 with Retry-After and X-RateLimit-*; 503 while the shared counters (Redis) cannot be reached, unless GATEWAY_SPEND_REDIS_DOWN=local; null for none.',
);
const Limit = Nullable(Type.Number({ minimum: 0 }), { description: 'Spending limit in USD; null for none.' });

const KeyView = Type.Object(
  {
    hash: Type.String(),
    id: Type.Integer({ description: "The key's numeric id, as a workspace's `io_logging_api_key_ids` lists it." }),
    name: Type.String(),
    label: Type.String(),
    disabled: Type.Boolean(),
    limit: Nullable(Type.Number()),
    limit_remaining: Nullable(Type.Number()),
    limit_reset: Nullable(Type.String()),
    include_byok_in_limit: Type.Boolean(),
    usage: Type.Number(),
    usage_daily: Type.Number(),
    usage_weekly: Type.Number(),
    usage_monthly: Type.Number(),
    byok_usage: Type.Number(),
    byok_usage_daily: Type.Number(),
    byok_usage_weekly: Type.Number(),
    byok_usage_monthly: Type.Number(),
    created_at: Timestamp,
    updated_at: Nullable(Timestamp),
    expires_at: Nullable(Timestamp),
    creator_user_id: Nullable(Type.String()),
    external_user: Type.Null({ description: "The hosted API's end-user id of a key; always null here." }),
    workspace_id: Uuid,
    is_management_key: Type.Boolean({ description: 'Extension: whether this is a management key.' }),
    rate_limit: RateLimit,
  },
  { $id: 'ApiKey' },
);

const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  limit: Type.Optional(Limit),
  limit_reset: Type.Optional(LimitReset),
  include_byok_in_limit: Type.Optional(Type.Boolean()),
  expires_at: Type.Optional(Nullable(Type.String({ format: 'date-time', pattern: '(Z|[+-]00:00)$', description: 'UTC only (ending in Z or +00:00).' }))),
  workspace_id: Type.Optional(Type.String({ minLength: 1, description: 'Workspace id or slug; the default workspace when omitted.' })),
  creator_user_id: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
  management: Type.Optional(Type.Boolean({ description: 'Extension: create a management key instead of an inference key.' })),
  rate_limit: Type.Optional(RateLimit),
});

const PatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    disabled: Type.Optional(Type.Boolean()),
    limit: Type.Optional(Limit),
    limit_reset: Type.Optional(LimitReset),
    include_byok_in_limit: Type.Optional(Type.Boolean()),
    rate_limit: Type.Optional(RateLimit),
    expires_at: Type.Optional(
      Nullable(Type.String({ format: 'date-time', pattern: '(Z|[+-]00:00)$', description: 'Extension (the hosted API cannot change an expiry): a new expiry, UTC only and in the future; null: never expires.' })),
    ),
  },
  { minProperties: 1 },
);

/**
 * The key's hash: hex SHA-256 (any case). Anything else names no key: a 404 like any unknown hash, as the spec lists
 * for these operations (401, 404, 429, 500) — not a 400.
 */
const HashParams = Type.Object({ hash: Type.String({ minLength: 1, maxLength: 200, description: 'Hex SHA-256 of the key (as listed in `hash`).' }) });
const hashOf = (p: { hash: string }) => p.hash.toLowerCase();

const ListQuery = Type.Object({
  include_disabled: Type.Optional(Type.Boolean({ default: false })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  workspace_id: Type.Optional(Type.String({ minLength: 1, description: 'Workspace id or slug; the default workspace when omitted.' })),
});

const PAGE = 100;

export default async function keyRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const withUsage = async (rows: Awaited<ReturnType<KeyService['list']>>) => {
    const usage = await svc.keys.usage(rows);
    return Promise.all(
      rows.map(async (r) => {
        const view = KeyService.view(r, usage.get(r.hash));
        // What is left counts spend not yet written and video holds too (the usage fields are the written records).
        if (r.limit !== null) view.limit_remaining = await svc.guardrails.limitRemaining(r);
        return view;
      }),
    );
  };

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/keys',
    {
      config: { auth: 'management' },
      schema: { tags: ['API keys'], summary: 'List API keys of a workspace (100 per page)', querystring: ListQuery, response: { 200: Type.Object({ data: Type.Array(Type.Ref('ApiKey')) }), ...errors(400, 401, 403, 404, 429, 500) } },
    },
    async (req) => {
      const ws = await svc.workspaces.resolve(req.query.workspace_id);
      const rows = await svc.keys.list({ workspace_id: ws.id, include_disabled: req.query.include_disabled ?? false, offset: req.query.offset ?? 0, limit: PAGE });
      return { data: await withUsage(rows) };
    },
  );

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/keys',
    {
      config: { auth: 'management' },
      schema: { tags: ['API keys'], summary: 'Create an API key; the secret is returned once', body: CreateBody, response: { 201: Type.Object({ data: Type.Ref('ApiKey'), key: Type.String() }), ...errors(400, 401, 403, 404, 429, 500) } },
    },
    async (req, reply) => {
      const b = req.body;
      const ws = await svc.workspaces.resolve(b.workspace_id);
      const creator = await svc.workspaces.keyOwner(ws, b.creator_user_id, req.key.creator_user_id);
      const { row, secret } = await svc.keys.create({
        name: b.name,
        kind: b.management ? 'management' : 'inference',
        limit: b.limit,
        limit_reset: b.limit_reset,
        include_byok_in_limit: b.include_byok_in_limit,
        expires_at: b.expires_at ? new Date(b.expires_at).toISOString() : null,
        workspace_id: ws.id,
        creator_user_id: creator,
        rate_limit: rateLimitSetting(b.rate_limit),
      });
      reply.code(201);
      return { data: KeyService.view(row, undefined), key: secret };
    },
  );

  app.get<{ Params: Static<typeof HashParams> }>(
    '/keys/:hash',
    {
      config: { auth: 'management' },
      schema: { tags: ['API keys'], summary: 'Get a single API key', params: HashParams, response: { 200: Type.Object({ data: Type.Ref('ApiKey') }), ...errors(400, 401, 403, 404, 429, 500) } },
    },
    async (req) => {
      const row = await svc.keys.get(hashOf(req.params));
      return { data: (await withUsage([row]))[0] };
    },
  );

  app.patch<{ Params: Static<typeof HashParams>; Body: Static<typeof PatchBody> }>(
    '/keys/:hash',
    {
      config: { auth: 'management' },
      schema: { tags: ['API keys'], summary: 'Update an API key', params: HashParams, body: PatchBody, response: { 200: Type.Object({ data: Type.Ref('ApiKey') }), ...errors(400, 401, 403, 404, 409, 429, 500) } },
    },
    async (req) => {
      const { expires_at, ...rest } = req.body;
      const row = await svc.keys.update(hashOf(req.params), { ...rest, rate_limit: rateLimitSetting(req.body.rate_limit), ...(expires_at !== undefined ? { expires_at: expires_at ? new Date(expires_at).toISOString() : null } : {}) });
      return { data: (await withUsage([row]))[0] };
    },
  );

  app.delete<{ Params: Static<typeof HashParams> }>(
    '/keys/:hash',
    {
      config: { auth: 'management' },
      schema: { tags: ['API keys'], summary: 'Delete an API key', params: HashParams, response: { 200: DeletedResponse, ...errors(400, 401, 403, 404, 409, 429, 500) } },
    },
    async (req) => {
      await svc.keys.delete(hashOf(req.params));
      return { deleted: true as const };
    },
  );

  app.get(
    '/key',
    {
      config: { auth: 'any' },
      schema: {
        tags: ['API keys'],
        summary: 'The calling key: its limits and usage',
        response: {
          200: Type.Object({
            data: Type.Object({
              label: Type.String(),
              limit: Nullable(Type.Number()),
              limit_remaining: Nullable(Type.Number()),
              limit_reset: Nullable(Type.String()),
              include_byok_in_limit: Type.Boolean(),
              usage: Type.Number(),
              is_free_tier: Type.Boolean(),
              is_management_key: Type.Boolean(),
              is_provisioning_key: Type.Boolean(),
              expires_at: Nullable(Timestamp),
              rate_limit: Type.Object({ requests: Type.Integer(), interval: Type.String(), tokens_per_minute: Type.Optional(Type.Integer()), note: Type.String() }),
              workspace_id: Uuid,
              organization_id: Type.String(),
              allowed_data_regions: Type.Array(Type.String(), { description: "Always [\"global\"]: the gateway does not pin keys to a data region." }),
              free_model_daily_requests: Type.Object(
                { limit: Type.Integer(), remaining: Type.Integer(), used: Type.Integer() },
                { description: 'The hosted API\'s daily quota of free-model requests; the gateway has none: all -1.' },
              ),
            }, { additionalProperties: true }),
          }),
          ...errors(401, 500),
        },
      },
    },
    async (req) => {
      const [view] = await withUsage([req.key]);
      const { hash: _h, name: _n, disabled: _d, created_at: _c, updated_at: _u, external_user: _e, rate_limit: _r, ...rest } = view;
      return {
        data: {
          ...rest,
          organization_id: await svc.guardrails.organizationId(),
          allowed_data_regions: ['global'],
          free_model_daily_requests: { limit: -1, remaining: -1, used: -1 },
          is_free_tier: false,
          is_management_key: req.key.kind === 'management',
          is_provisioning_key: req.key.kind === 'management',
          // The hosted API's deprecated field (always -1 there); here it carries the key's rate limit when it has one.
          rate_limit: view.rate_limit
            ? { requests: -1, interval: '10s', ...view.rate_limit, note: 'This key\'s rate limit: over it, 429 with Retry-After (requests: -1 for no request limit).' }
            : { requests: -1, interval: '10s', note: 'Deprecated; this key has no rate limit.' },
        },
      };
    },
  );
}

export { KeyView };
