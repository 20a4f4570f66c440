import { describe, it, expect } from 'vitest';
import type { DataPolicy, EndpointDef, ModelDef, Pricing, ProviderDef } from '../../src/core/catalog-types.js';
import {
  planRoute,
  matchesProvider,
  isUnhealthy,
  type EndpointHealth,
  type RouteInput,
  type RoutePlan,
} from '../../src/core/routing.js';
import {
  applyDeprecatedRoute,
  normalizeSort,
  parsePriceLimit,
  routeToPartition,
  validateProviderPreferences,
} from '../../src/core/provider-prefs.js';

// ---------------------------------------------------------------------------
// Fixture catalog
// ---------------------------------------------------------------------------

const NOW = 1_700_000_000_000;

function provider(slug: string, name: string, dataPolicy: DataPolicy): ProviderDef {
  return { slug, name, protocol: 'openai', baseUrl: `https://${slug}.example/v1`, dataPolicy };
}

const PROVIDERS: ProviderDef[] = [
  provider('openai', 'OpenAI', { training: false, retainsPrompts: true, zdr: false }),
  provider('azure', 'Azure', { training: false, retainsPrompts: false, zdr: true }),
  provider('together', 'Together', { training: false, retainsPrompts: false, zdr: false }),
  provider('deepinfra', 'DeepInfra', { training: false, retainsPrompts: false, zdr: false }),
  provider('cheapco', 'CheapCo', { training: true, retainsPrompts: true, zdr: false }),
  provider('nokey', 'NoKey', { training: false, retainsPrompts: false, zdr: true }),
];

function model(id: string): ModelDef {
  return {
    id,
    canonical_slug: id,
    name: id,
    created: 0,
    description: '',
    context_length: 128_000,
    architecture: { modality: 'text->text', input_modalities: ['text'], output_modalities: ['text'], tokenizer: 'Other', instruct_type: null },
    reasoning: null,
    knowledge_cutoff: null,
    expiration_date: null,
    hugging_face_id: null,
    default_parameters: null,
    supported_voices: null,
  };
}

const BASIC = ['temperature', 'top_p', 'max_tokens', 'stop'];

/** Price per MILLION tokens → per-token string (fixture convenience). */
const pm = (perM: number): string => (perM / 1e6).toFixed(12);
function pr(promptPerM: number, completionPerM: number, extra: Partial<Pricing> = {}): Pricing {
  return { prompt: pm(promptPerM), completion: pm(completionPerM), ...extra };
}

function ep(m: string, tag: string, pricing: Pricing | null, extra: Partial<EndpointDef> = {}): EndpointDef {
  return {
    model: m,
    provider: tag.split('/')[0],
    tag,
    upstreamModel: m,
    pricing,
    context_length: 128_000,
    max_prompt_tokens: null,
    max_completion_tokens: 16_384,
    quantization: 'unknown',
    supported_parameters: BASIC,
    is_moderated: false,
    supports_implicit_caching: false,
    ...extra,
  };
}

const GPT = 'openai/gpt-4o';
const LLAMA = 'meta/llama-3-70b';
const MISTRAL = 'mistral/small';
const LB = 'acme/lb'; // load-balancing model

const ENDPOINTS: EndpointDef[] = [
  // GPT-4o: $2.5/$10 on openai & azure (azure is ZDR), cheapco cheaper but trains.
  ep(GPT, 'openai', pr(2.5, 10), { supported_parameters: [...BASIC, 'tools', 'tool_choice', 'response_format'] }),
  ep(GPT, 'azure', pr(2.5, 10), { supported_parameters: [...BASIC, 'tools', 'tool_choice'] }),
  ep(GPT, 'cheapco', pr(1, 4), { supported_parameters: [...BASIC] }),
  // Llama: several hosts, different quantizations and tool support.
  ep(LLAMA, 'together', pr(0.9, 0.9), { quantization: 'fp16', supported_parameters: [...BASIC, 'tools', 'tool_choice'], context_length: 8_192, max_completion_tokens: 4_096 }),
  ep(LLAMA, 'deepinfra', pr(0.4, 0.4), { quantization: 'fp8' }),
  ep(LLAMA, 'deepinfra/turbo', pr(0.3, 0.3), { quantization: 'fp4', max_completion_tokens: 2_048 }),
  ep(LLAMA, 'cheapco', pr(0.2, 0.2), { quantization: 'int4' }),
  ep(LLAMA, 'nokey', pr(0.1, 0.1), { quantization: 'bf16' }),
  // Mistral: one unknown-price endpoint, one priced; deepinfra overrides its data policy.
  ep(MISTRAL, 'together', null, { quantization: 'bf16' }),
  ep(MISTRAL, 'deepinfra', pr(0.1, 0.3), { quantization: 'fp8', dataPolicy: { training: true } }),
  // Load-balancing fixture: blended prices 1, 1.5, 2, 3 ($/M).
  ep(LB, 'together', pr(0.5, 0.5)),
  ep(LB, 'deepinfra', pr(0.75, 0.75)),
  ep(LB, 'openai', pr(1, 1)),
  ep(LB, 'azure', pr(1.5, 1.5)),
];

function catalog() {
  const endpointsByModel = new Map<string, EndpointDef[]>();
  for (const e of ENDPOINTS) endpointsByModel.set(e.model, [...(endpointsByModel.get(e.model) ?? []), e]);
  return {
    models: new Map([GPT, LLAMA, MISTRAL, LB].map((id) => [id, model(id)] as const)),
    endpointsByModel,
    providers: new Map(PROVIDERS.map((p) => [p.slug, p] as const)),
  };
}

/** Deterministic PRNG (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function route(over: Partial<RouteInput> & { healthBy?: Record<string, EndpointHealth> } = {}): RoutePlan {
  const { healthBy, ...rest } = over;
  return planRoute({
    now: NOW,
    rng: () => 0, // always picks the cheapest of the cheap tier
    models: [GPT],
    catalog: catalog(),
    hasCredentials: (p) => p.slug !== 'nokey',
    health: (e) => healthBy?.[`${e.model}|${e.tag}`] ?? healthBy?.[e.tag],
    params: ['messages', 'temperature'],
    ...rest,
  });
}

const tags = (p: RoutePlan): string[] => p.attempts.map((a) => `${a.model === GPT ? '' : a.model + '|'}${a.endpoint.tag}`);
const onlyTags = (p: RoutePlan): string[] => p.attempts.map((a) => a.endpoint.tag);
const excluded = (p: RoutePlan, model: string, tag: string) => p.considered.find((c) => c.model === model && c.tag === tag)?.excluded;

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------

describe('models', () => {
  it('unknown single model → 404 model_not_found naming the model', () => {
    const p = route({ models: ['nope/missing'] });
    expect(p.attempts).toEqual([]);
    expect(p.error).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(p.error?.message).toContain('nope/missing');
    expect(p.considered).toEqual([{ model: 'nope/missing', provider: '', tag: '', excluded: 'model_not_found' }]);
  });

  it('unknown primary with a known fallback routes to the fallback (strategy fallback)', () => {
    const p = route({ models: ['nope/missing', MISTRAL] });
    expect(p.error).toBeUndefined();
    expect(p.attempts[0].model).toBe(MISTRAL);
    expect(p.strategy).toBe('fallback');
    expect(p.considered[0]).toMatchObject({ model: 'nope/missing', excluded: 'model_not_found' });
  });

  it('fallback models follow the primary model, in request order, deduplicated', () => {
    const p = route({ models: [MISTRAL, GPT, MISTRAL] });
    const models = p.attempts.map((a) => a.model);
    expect(models).toEqual([MISTRAL, MISTRAL, GPT, GPT, GPT]);
    expect(p.strategy).toBe('direct');
  });

  it('a model with no endpoints at all → 404 no_endpoints', () => {
    const cat = catalog();
    cat.models.set('empty/model', model('empty/model'));
    const p = route({ models: ['empty/model'], catalog: cat });
    expect(p.error).toMatchObject({ status: 404, code: 'no_endpoints' });
    expect(p.error?.message).toContain('empty/model');
  });

  it('considered lists every endpoint of every requested model', () => {
    const p = route({ models: [GPT, LLAMA] });
    expect(p.considered.map((c) => `${c.model}|${c.tag}`)).toEqual(
      ENDPOINTS.filter((e) => e.model === GPT || e.model === LLAMA).map((e) => `${e.model}|${e.tag}`),
    );
  });
});

// ---------------------------------------------------------------------------
// Hard filters
// ---------------------------------------------------------------------------

describe('hard filters', () => {
  it('no credentials → excluded (no_credentials); only such endpoints → no_endpoints naming the provider', () => {
    const p = route({ models: [LLAMA] });
    expect(excluded(p, LLAMA, 'nokey')).toBe('no_credentials');
    expect(onlyTags(p)).not.toContain('nokey');
    const q = route({ models: [LLAMA], hasCredentials: () => false });
    expect(q.error).toMatchObject({ status: 404, code: 'no_endpoints', excluded_by: ['no_credentials'] });
    expect(q.error?.message).toContain('nokey');
  });

  it('endpoint whose provider is not in the catalog → unknown_provider', () => {
    const cat = catalog();
    cat.providers.delete('cheapco');
    const p = route({ catalog: cat });
    expect(excluded(p, GPT, 'cheapco')).toBe('unknown_provider');
  });

  describe('only', () => {
    it('base slug matches all tags of the provider, case-insensitively', () => {
      const p = route({ models: [LLAMA], provider: { only: ['DeepInfra'] } });
      expect(onlyTags(p).sort()).toEqual(['deepinfra', 'deepinfra/turbo']);
      expect(excluded(p, LLAMA, 'together')).toBe('only');
    });
    it('a full tag matches that endpoint only', () => {
      const p = route({ models: [LLAMA], provider: { only: ['deepinfra/TURBO'] } });
      expect(onlyTags(p)).toEqual(['deepinfra/turbo']);
      expect(excluded(p, LLAMA, 'deepinfra')).toBe('only');
    });
    it('nothing left → 404 constraint_filtered', () => {
      const p = route({ provider: { only: ['together'] } });
      expect(p.error).toMatchObject({ status: 404, code: 'constraint_filtered' });
      expect(p.error?.excluded_by).toEqual(['only']);
    });
    it('matchesProvider accepts slug, tag and display name', () => {
      const e = ENDPOINTS.find((x) => x.tag === 'deepinfra/turbo')!;
      const prov = PROVIDERS.find((x) => x.slug === 'deepinfra')!;
      expect(matchesProvider('deepinfra', e, prov)).toBe(true);
      expect(matchesProvider('deepinfra/turbo', e, prov)).toBe(true);
      expect(matchesProvider('DeepInfra', e, prov)).toBe(true);
      expect(matchesProvider('deepinfra/other', e, prov)).toBe(false);
      expect(matchesProvider('together', e, prov)).toBe(false);
    });
  });

  it('ignore', () => {
    const p = route({ provider: { ignore: ['openai'] } });
    expect(onlyTags(p)).not.toContain('openai');
    expect(excluded(p, GPT, 'openai')).toBe('ignore');
  });

  it('org allowlist is the ceiling, intersected with only', () => {
    const p = route({ models: [LLAMA], orgAllowedProviders: ['deepinfra', 'together'], provider: { only: ['deepinfra', 'cheapco'] } });
    expect(onlyTags(p).sort()).toEqual(['deepinfra', 'deepinfra/turbo']);
    expect(excluded(p, LLAMA, 'cheapco')).toBe('allowed_providers');
    expect(excluded(p, LLAMA, 'together')).toBe('only');
    // empty allowlist = no ceiling
    expect(route({ models: [LLAMA], orgAllowedProviders: [] }).attempts).toHaveLength(4);
  });

  it('org ignore list is unioned with ignore', () => {
    const p = route({ models: [LLAMA], orgIgnoredProviders: ['cheapco'], provider: { ignore: ['together'] } });
    expect(onlyTags(p).sort()).toEqual(['deepinfra', 'deepinfra/turbo']);
    expect(excluded(p, LLAMA, 'cheapco')).toBe('ignored_providers');
    expect(excluded(p, LLAMA, 'together')).toBe('ignore');
  });

  describe('data policy', () => {
    it('data_collection deny excludes training and prompt-retaining providers', () => {
      const p = route({ provider: { data_collection: 'deny' } });
      expect(onlyTags(p)).toEqual(['azure']);
      expect(excluded(p, GPT, 'cheapco')).toBe('data_policy:training');
      expect(excluded(p, GPT, 'openai')).toBe('data_policy:retention');
    });
    it('account denyDataCollection applies without the request asking (ORed)', () => {
      const p = route({ denyDataCollection: true, provider: { data_collection: 'allow' } });
      expect(onlyTags(p)).toEqual(['azure']);
    });
    it('endpoint data policy overrides the provider one', () => {
      const p = route({ models: [MISTRAL], provider: { data_collection: 'deny' } });
      expect(onlyTags(p)).toEqual(['together']);
      expect(excluded(p, MISTRAL, 'deepinfra')).toBe('data_policy:training');
    });
    it('zdr keeps only ZDR endpoints; account requireZdr tightens even when the request says false', () => {
      expect(onlyTags(route({ provider: { zdr: true } }))).toEqual(['azure']);
      const p = route({ requireZdr: true, provider: { zdr: false } });
      expect(onlyTags(p)).toEqual(['azure']);
      expect(excluded(p, GPT, 'openai')).toBe('data_policy:zdr');
    });
    it('nothing left because of data policy → 404 privacy_restricted with an OpenRouter-like message', () => {
      const p = route({ provider: { data_collection: 'deny', ignore: ['azure'] } });
      expect(p.error).toMatchObject({ status: 404, code: 'privacy_restricted' });
      expect(p.error?.message).toBe('No endpoints found for openai/gpt-4o that match your data policy (data collection denied)');
      expect(p.error?.excluded_by).toEqual(['data_policy:retention', 'ignore', 'data_policy:training']);
      const z = route({ models: [LLAMA], requireZdr: true });
      expect(z.error).toMatchObject({ code: 'privacy_restricted' });
      expect(z.error?.message).toContain('zero data retention');
    });
  });

  it('quantizations (case-insensitive)', () => {
    const p = route({ models: [LLAMA], provider: { quantizations: ['FP8', 'fp16'] } });
    expect(onlyTags(p).sort()).toEqual(['deepinfra', 'together']);
    expect(excluded(p, LLAMA, 'deepinfra/turbo')).toBe('quantization');
    const q = route({ models: [LLAMA], provider: { quantizations: ['fp32'] } });
    expect(q.error).toMatchObject({ code: 'constraint_filtered' });
    expect(q.error?.message).toContain('fp32');
  });

  describe('max_price', () => {
    it('compares $/M limits to per-token prices × 1e6 (numbers or numeric strings)', () => {
      // llama prompt prices $/M: together 0.9, deepinfra 0.4, turbo 0.3, cheapco 0.2
      const p = route({ models: [LLAMA], provider: { max_price: { prompt: '0.4' } } });
      expect(onlyTags(p).sort()).toEqual(['cheapco', 'deepinfra', 'deepinfra/turbo']); // 0.4 ≤ 0.4 kept
      expect(excluded(p, LLAMA, 'together')).toBe('max_price');
      const q = route({ models: [LLAMA], provider: { max_price: { completion: 0.25 } } });
      expect(onlyTags(q)).toEqual(['cheapco']);
    });
    it('unknown pricing is excluded by any max_price', () => {
      const p = route({ models: [MISTRAL], provider: { max_price: { prompt: 1000 } } });
      expect(onlyTags(p)).toEqual(['deepinfra']);
      expect(excluded(p, MISTRAL, 'together')).toBe('max_price');
    });
    it('request price limit (per request, USD)', () => {
      const cat = catalog();
      cat.endpointsByModel.set(GPT, cat.endpointsByModel.get(GPT)!.map((e) => (e.tag === 'openai' ? { ...e, pricing: { ...e.pricing!, request: '0.01' } } : e)));
      const p = route({ catalog: cat, provider: { max_price: { request: '0.001' } } });
      expect(excluded(p, GPT, 'openai')).toBe('max_price');
      expect(onlyTags(p)).toContain('azure'); // no request fee = 0
    });
    it('nothing fits → 404 constraint_filtered mentioning max_price', () => {
      const p = route({ provider: { max_price: { prompt: 0.5 } } });
      expect(p.error).toMatchObject({ status: 404, code: 'constraint_filtered', excluded_by: ['max_price'] });
      expect(p.error?.message).toContain('max_price');
    });
    it('invalid limits → 400', () => {
      const p = route({ provider: { max_price: { prompt: 'cheap' } } });
      expect(p.error).toMatchObject({ status: 400, code: 'invalid_request' });
    });
  });

  describe('require_parameters', () => {
    it('drops endpoints missing a sent feature parameter; universal params are not checked', () => {
      const p = route({
        params: ['model', 'messages', 'stream', 'max_tokens', 'provider', 'temperature', 'tools'],
        provider: { require_parameters: true },
      });
      expect(onlyTags(p).sort()).toEqual(['azure', 'openai']);
      expect(excluded(p, GPT, 'cheapco')).toBe('require_parameters');
    });
    it('universal params alone never exclude anything', () => {
      const p = route({ params: ['model', 'messages', 'stream', 'stream_options', 'max_tokens', 'user', 'session_id', 'metadata'], provider: { require_parameters: true } });
      expect(p.attempts).toHaveLength(3);
    });
    it('nothing left → 404 listing the unsupported parameters', () => {
      const p = route({ models: [MISTRAL], params: ['messages', 'tools', 'logprobs'], provider: { require_parameters: true } });
      expect(p.error).toMatchObject({ status: 404, code: 'constraint_filtered', excluded_by: ['require_parameters'] });
      expect(p.error?.message).toBe('No endpoints found that support the requested parameters: tools, logprobs');
    });
  });

  describe('context length / max output', () => {
    it('prompt that does not fit context_length is dropped', () => {
      const p = route({ models: [LLAMA], estimatedPromptTokens: 10_000 });
      expect(excluded(p, LLAMA, 'together')).toBe('context_length'); // 8k context
      expect(onlyTags(p)).toContain('deepinfra');
    });
    it('max output above max_completion_tokens is dropped', () => {
      const p = route({ models: [LLAMA], maxOutputTokens: 3_000 });
      expect(excluded(p, LLAMA, 'deepinfra/turbo')).toBe('context_length'); // 2048 max output
      expect(onlyTags(p)).toContain('together'); // 4096
    });
    it('prompt + output must fit the context', () => {
      const p = route({ models: [LLAMA], estimatedPromptTokens: 6_000, maxOutputTokens: 4_000 });
      expect(excluded(p, LLAMA, 'together')).toBe('context_length'); // 10k > 8192
    });
    it('max_prompt_tokens is honoured', () => {
      const cat = catalog();
      cat.endpointsByModel.set(MISTRAL, cat.endpointsByModel.get(MISTRAL)!.map((e) => ({ ...e, max_prompt_tokens: 1000 })));
      const p = route({ models: [MISTRAL], catalog: cat, estimatedPromptTokens: 1001 });
      expect(p.error).toMatchObject({ code: 'constraint_filtered', excluded_by: ['context_length'] });
    });
  });
});

// ---------------------------------------------------------------------------
// Soft parameter filters
// ---------------------------------------------------------------------------

describe('soft parameter filters (without require_parameters)', () => {
  it('tools: when some endpoints support it, the others are dropped', () => {
    const p = route({ params: ['messages', 'tools'] });
    expect(onlyTags(p).sort()).toEqual(['azure', 'openai']);
    expect(excluded(p, GPT, 'cheapco')).toBe('unsupported_parameter');
  });
  it('tools: when none support it, all are kept', () => {
    const p = route({ models: [MISTRAL], params: ['messages', 'tools'] });
    expect(p.attempts).toHaveLength(2);
    expect(p.error).toBeUndefined();
  });
  it('response_format narrows further among tool-capable endpoints', () => {
    const p = route({ params: ['messages', 'tools', 'response_format'] });
    expect(onlyTags(p)).toEqual(['openai']);
    expect(excluded(p, GPT, 'azure')).toBe('unsupported_parameter');
  });
  it('soft filters are applied per model', () => {
    const p = route({ models: [LLAMA, MISTRAL], params: ['messages', 'tool_choice'] });
    expect(tags(p)).toEqual([`${LLAMA}|together`, `${MISTRAL}|deepinfra`, `${MISTRAL}|together`]);
  });
  it('non-soft params (e.g. temperature) are not filtered without require_parameters', () => {
    const p = route({ models: [MISTRAL], params: ['messages', 'logprobs'] });
    expect(p.attempts).toHaveLength(2);
  });
});

// ---------------------------------------------------------------------------
// Sorting
// ---------------------------------------------------------------------------

const throughputHealth: Record<string, EndpointHealth> = {
  [`${LLAMA}|together`]: { throughput: { p50: 200 }, latencyMs: { p50: 900 } },
  [`${LLAMA}|deepinfra`]: { throughput: { p50: 50 }, latencyMs: { p50: 300 } },
  [`${LLAMA}|deepinfra/turbo`]: { throughput: { p50: 120 }, latencyMs: null },
  // cheapco: no stats
};

describe('sort', () => {
  it('price: prompt+completion ascending', () => {
    const p = route({ models: [LLAMA], provider: { sort: 'price' } });
    expect(onlyTags(p)).toEqual(['cheapco', 'deepinfra/turbo', 'deepinfra', 'together']);
    expect(p.strategy).toBe('sort:price');
  });
  it('price: unknown price last', () => {
    const p = route({ models: [MISTRAL], provider: { sort: 'price' } });
    expect(onlyTags(p)).toEqual(['deepinfra', 'together']);
  });
  it('throughput: p50 descending, unknown last', () => {
    const p = route({ models: [LLAMA], provider: { sort: 'throughput' }, healthBy: throughputHealth });
    expect(onlyTags(p)).toEqual(['together', 'deepinfra/turbo', 'deepinfra', 'cheapco']);
    expect(p.strategy).toBe('sort:throughput');
  });
  it('latency: p50 ascending, unknown last (ties by price)', () => {
    const p = route({ models: [LLAMA], provider: { sort: { by: 'latency' } }, healthBy: throughputHealth });
    expect(onlyTags(p)).toEqual(['deepinfra', 'together', 'cheapco', 'deepinfra/turbo']);
    expect(p.strategy).toBe('sort:latency');
  });
  it('workspace defaultSort applies when the request has no sort; the request sort wins', () => {
    const d = route({ models: [LLAMA], defaultSort: 'throughput', healthBy: throughputHealth });
    expect(onlyTags(d)[0]).toBe('together');
    expect(d.strategy).toBe('sort:throughput');
    const r = route({ models: [LLAMA], defaultSort: 'throughput', provider: { sort: 'price' }, healthBy: throughputHealth });
    expect(onlyTags(r)[0]).toBe('cheapco');
  });
  it('exacto has no quality data: falls back to the default strategy', () => {
    const p = route({ models: [LB], provider: { sort: 'exacto' }, rng: () => 0.99 });
    expect(p.strategy).toBe('direct');
    // weighted pick still happens (rng 0.99 → last of the cheap tier)
    expect(onlyTags(p)[0]).toBe('openai');
  });

  describe('partition', () => {
    it("'model' (default) sorts within each model and keeps model order", () => {
      const p = route({ models: [GPT, LLAMA], provider: { sort: 'price' } });
      expect(tags(p)).toEqual([
        'cheapco', 'openai', 'azure',
        `${LLAMA}|cheapco`, `${LLAMA}|deepinfra/turbo`, `${LLAMA}|deepinfra`, `${LLAMA}|together`,
      ]);
    });
    it("'none' sorts all endpoints of all models together", () => {
      const p = route({ models: [GPT, LLAMA], provider: { sort: { by: 'price', partition: 'none' } } });
      expect(tags(p)).toEqual([
        `${LLAMA}|cheapco`, `${LLAMA}|deepinfra/turbo`, `${LLAMA}|deepinfra`, `${LLAMA}|together`,
        'cheapco', 'openai', 'azure',
      ]);
    });
    it('deprecated route: sort → partition none', () => {
      const prefs = applyDeprecatedRoute({ sort: 'price' }, 'sort');
      const p = route({ models: [GPT, LLAMA], provider: prefs });
      expect(p.attempts[0].model).toBe(LLAMA);
    });
  });
});

// ---------------------------------------------------------------------------
// order / allow_fallbacks
// ---------------------------------------------------------------------------

describe('order and allow_fallbacks', () => {
  it('order providers first, in order; the rest follow by price', () => {
    const p = route({ models: [LLAMA], provider: { order: ['together', 'deepinfra/turbo', 'absent'] } });
    expect(onlyTags(p)).toEqual(['together', 'deepinfra/turbo', 'cheapco', 'deepinfra']);
    expect(p.strategy).toBe('order');
  });
  it('a base slug in order brings all of its tags (cheapest first)', () => {
    const p = route({ models: [LLAMA], provider: { order: ['deepinfra'] } });
    expect(onlyTags(p)).toEqual(['deepinfra/turbo', 'deepinfra', 'cheapco', 'together']);
  });
  it('with a sort, the rest follow the sort', () => {
    const p = route({ models: [LLAMA], provider: { order: ['deepinfra'], sort: 'throughput' }, healthBy: throughputHealth });
    expect(onlyTags(p)).toEqual(['deepinfra/turbo', 'deepinfra', 'together', 'cheapco']);
  });
  it('allow_fallbacks=false with order: only the order providers', () => {
    const p = route({ models: [LLAMA], provider: { order: ['together', 'deepinfra/turbo'], allow_fallbacks: false } });
    expect(onlyTags(p)).toEqual(['together', 'deepinfra/turbo']);
    expect(excluded(p, LLAMA, 'deepinfra')).toBe('allow_fallbacks');
  });
  it('allow_fallbacks=false with order matching nothing → 404 constraint_filtered', () => {
    const p = route({ provider: { order: ['together'], allow_fallbacks: false } });
    expect(p.error).toMatchObject({ status: 404, code: 'constraint_filtered', excluded_by: ['allow_fallbacks'] });
    expect(p.error?.message).toContain('allow_fallbacks');
  });
  it('allow_fallbacks=false without order: only the chosen endpoint per model; fallback models still apply', () => {
    const p = route({ models: [LLAMA, MISTRAL], provider: { allow_fallbacks: false, sort: 'price' } });
    expect(tags(p)).toEqual([`${LLAMA}|cheapco`, `${MISTRAL}|deepinfra`]);
    expect(excluded(p, LLAMA, 'deepinfra')).toBe('allow_fallbacks');
  });
});

// ---------------------------------------------------------------------------
// Health
// ---------------------------------------------------------------------------

describe('health', () => {
  it('an endpoint that failed within the window moves to the end of its model list (not dropped)', () => {
    const p = route({ models: [LLAMA, MISTRAL], provider: { sort: 'price' }, healthBy: { [`${LLAMA}|cheapco`]: { lastFailureAt: NOW - 5_000, consecutiveFailures: 2 } } });
    expect(tags(p)).toEqual([
      `${LLAMA}|deepinfra/turbo`, `${LLAMA}|deepinfra`, `${LLAMA}|together`, `${LLAMA}|cheapco`,
      `${MISTRAL}|deepinfra`, `${MISTRAL}|together`,
    ]);
    expect(p.considered.find((c) => c.model === LLAMA && c.tag === 'cheapco')).toMatchObject({ unhealthy: true });
    expect(excluded(p, LLAMA, 'cheapco')).toBeUndefined();
  });
  it('failures older than the window do not count; the window is configurable', () => {
    const h = { [`${LLAMA}|cheapco`]: { lastFailureAt: NOW - 31_000, consecutiveFailures: 1 } };
    expect(onlyTags(route({ models: [LLAMA], provider: { sort: 'price' }, healthBy: h }))[0]).toBe('cheapco');
    expect(onlyTags(route({ models: [LLAMA], provider: { sort: 'price' }, healthBy: h, unhealthyWindowMs: 60_000 }))[0]).toBe('deepinfra/turbo');
  });
  it('consecutiveFailures 0 (recovered) counts as healthy', () => {
    expect(isUnhealthy({ lastFailureAt: NOW - 1000, consecutiveFailures: 0 }, NOW, 30_000)).toBe(false);
    expect(isUnhealthy({ lastFailureAt: NOW - 1000 }, NOW, 30_000)).toBe(true);
    expect(isUnhealthy(undefined, NOW, 30_000)).toBe(false);
  });
  it('unhealthy ones are ordered by fewest consecutive failures, then oldest failure', () => {
    const p = route({
      models: [LLAMA],
      provider: { sort: 'price' },
      healthBy: {
        [`${LLAMA}|cheapco`]: { lastFailureAt: NOW - 1_000, consecutiveFailures: 5 },
        [`${LLAMA}|deepinfra/turbo`]: { lastFailureAt: NOW - 1_000, consecutiveFailures: 1 },
        [`${LLAMA}|deepinfra`]: { lastFailureAt: NOW - 9_000, consecutiveFailures: 1 },
      },
    });
    expect(onlyTags(p)).toEqual(['together', 'deepinfra', 'deepinfra/turbo', 'cheapco']);
  });
  it('an unhealthy order endpoint also goes to the very end', () => {
    const p = route({ models: [LLAMA], provider: { order: ['together'] }, healthBy: { [`${LLAMA}|together`]: { lastFailureAt: NOW - 1 } } });
    expect(onlyTags(p)).toEqual(['cheapco', 'deepinfra/turbo', 'deepinfra', 'together']);
  });
  it('every remaining endpoint unhealthy → 503 all_unhealthy with a retry hint', () => {
    const p = route({ healthBy: { openai: { lastFailureAt: NOW - 10_000 }, azure: { lastFailureAt: NOW - 20_000 }, cheapco: { lastFailureAt: NOW - 1_000 } } });
    expect(p.attempts).toEqual([]);
    expect(p.error).toMatchObject({ status: 503, code: 'all_unhealthy', retry_after_ms: 10_000 });
    expect(p.considered.every((c) => c.unhealthy)).toBe(true);
  });
  it('one healthy endpoint among unhealthy ones (any model) is enough: no 503', () => {
    const p = route({ models: [GPT, MISTRAL], healthBy: { openai: { lastFailureAt: NOW }, azure: { lastFailureAt: NOW }, cheapco: { lastFailureAt: NOW } } });
    expect(p.error).toBeUndefined();
    expect(p.attempts).toHaveLength(5);
    expect(p.attempts.slice(0, 3).every((a) => a.model === GPT)).toBe(true); // fallback model stays after
  });
});

// ---------------------------------------------------------------------------
// Soft preferences
// ---------------------------------------------------------------------------

describe('preferred_min_throughput / preferred_max_latency', () => {
  it('endpoints missing the throughput cutoff move last; unknown stats are not penalised', () => {
    const p = route({ models: [LLAMA], provider: { sort: 'price', preferred_min_throughput: 100 }, healthBy: throughputHealth });
    // deepinfra (50 tok/s) misses; cheapco has no stats → kept in place
    expect(onlyTags(p)).toEqual(['cheapco', 'deepinfra/turbo', 'together', 'deepinfra']);
    expect(excluded(p, LLAMA, 'deepinfra')).toBeUndefined();
  });
  it('latency cutoff is in seconds against TTFT in ms; percentile objects work', () => {
    const p = route({ models: [LLAMA], provider: { sort: 'price', preferred_max_latency: { p50: 0.5 } }, healthBy: throughputHealth });
    // together 900ms > 500ms misses
    expect(onlyTags(p)).toEqual(['cheapco', 'deepinfra/turbo', 'deepinfra', 'together']);
    const q = route({ models: [LLAMA], provider: { sort: 'price', preferred_min_throughput: { p90: 1000 } }, healthBy: throughputHealth });
    expect(onlyTags(q)[0]).toBe('cheapco'); // no p90 stats anywhere → nobody penalised
  });
  it('can promote a fallback model when the primary has no endpoint meeting them', () => {
    const p = route({
      models: [GPT, MISTRAL],
      provider: { preferred_min_throughput: 100 },
      healthBy: { openai: { throughput: { p50: 10 } }, azure: { throughput: { p50: 20 } }, cheapco: { throughput: { p50: 30 } } },
    });
    expect(p.attempts[0].model).toBe(MISTRAL);
    expect(p.attempts.map((a) => a.model)).toEqual([MISTRAL, MISTRAL, GPT, GPT, GPT]);
    expect(p.strategy).toBe('fallback');
  });
});

// ---------------------------------------------------------------------------
// Sticky
// ---------------------------------------------------------------------------

describe('sticky endpoint', () => {
  it('goes first when healthy and allowed', () => {
    const p = route({ models: [LLAMA], provider: { sort: 'price' }, stickyEndpoint: { model: LLAMA, tag: 'together' } });
    expect(onlyTags(p)).toEqual(['together', 'cheapco', 'deepinfra/turbo', 'deepinfra']);
    expect(p.strategy).toBe('sticky');
  });
  it('is ignored when unhealthy', () => {
    const p = route({ models: [LLAMA], provider: { sort: 'price' }, stickyEndpoint: { model: LLAMA, tag: 'together' }, healthBy: { [`${LLAMA}|together`]: { lastFailureAt: NOW - 10 } } });
    expect(onlyTags(p)[0]).toBe('cheapco');
    expect(p.strategy).toBe('sort:price');
  });
  it('is ignored when no longer allowed', () => {
    const p = route({ models: [LLAMA], provider: { ignore: ['together'] }, stickyEndpoint: { model: LLAMA, tag: 'together' } });
    expect(onlyTags(p)).not.toContain('together');
    expect(p.strategy).toBe('direct');
  });
  it('with allow_fallbacks=false it is the single endpoint of its model', () => {
    const p = route({ models: [LLAMA], provider: { allow_fallbacks: false }, stickyEndpoint: { model: LLAMA, tag: 'deepinfra' } });
    expect(onlyTags(p)).toEqual(['deepinfra']);
  });
  it('a sticky endpoint of a fallback model moves to the front of that model only', () => {
    const p = route({ models: [GPT, MISTRAL], stickyEndpoint: { model: MISTRAL, tag: 'together' } });
    expect(p.attempts[0].model).toBe(GPT);
    expect(tags(p).slice(3)).toEqual([`${MISTRAL}|together`, `${MISTRAL}|deepinfra`]);
  });
});

// ---------------------------------------------------------------------------
// Default strategy: weighted pick by 1/price²
// ---------------------------------------------------------------------------

describe('default strategy (load balancing)', () => {
  // LB blended prices ($/M): together 1, deepinfra 1.5, openai 2, azure 3.
  // Cheap tier = within 2× the cheapest → together, deepinfra, openai (azure 3 > 2).
  // Weights 1/p²: 1, 1/2.25 = 0.4444, 1/4 = 0.25 → total 1.6944
  // Probabilities: together 0.5902, deepinfra 0.2623, openai 0.1475, azure 0.
  it('first endpoint drawn from the cheap tier; the rest by price', () => {
    expect(onlyTags(route({ models: [LB], rng: () => 0 }))).toEqual(['together', 'deepinfra', 'openai', 'azure']);
    // r = 0.7 × 1.6944 = 1.186 → past together (1) → deepinfra
    expect(onlyTags(route({ models: [LB], rng: () => 0.7 }))).toEqual(['deepinfra', 'together', 'openai', 'azure']);
    // r = 0.95 × 1.6944 = 1.61 → past 1.4444 → openai
    expect(onlyTags(route({ models: [LB], rng: () => 0.95 }))).toEqual(['openai', 'together', 'deepinfra', 'azure']);
    expect(route({ models: [LB] }).strategy).toBe('direct');
  });

  it('is deterministic for a seeded rng', () => {
    const a = Array.from({ length: 3 }, () => {
      const rng = seeded(42);
      return Array.from({ length: 20 }, () => onlyTags(route({ models: [LB], rng }))[0]).join(',');
    });
    expect(new Set(a).size).toBe(1);
  });

  it('distribution follows 1/price² over many draws and never picks outside the cheap tier', () => {
    const rng = seeded(7);
    const counts: Record<string, number> = { together: 0, deepinfra: 0, openai: 0, azure: 0 };
    const N = 20_000;
    for (let i = 0; i < N; i++) counts[onlyTags(route({ models: [LB], rng }))[0]]++;
    const total = 1 + 1 / 2.25 + 1 / 4;
    expect(counts.together / N).toBeCloseTo(1 / total, 1);
    expect(Math.abs(counts.together / N - 1 / total)).toBeLessThan(0.015);
    expect(Math.abs(counts.deepinfra / N - 1 / 2.25 / total)).toBeLessThan(0.015);
    expect(Math.abs(counts.openai / N - 1 / 4 / total)).toBeLessThan(0.015);
    expect(counts.azure).toBe(0);
  });

  it('unhealthy endpoints are not drawn; unknown-price endpoints go after priced ones', () => {
    const p = route({ models: [LB], rng: () => 0, healthBy: { [`${LB}|together`]: { lastFailureAt: NOW } } });
    expect(onlyTags(p)).toEqual(['deepinfra', 'openai', 'azure', 'together']);
    const m = route({ models: [MISTRAL], rng: () => 0.99 });
    expect(onlyTags(m)).toEqual(['deepinfra', 'together']);
  });

  it('ignores load balancing when order or sort is given (no rng use)', () => {
    let calls = 0;
    const rng = () => {
      calls++;
      return 0.9;
    };
    route({ models: [LB], rng, provider: { sort: 'price' } });
    route({ models: [LB], rng, provider: { order: ['azure'] } });
    expect(calls).toBe(0);
  });
});

// ---------------------------------------------------------------------------
// provider-prefs helpers
// ---------------------------------------------------------------------------

describe('provider preference helpers', () => {
  it('route → partition mapping', () => {
    expect(routeToPartition('fallback')).toBe('model');
    expect(routeToPartition('sort')).toBe('none');
    expect(routeToPartition(undefined)).toBeUndefined();
    expect(applyDeprecatedRoute({ sort: 'latency' }, 'sort')?.sort).toEqual({ by: 'latency', partition: 'none' });
    // an explicit partition wins over route
    expect(applyDeprecatedRoute({ sort: { by: 'price', partition: 'model' } }, 'sort')?.sort).toEqual({ by: 'price', partition: 'model' });
    expect(applyDeprecatedRoute(undefined, 'fallback')?.sort).toEqual({ by: null, partition: 'model' });
  });
  it('normalizeSort: request sort wins, defaultSort fills in, partition defaults to model', () => {
    expect(normalizeSort('price', 'latency')).toEqual({ by: 'price', partition: 'model' });
    expect(normalizeSort(undefined, 'latency')).toEqual({ by: 'latency', partition: 'model' });
    expect(normalizeSort({ by: null, partition: 'none' }, 'throughput')).toEqual({ by: 'throughput', partition: 'none' });
    expect(normalizeSort(null, null)).toBeNull();
  });
  it('parsePriceLimit accepts numbers and numeric strings', () => {
    expect(parsePriceLimit('2.5')).toBe(2.5);
    expect(parsePriceLimit(3)).toBe(3);
    expect(parsePriceLimit(undefined)).toBeUndefined();
    expect(parsePriceLimit('x')).toBeNaN();
    expect(parsePriceLimit(-1)).toBeNaN();
  });
  it('validateProviderPreferences flags malformed fields', () => {
    expect(validateProviderPreferences({ order: ['a'], sort: { by: 'price', partition: 'none' }, max_price: { prompt: '1' } })).toEqual([]);
    expect(validateProviderPreferences({ sort: 'fastest' })).toHaveLength(1);
    expect(validateProviderPreferences({ max_price: { prompt: 'cheap' } })).toHaveLength(1);
    expect(validateProviderPreferences({ bogus: 1 })).toHaveLength(1);
    expect(validateProviderPreferences({ data_collection: 'maybe', zdr: 'yes' })).toHaveLength(2);
  });
});

// ---------------------------------------------------------------------------
// BYOK (stage 8, core/routing/byok.ts; docs/byok.md)
// ---------------------------------------------------------------------------

describe('BYOK credentials', () => {
  type Cred = { id: string; provider: string; isFallback?: boolean; alwaysUse?: boolean; models?: string[] };
  const byok = (creds: Cred[]) => ({
    has: (p: ProviderDef) => creds.some((c) => c.provider === p.slug),
    credentials: (p: ProviderDef, m: string) =>
      creds.filter((c) => c.provider === p.slug && (!c.models || c.models.includes(m))).map((c) => ({ id: c.id, provider: c.provider, isFallback: c.isFallback ?? false, alwaysUse: c.alwaysUse ?? false })),
  });
  const labels = (p: RoutePlan) => p.attempts.map((a) => (a.byok ? `${a.endpoint.tag}@${a.byok.id}` : a.endpoint.tag));

  it('prioritized credentials first (plan order, then their order), the shared endpoints, then fallback credentials', () => {
    const p = route({ provider: { only: ['openai', 'azure'] }, byok: byok([{ id: 'az1', provider: 'azure' }, { id: 'oa-fb', provider: 'openai', isFallback: true }, { id: 'az2', provider: 'azure' }]) });
    expect(labels(p)).toEqual(['azure@az1', 'azure@az2', 'openai', 'azure', 'openai@oa-fb']);
  });

  it('always_use drops the shared endpoint of that provider only', () => {
    const p = route({ provider: { only: ['openai', 'azure'] }, byok: byok([{ id: 'az', provider: 'azure', alwaysUse: true }]) });
    expect(labels(p)).toEqual(['azure@az', 'openai']);
  });

  it("a credential makes a provider without the operator's key available, for its allowed models only", () => {
    const p = route({ models: [LLAMA], provider: { only: ['nokey'] }, byok: byok([{ id: 'mine', provider: 'nokey' }]) });
    expect(labels(p)).toEqual(['nokey@mine']);
    expect(route({ models: [LLAMA], provider: { only: ['nokey'] } }).error).toMatchObject({ status: 404 });
    const other = route({ models: [LLAMA], provider: { only: ['nokey'] }, byok: byok([{ id: 'mine', provider: 'nokey', models: [GPT] }]) });
    expect(other.attempts).toEqual([]);
    expect(other.error).toMatchObject({ status: 404 });
  });

  it('data-policy filters run first: a credential never brings back an excluded endpoint', () => {
    const p = route({ provider: { zdr: true }, byok: byok([{ id: 'oa', provider: 'openai' }, { id: 'az', provider: 'azure' }]) });
    expect(labels(p)).toEqual(['azure@az', 'azure']);
  });
});
