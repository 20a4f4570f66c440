/**
 * Broadcast destinations (the hosted API's shape, docs/observability.md): GET/POST /observability/destinations,
 * GET/PATCH/DELETE /observability/destinations/{id}. Management keys only; credentials never returned (masked);
 * `delivery` (sent, failed, dropped, last error) is our extension.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors, Nullable, StringEnum } from '../schemas/common.js';
import type { Services } from '../../services/index.js';
import { DESTINATION_TYPES, destinationView } from '../../services/observability/destinations.js';

const Config = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'Type-specific configuration. otel-collector: endpoint, headers. langfuse: publicKey, secretKey, baseUrl, headers. datadog: apiKey, mlApp, url, headers. webhook: url, method (POST|PUT), headers, secret (HMAC signing secret). Credentials come back masked.',
});
const Hashes = Type.Array(Type.String({ pattern: '^[0-9a-f]{64}$' }), { minItems: 1, maxItems: 1000 });

const CreateBody = Type.Object(
  {
    type: StringEnum(DESTINATION_TYPES, { description: 'The destination type.' }),
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Human-readable name for the destination.' }),
    config: Config,
    enabled: Type.Optional(Type.Boolean({ default: true })),
    privacy_mode: Type.Optional(Type.Boolean({ default: false, description: 'When true, request/response bodies are not forwarded — only metadata.' })),
    sampling_rate: Type.Optional(Type.Number({ minimum: 0.0001, maximum: 1, description: 'Sampling rate between 0.0001 and 1 (1 = 100%).' })),
    api_key_hashes: Type.Optional(Nullable(Hashes, { description: 'Only these keys\' traffic (null or omitted: all keys).' })),
    workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "Defaults to the key's workspace." })),
  },
  { additionalProperties: false },
);

const PatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    config: Type.Optional(Config),
    enabled: Type.Optional(Type.Boolean()),
    privacy_mode: Type.Optional(Type.Boolean()),
    sampling_rate: Type.Optional(Type.Number({ minimum: 0.0001, maximum: 1 })),
    api_key_hashes: Type.Optional(Nullable(Hashes)),
  },
  { additionalProperties: false },
);

const Destination = Type.Object({
  id: Type.String({ format: 'uuid' }),
  workspace_id: Type.String(),
  type: StringEnum(DESTINATION_TYPES),
  name: Nullable(Type.String()),
  enabled: Type.Boolean(),
  privacy_mode: Type.Boolean(),
  sampling_rate: Type.Number(),
  api_key_hashes: Nullable(Type.Array(Type.String())),
  broadcast_generation_cost: Type.Boolean(),
  broadcast_generation_identity: Type.Boolean(),
  broadcast_generation_request_context: Type.Boolean(),
  filter_rules: Type.Null(),
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'The configuration, credentials masked.' }),
  created_at: Type.String(),
  updated_at: Type.String(),
  delivery: Type.Object(
    {
      sent: Type.Integer(),
      failed: Type.Integer(),
      dropped: Type.Integer({ description: 'Generations not sent because the destination was too far behind.' }),
      last_error: Nullable(Type.String()),
      last_error_at: Nullable(Type.String()),
      last_success_at: Nullable(Type.String()),
    },
    { description: 'Delivery counters and the latest error (gateway extension).' },
  ),
});

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
const ListQuery = Type.Object(
  {
    workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false },
);
const M = { auth: 'management' as const };
const TAGS = ['Observability'];

export default async function observabilityRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/observability/destinations',
    { config: M, schema: { tags: TAGS, summary: 'List observability destinations', querystring: ListQuery, response: { 200: Type.Object({ data: Type.Array(Destination), total_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) } } },
    async (req) => {
      const all = await svc.destinations.list(req.query.workspace_id, req.key.workspace_id);
      const offset = req.query.offset ?? 0;
      return { data: all.slice(offset, offset + (req.query.limit ?? 50)).map(destinationView), total_count: all.length };
    },
  );

  app.post<{ Body: Static<typeof CreateBody> }>(
    '/observability/destinations',
    { config: M, schema: { tags: TAGS, summary: 'Create an observability destination', body: CreateBody, response: { 201: Type.Object({ data: Destination }), ...errors(400, 401, 403, 404, 500, 503) } } },
    async (req, reply) => {
      const row = await svc.destinations.create(req.body, req.key.workspace_id);
      reply.code(201);
      return { data: destinationView(row) };
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/observability/destinations/:id',
    { config: M, schema: { tags: TAGS, summary: 'Get an observability destination', params: IdParams, response: { 200: Type.Object({ data: Destination }), ...errors(401, 403, 404, 500) } } },
    async (req) => ({ data: destinationView(await svc.destinations.get(req.params.id)) }),
  );

  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof PatchBody> }>(
    '/observability/destinations/:id',
    {
      config: M,
      schema: { tags: TAGS, summary: 'Update an observability destination (masked credentials sent back keep the stored ones)', params: IdParams, body: PatchBody, response: { 200: Type.Object({ data: Destination }), ...errors(400, 401, 403, 404, 500, 503) } },
    },
    async (req) => ({ data: destinationView(await svc.destinations.update(req.params.id, req.body)) }),
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/observability/destinations/:id',
    { config: M, schema: { tags: TAGS, summary: 'Delete an observability destination', params: IdParams, response: { 200: Type.Object({ deleted: Type.Literal(true) }), ...errors(401, 403, 404, 500) } } },
    async (req) => {
      await svc.destinations.remove(req.params.id);
      return { deleted: true as const };
    },
  );
}
