/** Invariants of the shipped chat catalog (src/catalog/providers.yaml and chat.yaml) and its prices. */
import { describe, expect, it } from 'vitest';
import type { EndpointDef, ModelDef, Pricing } from '../../src/core/catalog-types.js';
import { shippedCatalog } from '../../src/services/shipped-catalog.js';
import { shippedFile } from './files.js';

const chat = shippedFile('chat.yaml');
const DEFAULT_PROVIDERS = chat.providers;
const DEFAULT_MODELS = chat.models;
const DEFAULT_ENDPOINTS = chat.endpoints;

const ID_RE = /^[a-z0-9-]+\/[a-z0-9.:-]+$/;
const DECIMAL_RE = /^\d+(\.\d+)?$/;
const ISO_DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** Exact comparison of two plain decimal strings: -1, 0 or 1. */
function compareDecimal(a: string, b: string): number {
  const [ai, af = ''] = a.split('.');
  const [bi, bf = ''] = b.split('.');
  const scale = Math.max(af.length, bf.length);
  const x = BigInt(ai + af.padEnd(scale, '0'));
  const y = BigInt(bi + bf.padEnd(scale, '0'));
  return x < y ? -1 : x > y ? 1 : 0;
}

function priceFields(p: Pricing): [string, string][] {
  return Object.entries(p).filter((e): e is [string, string] => typeof e[1] === 'string');
}

const modelsById = new Map(DEFAULT_MODELS.map((m) => [m.id, m]));
const providersBySlug = new Map(DEFAULT_PROVIDERS.map((p) => [p.slug, p]));
const endpointsOf = (m: ModelDef): EndpointDef[] => DEFAULT_ENDPOINTS.filter((e) => e.model === m.id);
const label = (e: EndpointDef) => `${e.model} @ ${e.tag}`;

/** The items an invariant applies to; the filter must match something, or the invariant checks nothing. */
function some<T>(items: readonly T[], filter: (x: T) => boolean, what: string): T[] {
  const matched = items.filter(filter);
  expect(matched.length, `no ${what} in the catalog: the invariant checks nothing`).toBeGreaterThan(0);
  return matched;
}

describe('default providers', () => {
  it('has unique slugs and https base URLs without a trailing slash', () => {
    expect(providersBySlug.size).toBe(DEFAULT_PROVIDERS.length);
    for (const p of DEFAULT_PROVIDERS) {
      const url = new URL(p.baseUrl);
      expect(url.protocol, p.slug).toBe('https:');
      expect(p.baseUrl.endsWith('/'), p.slug).toBe(false);
    }
  });

  it('ships the expected hosted providers with their protocol, URL and key variable', () => {
    const expected: [string, string, string, string][] = [
      ['openai', 'openai', 'https://api.openai.com/v1', 'OPENAI_API_KEY'],
      ['openai-responses', 'openai-responses', 'https://api.openai.com/v1', 'OPENAI_API_KEY'],
      ['anthropic', 'anthropic', 'https://api.anthropic.com/v1', 'ANTHROPIC_API_KEY'],
      [
        'google-ai-studio',
        'google',
        'https://generativelanguage.googleapis.com/v1beta',
        'GEMINI_API_KEY',
      ],
      ['groq', 'openai', 'https://api.groq.com/openai/v1', 'GROQ_API_KEY'],
      ['together', 'openai', 'https://api.together.xyz/v1', 'TOGETHER_API_KEY'],
      ['fireworks', 'openai', 'https://api.fireworks.ai/inference/v1', 'FIREWORKS_API_KEY'],
      ['deepseek', 'openai', 'https://api.deepseek.com/v1', 'DEEPSEEK_API_KEY'],
      ['mistral', 'openai', 'https://api.mistral.ai/v1', 'MISTRAL_API_KEY'],
      ['xai', 'openai', 'https://api.x.ai/v1', 'XAI_API_KEY'],
      ['deepinfra', 'openai', 'https://api.deepinfra.com/v1/openai', 'DEEPINFRA_API_KEY'],
    ];
    for (const [slug, protocol, baseUrl, apiKeyEnv] of expected) {
      const p = providersBySlug.get(slug);
      expect(p, slug).toBeDefined();
      expect(p?.protocol, slug).toBe(protocol);
      expect(p?.baseUrl, slug).toBe(baseUrl);
      expect(p?.apiKeyEnv, slug).toBe(apiKeyEnv);
    }
  });

  it('contains only keyed hosted providers (local no-auth servers come from the config file)', () => {
    for (const p of DEFAULT_PROVIDERS) {
      expect(p.noAuth ?? false, p.slug).toBe(false);
      expect(p.apiKey, p.slug).toBeUndefined();
      expect(p.apiKeyEnv, p.slug).toMatch(/^[A-Z][A-Z0-9_]*_API_KEY$/);
    }
  });

  it('declares a coherent data policy and metadata', () => {
    // Zero data retention means nothing is kept, let alone trained on.
    for (const p of some(DEFAULT_PROVIDERS, (x) => x.dataPolicy.zdr, 'zero-data-retention provider')) {
      expect(p.dataPolicy.retainsPrompts, p.slug).toBe(false);
      expect(p.dataPolicy.training, p.slug).toBe(false);
    }
    for (const p of DEFAULT_PROVIDERS) {
      expect(typeof p.dataPolicy.training, p.slug).toBe('boolean');
      expect(p.headquarters, p.slug).toMatch(/^[A-Z]{2}$/);
      expect(p.datacenters?.length, p.slug).toBeGreaterThan(0);
      for (const url of [p.privacyPolicyUrl, p.termsOfServiceUrl, p.statusPageUrl]) {
        expect(url, p.slug).toMatch(/^https:\/\//);
      }
    }
    // Spot checks against the providers' published API policies.
    expect(providersBySlug.get('openai')?.dataPolicy).toEqual({
      training: false,
      retainsPrompts: true,
      zdr: false,
    });
    expect(providersBySlug.get('fireworks')?.dataPolicy.zdr).toBe(true);
    expect(providersBySlug.get('deepseek')?.dataPolicy.training).toBe(true);
  });
});

describe('default models', () => {
  it('has well-formed, unique ids and canonical slugs', () => {
    expect(modelsById.size).toBe(DEFAULT_MODELS.length);
    for (const m of DEFAULT_MODELS) {
      expect(m.id).toMatch(ID_RE);
      expect(m.canonical_slug, m.id).toMatch(ID_RE);
      expect(m.canonical_slug.split('/')[0], m.id).toBe(m.id.split('/')[0]);
    }
  });

  it('covers the popular families', () => {
    for (const id of [
      'openai/gpt-4o',
      'openai/gpt-4o-mini',
      'openai/gpt-4.1',
      'openai/gpt-5',
      'openai/gpt-5-mini',
      'openai/o3',
      'anthropic/claude-sonnet-4.6',
      'anthropic/claude-opus-4.6',
      'anthropic/claude-haiku-4.5',
      'google/gemini-2.5-pro',
      'google/gemini-2.5-flash',
      'google/gemini-2.5-flash-lite',
      'meta-llama/llama-3.3-70b-instruct',
      'meta-llama/llama-4-maverick',
      'deepseek/deepseek-chat',
      'deepseek/deepseek-r1-0528',
      'mistralai/mistral-large-2512',
      'qwen/qwen3-235b-a22b-2507',
      'x-ai/grok-4.3',
    ]) {
      expect(modelsById.has(id), id).toBe(true);
    }
    expect(DEFAULT_MODELS.length).toBeGreaterThanOrEqual(20);
  });

  it('has an architecture whose modality string matches its modality lists', () => {
    for (const m of DEFAULT_MODELS) {
      const a = m.architecture;
      expect(a.input_modalities.length, m.id).toBeGreaterThan(0);
      expect(a.output_modalities.length, m.id).toBeGreaterThan(0);
      expect(a.input_modalities, m.id).toContain('text');
      expect(new Set(a.input_modalities).size, m.id).toBe(a.input_modalities.length);
      expect(a.modality, m.id).toBe(
        `${a.input_modalities.join('+')}->${a.output_modalities.join('+')}`,
      );
      expect(a.tokenizer, m.id).not.toBe('');
      expect(a.instruct_type, m.id).toBeNull();
    }
  });

  it('has plausible dates, lengths and descriptions', () => {
    const min = Date.UTC(2023, 0, 1) / 1000;
    const max = Date.UTC(2027, 0, 1) / 1000;
    for (const m of DEFAULT_MODELS) {
      expect(Number.isInteger(m.created), m.id).toBe(true);
      expect(m.created, m.id).toBeGreaterThan(min);
      expect(m.created, m.id).toBeLessThan(max);
      expect(Number.isInteger(m.context_length) && m.context_length > 0, m.id).toBe(true);
      expect(m.name, m.id).not.toBe('');
      expect(m.description, m.id).toMatch(/^\S[^\n]*\.$/);
    }
    for (const m of some(DEFAULT_MODELS, (x) => x.expiration_date !== null, 'model with an expiration date')) {
      expect(m.expiration_date, m.id).toMatch(ISO_DATE_RE);
      // Models already shut down must not ship (catalog checked 2026-11).
      expect(m.expiration_date! > '2026-11-30', m.id).toBe(true);
    }
    for (const m of some(DEFAULT_MODELS, (x) => x.knowledge_cutoff !== null, 'model with a knowledge cutoff')) expect(m.knowledge_cutoff, m.id).toMatch(ISO_DATE_RE);
  });

  it('describes reasoning coherently', () => {
    const reasoning = some(DEFAULT_MODELS, (x) => x.reasoning !== null, 'reasoning model');
    for (const m of reasoning) expect(new Set(m.reasoning!.supported_efforts).size, m.id).toBe(m.reasoning!.supported_efforts.length);
    for (const m of some(reasoning, (x) => x.reasoning!.mandatory, 'model with mandatory reasoning')) expect(m.reasoning!.default_enabled, m.id).toBe(true);
    for (const m of some(reasoning, (x) => x.reasoning!.default_effort !== null, 'model with a default effort')) expect(m.reasoning!.supported_efforts, m.id).toContain(m.reasoning!.default_effort);
    expect(modelsById.get('openai/o3')?.reasoning?.mandatory).toBe(true);
    expect(modelsById.get('openai/gpt-4o')?.reasoning).toBeNull();
  });

  it('every model has at least one endpoint', () => {
    for (const m of DEFAULT_MODELS) {
      expect(endpointsOf(m).length, m.id).toBeGreaterThan(0);
    }
  });
});

describe('default endpoints', () => {
  it('references existing models and providers', () => {
    for (const e of DEFAULT_ENDPOINTS) {
      expect(modelsById.has(e.model), label(e)).toBe(true);
      expect(providersBySlug.has(e.provider), label(e)).toBe(true);
    }
  });

  it('has tags of the form <provider> or <provider>/<variant>, unique per model', () => {
    const seen = new Set<string>();
    for (const e of DEFAULT_ENDPOINTS) {
      expect(e.tag === e.provider || e.tag.startsWith(`${e.provider}/`), label(e)).toBe(true);
      expect(e.tag, label(e)).toMatch(/^[a-z0-9-]+(\/[a-z0-9.-]+)?$/);
      const key = `${e.model}\u0000${e.tag}`;
      expect(seen.has(key), label(e)).toBe(false);
      seen.add(key);
      expect(e.upstreamModel.trim(), label(e)).not.toBe('');
    }
  });

  it('prices every endpoint with non-negative plain decimals (no exponent)', () => {
    for (const e of DEFAULT_ENDPOINTS) {
      expect(e.pricing, label(e)).not.toBeNull();
      const pricing = e.pricing!;
      for (const [field, value] of priceFields(pricing)) {
        expect(value, `${label(e)} ${field}`).toMatch(DECIMAL_RE);
        const n = Number(value);
        expect(Number.isFinite(n) && n >= 0, `${label(e)} ${field}`).toBe(true);
        // Per-token prices: anything ≥ $0.001/token ($1000/M) is a unit mistake.
        expect(n, `${label(e)} ${field}`).toBeLessThan(0.001);
      }
      expect(Number(pricing.prompt), label(e)).toBeGreaterThan(0);
      expect(Number(pricing.completion), label(e)).toBeGreaterThan(0);
      // List prices: no discount (the schema bounds a discount to 0..1 where an operator sets one).
      expect(pricing.discount, label(e)).toBeUndefined();
    }
  });

  it('prices cache reads at or below, and cache writes at or above, the prompt price', () => {
    for (const e of some(DEFAULT_ENDPOINTS, (x) => x.pricing?.input_cache_read !== undefined, 'cache-read price')) {
      expect(compareDecimal(e.pricing!.input_cache_read!, e.pricing!.prompt), label(e)).toBeLessThanOrEqual(0);
    }
    for (const e of some(DEFAULT_ENDPOINTS, (x) => x.pricing?.input_cache_write !== undefined, 'cache-write price')) {
      expect(compareDecimal(e.pricing!.input_cache_write!, e.pricing!.prompt), label(e)).toBeGreaterThanOrEqual(0);
    }
  });

  it('applies the published Anthropic cache multipliers (write 1.25×)', () => {
    for (const e of some(DEFAULT_ENDPOINTS, (x) => x.provider === 'anthropic', 'Anthropic endpoint')) {
      const p = e.pricing!;
      expect(p.input_cache_write, label(e)).toBeDefined();
      expect(Number(p.input_cache_write) / Number(p.prompt), label(e)).toBeCloseTo(1.25, 9);
      expect(p.input_cache_read, label(e)).toBeDefined();
    }
  });

  it('matches a few list prices exactly', () => {
    const find = (model: string, tag: string) =>
      DEFAULT_ENDPOINTS.find((e) => e.model === model && e.tag === tag)?.pricing;
    expect(find('openai/gpt-4o-mini', 'openai')).toEqual({
      prompt: '0.00000015',
      completion: '0.0000006',
      input_cache_read: '0.000000075',
    });
    expect(find('anthropic/claude-sonnet-4.6', 'anthropic')).toEqual({
      prompt: '0.000003',
      completion: '0.000015',
      input_cache_read: '0.0000003',
      input_cache_write: '0.00000375',
    });
    expect(find('google/gemini-2.5-flash', 'google-ai-studio')?.prompt).toBe('0.0000003');
    // Codex's default model, over the Responses API (developers.openai.com/api/docs/models/gpt-6.1-sol).
    expect(find('openai/gpt-6.1-sol', 'openai-responses')).toEqual({
      prompt: '0.000002',
      completion: '0.00001',
      input_cache_read: '0.0000001',
      input_cache_write: '0.0000025',
    });
  });

  it('has consistent limits', () => {
    for (const e of DEFAULT_ENDPOINTS) {
      const m = modelsById.get(e.model)!;
      expect(Number.isInteger(e.context_length) && e.context_length > 0, label(e)).toBe(true);
      expect(e.context_length, label(e)).toBeLessThanOrEqual(m.context_length);
    }
    for (const e of some(DEFAULT_ENDPOINTS, (x) => x.max_completion_tokens !== null, 'completion cap')) {
      expect(e.max_completion_tokens, label(e)).toBeGreaterThan(0);
      expect(e.max_completion_tokens, label(e)).toBeLessThanOrEqual(e.context_length);
    }
    for (const e of some(DEFAULT_ENDPOINTS, (x) => x.max_prompt_tokens !== null, 'prompt cap')) {
      expect(e.max_prompt_tokens, label(e)).toBeGreaterThan(0);
      expect(e.max_prompt_tokens, label(e)).toBeLessThanOrEqual(e.context_length);
    }
  });

  it('has unique, realistic supported parameters', () => {
    for (const e of DEFAULT_ENDPOINTS) {
      const params = e.supported_parameters;
      expect(params.length, label(e)).toBeGreaterThan(0);
      expect(new Set(params).size, label(e)).toBe(params.length);
      expect(params, label(e)).toContain('max_tokens');
      const m = modelsById.get(e.model)!;
      const reasoningParams = params.some((p) => p === 'reasoning' || p === 'reasoning_effort');
      expect(reasoningParams, label(e)).toBe(m.reasoning !== null);
    }
    const openai = DEFAULT_ENDPOINTS.filter((e) => e.provider === 'openai' || e.provider === 'openai-responses');
    // OpenAI reasoning models take no sampling parameters.
    for (const e of some(openai, (x) => modelsById.get(x.model)!.reasoning !== null, 'OpenAI reasoning endpoint')) {
      expect(e.supported_parameters, label(e)).not.toContain('temperature');
      expect(e.supported_parameters, label(e)).not.toContain('top_p');
    }
    for (const e of some(openai, (x) => modelsById.get(x.model)!.reasoning === null, 'OpenAI non-reasoning endpoint')) {
      for (const p of ['temperature', 'logprobs', 'tools', 'response_format']) expect(e.supported_parameters, label(e)).toContain(p);
    }
  });

  it('flags moderation, quantization and implicit caching per provider', () => {
    // OpenAI's two providers (Chat Completions and the Responses API) are one company's endpoints: same flags.
    const isOpenAI = (x: EndpointDef) => x.provider === 'openai' || x.provider === 'openai-responses';
    const closed = new Set(['openai', 'openai-responses', 'anthropic', 'google-ai-studio', 'xai', 'mistral', 'deepseek']);
    for (const e of DEFAULT_ENDPOINTS) {
      expect(e.is_moderated, label(e)).toBe(isOpenAI(e) || e.provider === 'anthropic');
      expect(e.quantization, label(e)).toMatch(/^(unknown|fp4|int4|int8|fp6|fp8|fp16|bf16|fp32)$/);
    }
    for (const e of some(DEFAULT_ENDPOINTS, (x) => closed.has(x.provider), 'closed-model endpoint')) expect(e.quantization, label(e)).toBe('unknown');
    for (const e of some(DEFAULT_ENDPOINTS, (x) => x.supports_implicit_caching, 'implicit caching')) expect(e.pricing?.input_cache_read, label(e)).toBeDefined();
    for (const e of some(DEFAULT_ENDPOINTS, (x) => x.provider === 'anthropic', 'Anthropic endpoint')) expect(e.supports_implicit_caching, label(e)).toBe(false);
    for (const e of some(DEFAULT_ENDPOINTS, isOpenAI, 'OpenAI endpoint')) expect(e.supports_implicit_caching, label(e)).toBe(true);
  });

  it('serves open models from several providers with their own prices', () => {
    const llama = DEFAULT_ENDPOINTS.filter((e) => e.model === 'meta-llama/llama-3.3-70b-instruct');
    expect(new Set(llama.map((e) => e.provider)).size).toBeGreaterThanOrEqual(3);
    expect(new Set(llama.map((e) => e.pricing?.prompt)).size).toBeGreaterThan(1);
    const v4 = DEFAULT_ENDPOINTS.filter((e) => e.model === 'deepseek/deepseek-v4-pro');
    expect(v4.map((e) => e.provider)).toContain('deepseek');
  });
});

describe('shippedCatalog()', () => {
  it('holds every shipped file: the chat catalog and the speech, video, embeddings, transcription and rerank models', () => {
    const c = shippedCatalog();
    expect(c.providers).toEqual(DEFAULT_PROVIDERS);
    expect(c.models.slice(0, DEFAULT_MODELS.length)).toEqual(DEFAULT_MODELS);
    expect(c.endpoints.slice(0, DEFAULT_ENDPOINTS.length)).toEqual(DEFAULT_ENDPOINTS);
    for (const file of ['speech.yaml', 'video.yaml', 'embeddings.yaml', 'transcriptions.yaml', 'rerank.yaml']) {
      const { models, endpoints } = shippedFile(file);
      expect(models.length, file).toBeGreaterThan(0);
      for (const m of models) expect(c.models.some((x) => x.id === m.id), m.id).toBe(true);
      for (const e of endpoints) expect(c.endpoints.some((x) => x.model === e.model && x.tag === e.tag), label(e)).toBe(true);
    }
  });

  it('returns fresh copies that callers may mutate', () => {
    const a = shippedCatalog();
    a.providers[0].dataPolicy.training = true;
    a.models[0].architecture.input_modalities.push('audio');
    a.endpoints[0].supported_parameters.length = 0;
    a.endpoints[0].pricing!.prompt = '1';
    a.models.pop();

    const b = shippedCatalog();
    expect(b.providers).toEqual(DEFAULT_PROVIDERS);
    expect(b.models.slice(0, DEFAULT_MODELS.length)).toEqual(DEFAULT_MODELS);
    expect(b.endpoints.slice(0, DEFAULT_ENDPOINTS.length)).toEqual(DEFAULT_ENDPOINTS);
    expect(b.providers[0].dataPolicy.training).toBe(false);
    expect(b.endpoints[0].supported_parameters.length).toBeGreaterThan(0);
  });
});
