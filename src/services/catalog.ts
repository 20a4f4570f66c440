/**
 * The live catalog: the shipped default catalog, completed and overridden by the config file's `providers`,
 * `models` and `endpoints` sections. Provider credentials come from the environment or the config file; an endpoint
 * whose provider has none is kept in the catalog but is not routable (logged once at start-up).
 */
import type { Logger } from 'pino';
import { defaultCatalog } from '../catalog/default-catalog.js';
import type { Catalog, DataPolicy, EndpointDef, ModelDef, Protocol, ProviderDef, Timeouts } from '../core/catalog-types.js';
import type { RouteCatalog } from '../core/routing.js';

export const DEFAULT_TIMEOUTS: Timeouts = {
  connectMs: 10_000,
  firstByteMs: 120_000,
  // Reasoning models may think for minutes between visible chunks.
  idleMs: 300_000,
  totalMs: 1_200_000,
};

const PROTOCOLS: Protocol[] = ['openai', 'anthropic', 'google', 'openai-responses'];
const DECIMAL = /^\d+(\.\d+)?$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export class CatalogError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid catalog configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

function str(o: Obj, k: string): string | undefined {
  return typeof o[k] === 'string' ? (o[k] as string) : undefined;
}

function timeoutsFrom(v: unknown, where: string, problems: string[]): Partial<Timeouts> | undefined {
  if (v === undefined) return undefined;
  if (!isObj(v)) {
    problems.push(`${where}.timeouts must be a mapping`);
    return undefined;
  }
  const out: Partial<Timeouts> = {};
  const names: Array<[keyof Timeouts, string]> = [
    ['connectMs', 'connect_ms'],
    ['firstByteMs', 'first_byte_ms'],
    ['idleMs', 'idle_ms'],
    ['totalMs', 'total_ms'],
  ];
  for (const [key, name] of names) {
    const n = v[name];
    if (n === undefined) continue;
    if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) problems.push(`${where}.timeouts.${name} must be a positive integer (milliseconds)`);
    else out[key] = n;
  }
  return out;
}

function pricingFrom(v: unknown, where: string, problems: string[]): EndpointDef['pricing'] | undefined {
  if (v === undefined) return undefined;
  if (v === null) return null;
  if (!isObj(v)) {
    problems.push(`${where}.pricing must be a mapping of decimal strings (USD per token) or null`);
    return undefined;
  }
  const out: Obj = {};
  for (const [k, p] of Object.entries(v)) {
    const s = typeof p === 'number' ? String(p) : p;
    if (k === 'discount') out[k] = Number(p);
    else if (typeof s !== 'string' || !DECIMAL.test(s)) problems.push(`${where}.pricing.${k} must be a non-negative decimal string like "0.0000025" (got ${JSON.stringify(p)})`);
    else out[k] = s;
  }
  if (typeof out.prompt !== 'string' || typeof out.completion !== 'string') problems.push(`${where}.pricing needs prompt and completion prices`);
  return out as unknown as EndpointDef['pricing'];
}

/** Applies the config file's catalog sections to the default catalog. Throws CatalogError listing every problem. */
export function buildCatalog(file: Obj, base: Catalog = defaultCatalog()): Catalog {
  const problems: string[] = [];
  const providers = new Map(base.providers.map((p) => [p.slug, p]));
  const models = new Map(base.models.map((m) => [m.id, m]));
  const endpoints = new Map(base.endpoints.map((e) => [`${e.model}|${e.tag}`, e]));

  const list = (name: string): Obj[] => {
    const v = file[name];
    if (v === undefined) return [];
    if (!Array.isArray(v) || !v.every(isObj)) {
      problems.push(`${name} must be a list of mappings`);
      return [];
    }
    return v as Obj[];
  };

  list('providers').forEach((p, i) => {
    const where = `providers[${i}]`;
    const slug = str(p, 'slug');
    if (!slug || !/^[a-z0-9][a-z0-9._-]*$/.test(slug)) return problems.push(`${where}.slug must be a lowercase slug`);
    const prev = providers.get(slug);
    const protocol = (str(p, 'protocol') ?? prev?.protocol) as Protocol | undefined;
    if (!protocol || !PROTOCOLS.includes(protocol)) return problems.push(`${where}.protocol must be one of ${PROTOCOLS.join(', ')}`);
    const baseUrl = str(p, 'base_url') ?? prev?.baseUrl;
    if (!baseUrl || !/^https?:\/\/[^/]+/.test(baseUrl)) return problems.push(`${where}.base_url must be an http(s) URL`);
    const dp = isObj(p.data_policy) ? p.data_policy : {};
    const dataPolicy: DataPolicy = {
      training: typeof dp.training === 'boolean' ? dp.training : (prev?.dataPolicy.training ?? false),
      retainsPrompts: typeof dp.retains_prompts === 'boolean' ? dp.retains_prompts : (prev?.dataPolicy.retainsPrompts ?? false),
      zdr: typeof dp.zdr === 'boolean' ? dp.zdr : (prev?.dataPolicy.zdr ?? false),
    };
    if (p.headers !== undefined && (!isObj(p.headers) || !Object.values(p.headers).every((h) => typeof h === 'string'))) {
      problems.push(`${where}.headers must map header names to strings`);
    }
    providers.set(slug, {
      ...prev,
      slug,
      name: str(p, 'name') ?? prev?.name ?? slug,
      protocol,
      baseUrl: baseUrl.replace(/\/+$/, ''),
      apiKey: str(p, 'api_key') ?? prev?.apiKey,
      apiKeyEnv: str(p, 'api_key_env') ?? prev?.apiKeyEnv,
      noAuth: typeof p.no_auth === 'boolean' ? p.no_auth : prev?.noAuth,
      headers: isObj(p.headers) ? (p.headers as Record<string, string>) : prev?.headers,
      dataPolicy,
      timeouts: timeoutsFrom(p.timeouts, where, problems) ?? prev?.timeouts,
    });
  });

  list('models').forEach((m, i) => {
    const where = `models[${i}]`;
    const id = str(m, 'id');
    if (!id || !/^[^/\s]+\/[^\s]+$/.test(id)) return problems.push(`${where}.id must look like author/slug`);
    const prev = models.get(id);
    const input = Array.isArray(m.input_modalities) ? (m.input_modalities as string[]) : (prev?.architecture.input_modalities ?? ['text']);
    const output = Array.isArray(m.output_modalities) ? (m.output_modalities as string[]) : (prev?.architecture.output_modalities ?? ['text']);
    const model: ModelDef = {
      id,
      canonical_slug: str(m, 'canonical_slug') ?? prev?.canonical_slug ?? id,
      name: str(m, 'name') ?? prev?.name ?? id,
      created: typeof m.created === 'number' ? m.created : (prev?.created ?? Math.floor(Date.now() / 1000)),
      description: str(m, 'description') ?? prev?.description ?? '',
      context_length: typeof m.context_length === 'number' ? m.context_length : (prev?.context_length ?? 8192),
      architecture: {
        modality: `${input.join('+')}->${output.join('+')}`,
        input_modalities: input,
        output_modalities: output,
        tokenizer: str(m, 'tokenizer') ?? prev?.architecture.tokenizer ?? 'Other',
        instruct_type: str(m, 'instruct_type') ?? prev?.architecture.instruct_type ?? null,
      },
      reasoning: (isObj(m.reasoning) ? (m.reasoning as unknown as ModelDef['reasoning']) : prev?.reasoning) ?? null,
      knowledge_cutoff: str(m, 'knowledge_cutoff') ?? prev?.knowledge_cutoff ?? null,
      expiration_date: str(m, 'expiration_date') ?? prev?.expiration_date ?? null,
      hugging_face_id: str(m, 'hugging_face_id') ?? prev?.hugging_face_id ?? null,
      default_parameters: (isObj(m.default_parameters) ? m.default_parameters : prev?.default_parameters) ?? null,
      supported_voices: prev?.supported_voices ?? null,
    };
    models.set(id, model);
  });

  list('endpoints').forEach((e, i) => {
    const where = `endpoints[${i}]`;
    const model = str(e, 'model');
    const provider = str(e, 'provider');
    if (!model || !models.has(model)) return problems.push(`${where}.model must name a model of the catalog (got ${JSON.stringify(e.model)})`);
    if (!provider || !providers.has(provider)) return problems.push(`${where}.provider must name a configured provider (got ${JSON.stringify(e.provider)})`);
    const tag = str(e, 'tag') ?? provider;
    const prev = endpoints.get(`${model}|${tag}`);
    const pricing = pricingFrom(e.pricing, where, problems);
    const m = models.get(model)!;
    endpoints.set(`${model}|${tag}`, {
      model,
      provider,
      tag,
      upstreamModel: str(e, 'upstream_model') ?? prev?.upstreamModel ?? model,
      pricing: pricing !== undefined ? pricing : (prev?.pricing ?? null),
      context_length: typeof e.context_length === 'number' ? e.context_length : (prev?.context_length ?? m.context_length),
      max_prompt_tokens: typeof e.max_prompt_tokens === 'number' ? e.max_prompt_tokens : (prev?.max_prompt_tokens ?? null),
      max_completion_tokens: typeof e.max_completion_tokens === 'number' ? e.max_completion_tokens : (prev?.max_completion_tokens ?? null),
      quantization: str(e, 'quantization') ?? prev?.quantization ?? 'unknown',
      supported_parameters: Array.isArray(e.supported_parameters)
        ? (e.supported_parameters as string[])
        : (prev?.supported_parameters ?? ['temperature', 'top_p', 'max_tokens', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'tools', 'tool_choice', 'response_format']),
      dataPolicy: isObj(e.data_policy) ? { training: e.data_policy.training as boolean, retainsPrompts: e.data_policy.retains_prompts as boolean, zdr: e.data_policy.zdr as boolean } : prev?.dataPolicy,
      is_moderated: typeof e.is_moderated === 'boolean' ? e.is_moderated : (prev?.is_moderated ?? false),
      supports_implicit_caching: typeof e.supports_implicit_caching === 'boolean' ? e.supports_implicit_caching : (prev?.supports_implicit_caching ?? false),
    });
  });

  if (problems.length > 0) throw new CatalogError(problems);
  return { providers: [...providers.values()], models: [...models.values()], endpoints: [...endpoints.values()] };
}

/** Wire protocols with an adapter; endpoints of other protocols stay listed but are not routed. */
export const ROUTABLE_PROTOCOLS: ReadonlySet<Protocol> = new Set(['openai', 'anthropic', 'google', 'openai-responses']);

export class CatalogService {
  readonly route: RouteCatalog;
  readonly catalog: Catalog;
  private readonly credentials = new Map<string, string | null>();

  constructor(catalog: Catalog, env: NodeJS.ProcessEnv, log?: Logger) {
    this.catalog = catalog;
    const endpointsByModel = new Map<string, EndpointDef[]>();
    const protocolOf = new Map(catalog.providers.map((p) => [p.slug, p.protocol]));
    const unrouted = new Set<string>();
    for (const e of catalog.endpoints) {
      const protocol = protocolOf.get(e.provider);
      if (protocol && !ROUTABLE_PROTOCOLS.has(protocol)) {
        unrouted.add(`${e.provider} (${protocol})`);
        continue;
      }
      const list = endpointsByModel.get(e.model) ?? [];
      list.push(e);
      endpointsByModel.set(e.model, list);
    }
    this.route = {
      models: new Map(catalog.models.map((m) => [m.id, m])),
      endpointsByModel,
      providers: new Map(catalog.providers.map((p) => [p.slug, p])),
    };
    if (unrouted.size > 0) log?.info({ providers: [...unrouted] }, 'providers whose wire protocol has no adapter yet are listed but not routed');
    const missing: string[] = [];
    for (const p of catalog.providers) {
      const key = p.apiKey ?? (p.apiKeyEnv ? env[p.apiKeyEnv] : undefined) ?? null;
      this.credentials.set(p.slug, key || null);
      if (!key && !p.noAuth) missing.push(`${p.slug}${p.apiKeyEnv ? ` (set ${p.apiKeyEnv})` : ''}`);
    }
    if (missing.length > 0) log?.info({ providers: missing }, 'providers without credentials are not routable');
  }

  hasCredentials = (p: ProviderDef): boolean => p.noAuth === true || Boolean(this.credentials.get(p.slug));

  apiKey(p: ProviderDef): string | null {
    return this.credentials.get(p.slug) ?? null;
  }

  timeouts(p: ProviderDef): Timeouts {
    return { ...DEFAULT_TIMEOUTS, ...p.timeouts };
  }
}
