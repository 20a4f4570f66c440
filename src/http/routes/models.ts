/**
 * The catalog: GET /models, /models/count, /models/user, /model/{author}/{slug}, /models/{author}/{slug}/endpoints,
 * /providers. Public except /models/user (which needs a key: it is the caller's own view).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { EndpointDef, ModelDef } from '../../core/catalog-types.js';
import { MODEL_SORTS, modelView, queryModels } from '../../core/model-view.js';
import { effectiveDataPolicy } from '../../core/routing.js';
import { splitVariant } from '../../core/variants.js';
import { notFound } from '../../core/errors.js';
import { errors, StringEnum } from '../schemas/common.js';
import type { Services } from '../../services/index.js';
import { unresolvedError } from '../../services/model-resolution.js';

const ListQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Search in id, name and description.' })),
  output_modalities: Type.Optional(Type.String({ description: 'Comma list (text, image, audio, embeddings) or all; default text.' })),
  input_modalities: Type.Optional(Type.String({ description: 'Comma list: every one must be accepted.' })),
  supported_parameters: Type.Optional(Type.String({ description: 'Comma list: every one must be supported by some endpoint.' })),
  context: Type.Optional(Type.Integer({ minimum: 0, description: 'Minimum context length (tokens).' })),
  min_price: Type.Optional(Type.Number({ minimum: 0, description: 'Prompt price, USD per million tokens.' })),
  max_price: Type.Optional(Type.Number({ minimum: 0 })),
  min_output_price: Type.Optional(Type.Number({ minimum: 0, description: 'Completion price, USD per million tokens.' })),
  max_output_price: Type.Optional(Type.Number({ minimum: 0 })),
  providers: Type.Optional(Type.String({ description: 'Comma list of provider slugs.' })),
  model_authors: Type.Optional(Type.String({ description: 'Comma list of authors (the part before the slash).' })),
  sort: Type.Optional(StringEnum(MODEL_SORTS)),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
type ListQueryT = Static<typeof ListQuery>;

const ModelParams = Type.Object({ author: Type.String({ minLength: 1 }), slug: Type.String({ minLength: 1 }) });
const UserQuery = Type.Object({ offset: Type.Optional(Type.Integer({ minimum: 0 })), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) });

/** GET /models/{id}: the OpenAI model object (`id`, `object`, `created`, `owned_by`) with the gateway's model fields. */
const RetrievedModel = Type.Object(
  {
    id: Type.String({ description: 'The catalog model id the request resolved to.' }),
    object: Type.Literal('model'),
    created: Type.Integer(),
    owned_by: Type.String({ description: 'The model author (the part of the id before the slash).' }),
    canonical_slug: Type.String(),
    name: Type.String(),
    context_length: Type.Integer(),
    pricing: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: true },
);

const ModelListResponse = Type.Object({
  data: Type.Array(Type.Object({}, { additionalProperties: true })),
  total_count: Type.Integer(),
  links: Type.Object({ next: Type.Union([Type.String(), Type.Null()]) }),
});

/** `offset`/`limit` paging; without either, the whole list. */
function page<T>(items: T[], q: { offset?: number; limit?: number }, path: string, search: URLSearchParams) {
  if (q.offset === undefined && q.limit === undefined) return { data: items, total_count: items.length, links: { next: null } };
  const offset = q.offset ?? 0;
  const limit = q.limit ?? 500;
  const data = items.slice(offset, offset + limit);
  let next: string | null = null;
  if (offset + limit < items.length) {
    const s = new URLSearchParams(search);
    s.set('offset', String(offset + limit));
    s.set('limit', String(limit));
    next = `${path}?${s}`;
  }
  return { data, total_count: items.length, links: { next } };
}

export default async function modelRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Models'];
  const cat = svc.catalog;
  const allEndpoints = (id: string): EndpointDef[] => cat.catalog.endpoints.filter((e) => e.model === id);
  /** One endpoint as the hosted API lists it, with the gateway's own measured status, uptime, latency and throughput. */
  const endpointView = (m: ModelDef, e: EndpointDef, now: number) => {
    const p = cat.route.providers.get(e.provider);
    const h = svc.health.health(e);
    const routableNow = p !== undefined && cat.hasCredentials(p) && cat.isRouted(e);
    // 0 = ok; -1 = failed within the last 30 s; -10 = not routable (no credentials or no protocol adapter).
    const status = !routableNow ? -10 : h?.lastFailureAt && now - h.lastFailureAt < 30_000 && (h.consecutiveFailures ?? 0) > 0 ? -1 : 0;
    // Which `tool_choice` values the endpoint takes: all of them with the parameter, none without it.
    const toolChoice = e.supported_parameters.includes('tool_choice');
    return {
      name: `${p?.name ?? e.provider} | ${m.name}`,
      model_id: m.id,
      model_name: m.name,
      provider_name: p?.name ?? e.provider,
      tag: e.tag,
      context_length: e.context_length,
      max_prompt_tokens: e.max_prompt_tokens,
      max_completion_tokens: e.max_completion_tokens,
      pricing: modelView(m, [e]).pricing,
      quantization: e.quantization,
      supported_parameters: e.supported_parameters,
      supports_implicit_caching: e.supports_implicit_caching,
      supports_tool_choice: { auto: toolChoice, none: toolChoice, required: toolChoice, function: toolChoice },
      supports_voice_cloning: false,
      status,
      uptime_last_5m: svc.health.uptime(e, 5 * 60_000),
      uptime_last_30m: svc.health.uptime(e, 30 * 60_000),
      uptime_last_1d: svc.health.uptime(e, 24 * 3600_000),
      latency_last_30m: h?.latencyMs ?? null,
      throughput_last_30m: h?.throughput ?? null,
    };
  };
  const stats = (id: string) => {
    let throughput: number | null = null;
    let latency: number | null = null;
    for (const e of allEndpoints(id)) {
      const h = svc.health.health(e);
      if (h?.throughput) throughput = Math.max(throughput ?? 0, h.throughput.p50);
      if (h?.latencyMs) latency = Math.min(latency ?? Infinity, h.latencyMs.p50);
    }
    return { throughput, latency };
  };
  const listing = (q: ListQueryT) => queryModels(cat.catalog.models.map((model) => ({ model, endpoints: allEndpoints(model.id) })), q, stats);
  const resolve = (author: string, slug: string): ModelDef => {
    const id = `${author}/${splitVariant(slug).base}`;
    const m = cat.route.models.get(id) ?? cat.catalog.models.find((x) => x.canonical_slug === id);
    if (!m) throw notFound(`Model ${author}/${slug} not found`);
    return m;
  };
  /** A model id as clients send it (catalog id, canonical slug, alias, bare or dated id; docs/agents.md) → its model. */
  const byAnyId = async (raw: string): Promise<ModelDef> => {
    const base = splitVariant(raw).base;
    const canonical = cat.catalog.models.find((x) => x.canonical_slug === base);
    if (canonical) return canonical;
    const r = cat.resolve(base, (await svc.guardrails.settings()).model_aliases);
    if (r.kind !== 'found') throw unresolvedError(raw, r);
    return cat.route.models.get(r.id)!;
  };
  /** The OpenAI model object's fields (`object`, `owned_by`) on the gateway's model view, for the OpenAI SDK's `models.retrieve`. */
  const openaiModel = (m: ModelDef) => ({ ...modelView(m, allEndpoints(m.id), { withReasoning: true }), object: 'model', owned_by: m.id.split('/')[0] });
  /** The aliases that resolve to each model: its own and the organization's (`/models/user` lists what routing resolves). */
  const aliasesOf = async (): Promise<Map<string, string[]>> => {
    const out = new Map<string, string[]>();
    for (const m of cat.catalog.models) if (m.aliases?.length) out.set(m.id, [...m.aliases]);
    for (const [alias, id] of Object.entries((await svc.guardrails.settings()).model_aliases ?? {})) out.set(id, [...(out.get(id) ?? []), alias]);
    return out;
  };

  app.get<{ Querystring: ListQueryT }>(
    '/models',
    { schema: { tags, summary: 'List models (filters, sort, paging)', security: [], querystring: ListQuery, response: { 200: ModelListResponse, ...errors(400, 500) } } },
    async (req) => {
      const items = listing(req.query).map((x) => modelView(x.model, x.endpoints));
      return page(items, req.query, '/api/v1/models', new URLSearchParams(req.url.split('?')[1] ?? ''));
    },
  );

  app.get<{ Querystring: ListQueryT }>(
    '/models/count',
    { schema: { tags, summary: 'Count the models matching the same filters as GET /models', security: [], querystring: ListQuery, response: { 200: Type.Object({ data: Type.Object({ count: Type.Integer() }) }), ...errors(400, 500) } } },
    async (req) => ({ data: { count: listing(req.query).length } }),
  );

  app.get<{ Querystring: Static<typeof UserQuery> }>(
    '/embeddings/models',
    {
      schema: {
        tags: ['Embeddings'],
        summary: 'List the embeddings models (output modality `embeddings`) and their properties; the whole list unless offset or limit is given',
        security: [],
        querystring: UserQuery,
        response: { 200: ModelListResponse, ...errors(400, 500) },
      },
    },
    async (req) => {
      const items = listing({ output_modalities: 'embeddings' }).map((x) => modelView(x.model, x.endpoints));
      return page(items, req.query, '/api/v1/embeddings/models', new URLSearchParams(req.url.split('?')[1] ?? ''));
    },
  );

  app.get<{ Querystring: Static<typeof UserQuery> }>(
    '/models/user',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        summary:
          "The models the calling key can reach: routable endpoints (through the operator's keys or the key's BYOK credentials) left after the organization's provider preferences and privacy rules and every guardrail of the key, its member and its workspace (none once a guardrail budget is spent); pricing reflects those endpoints",
        querystring: UserQuery,
        response: { 200: ModelListResponse, ...errors(400, 401, 404, 500) },
      },
    },
    async (req) => {
      // The same policy function decides chat routing (src/core/policy.ts), so this list and routing agree.
      // `aliases`: the model ids that routing resolves to each model besides its id (docs/agents.md).
      const aliases = await aliasesOf();
      const items = (await svc.guardrails.userModels(req.key, svc.byok.routing(req.key)))
        .sort((a, b) => b.model.created - a.model.created || a.model.id.localeCompare(b.model.id))
        .map((x) => ({ ...modelView(x.model, x.endpoints), aliases: aliases.get(x.model.id) ?? [] }));
      return page(items, req.query, '/api/v1/models/user', new URLSearchParams(req.url.split('?')[1] ?? ''));
    },
  );

  app.get<{ Params: Static<typeof ModelParams> }>(
    '/model/:author/:slug',
    { schema: { tags, summary: 'Get a model by its slug (a :variant suffix resolves to the base model)', security: [], params: ModelParams, response: { 200: Type.Object({ data: Type.Object({}, { additionalProperties: true }) }), ...errors(404, 500) } } },
    async (req) => {
      const m = resolve(req.params.author, req.params.slug);
      return { data: modelView(m, allEndpoints(m.id), { withReasoning: true }) };
    },
  );

  // The OpenAI SDK's `models.retrieve(id)`: GET /models/{id}, the id's slash encoded (%2F) or not.
  const retrieveSchema = (params: TSchema) => ({
    tags,
    summary: "Get a model by any id a client sends (catalog id with its slash encoded as %2F or not, canonical slug, alias, bare or dated provider id), in the OpenAI model object's shape plus the gateway's model fields",
    security: [],
    params,
    response: { 200: RetrievedModel, ...errors(404, 500) },
  });
  app.get<{ Params: { id: string } }>('/models/:id', { schema: retrieveSchema(Type.Object({ id: Type.String({ minLength: 1, maxLength: 300, description: 'A model id; `openai%2Fgpt-5`, `gpt-5` and `claude-sonnet-4-5-20250929` all resolve.' }) })) }, async (req) =>
    openaiModel(await byAnyId(req.params.id)),
  );
  app.get<{ Params: Static<typeof ModelParams> }>('/models/:author/:slug', { schema: retrieveSchema(ModelParams) }, async (req) => openaiModel(await byAnyId(`${req.params.author}/${req.params.slug}`)));

  app.get<{ Params: Static<typeof ModelParams> }>(
    '/models/:author/:slug/endpoints',
    {
      schema: {
        tags,
        summary: "A model's endpoints with pricing, limits and the gateway's own measured status, uptime, latency and throughput",
        security: [],
        params: ModelParams,
        response: { 200: Type.Object({ data: Type.Object({}, { additionalProperties: true }) }), ...errors(404, 500) },
      },
    },
    async (req) => {
      const m = resolve(req.params.author, req.params.slug);
      const now = svc.health.now();
      const endpoints = allEndpoints(m.id).map((e) => endpointView(m, e, now));
      return { data: { id: m.id, name: m.name, created: m.created, description: m.description, architecture: m.architecture, endpoints } };
    },
  );

  app.get(
    '/endpoints/zdr',
    {
      schema: {
        tags,
        summary: 'The endpoints whose provider retains no prompts and trains on none (zero data retention), in the shape of a model\'s endpoints',
        security: [],
        response: { 200: Type.Object({ data: Type.Array(Type.Object({}, { additionalProperties: true })) }), ...errors(500) },
      },
    },
    async () => {
      const now = svc.health.now();
      const data: Array<ReturnType<typeof endpointView>> = [];
      for (const e of cat.catalog.endpoints) {
        const m = cat.route.models.get(e.model);
        const p = cat.route.providers.get(e.provider);
        if (m && p && effectiveDataPolicy(p, e).zdr) data.push(endpointView(m, e, now));
      }
      return { data };
    },
  );

  app.get(
    '/providers',
    { schema: { tags: ['Providers'], summary: 'List the configured providers', security: [], response: { 200: Type.Object({ data: Type.Array(Type.Object({}, { additionalProperties: true })) }), ...errors(500) } } },
    async () => ({
      data: cat.catalog.providers.map((p) => ({
        slug: p.slug,
        name: p.name,
        privacy_policy_url: p.privacyPolicyUrl ?? null,
        terms_of_service_url: p.termsOfServiceUrl ?? null,
        status_page_url: p.statusPageUrl ?? null,
        headquarters: p.headquarters ?? null,
        datacenters: p.datacenters ?? null,
      })),
    }),
  );
}
