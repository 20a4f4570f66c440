/** The one catalog schema: the shipped files and the config file's catalog sections, every problem with its path. */
import { describe, expect, it } from 'vitest';
import { buildCatalog, CatalogError } from '../../src/core/catalog-build.js';
import { catalogFileProblems } from '../../src/core/catalog-schema.js';
import type { Catalog } from '../../src/core/catalog-types.js';
import { readCatalogFile, shippedCatalog, shippedCatalogPaths } from '../../src/services/shipped-catalog.js';

const empty: Catalog = { providers: [], models: [], endpoints: [] };
const provider = { slug: 'local', protocol: 'openai', base_url: 'http://127.0.0.1:8000/v1', no_auth: true };
const model = { id: 'acme/chat-1', name: 'Acme Chat' };

/** The problems buildCatalog reports for a file (fails when it reports none). */
function problems(file: Record<string, unknown>): string[] {
  try {
    buildCatalog(file, empty);
  } catch (err) {
    expect(err).toBeInstanceOf(CatalogError);
    return (err as CatalogError).problems;
  }
  throw new Error('expected a CatalogError');
}

describe('shipped catalog files', () => {
  it('each file passes the schema with no problem', () => {
    for (const path of shippedCatalogPaths()) expect(catalogFileProblems(readCatalogFile(path)), path).toEqual([]);
  });

  it('keeps every price exactly as written in the file: the same decimal string, no float round-trip', () => {
    const loaded = new Map(shippedCatalog().endpoints.map((e) => [`${e.model}|${e.tag}`, e]));
    let checked = 0;
    for (const path of shippedCatalogPaths()) {
      for (const raw of (readCatalogFile(path).endpoints ?? []) as Array<Record<string, unknown>>) {
        const e = loaded.get(`${raw.model}|${raw.tag ?? raw.provider}`)!;
        for (const [field, value] of Object.entries((raw.pricing ?? {}) as Record<string, unknown>)) {
          expect(typeof value, `${path} ${String(raw.model)} ${field}`).toBe('string');
          expect(e.pricing?.[field as 'prompt'], `${String(raw.model)} ${field}`).toBe(value);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    // Trailing zeros survive: Veo 3.1 is "0.40" per second, as the price list writes it.
    expect(loaded.get('google/veo-3.1|google-ai-studio')?.pricing?.video_second).toBe('0.40');
  });
});

describe('catalog sections of the config file', () => {
  it('reports every mistake of every entry with its path and the rule it breaks', () => {
    const p = problems({
      providers: [{ slug: 'Bad Slug', protocol: 'grpc', base_url: 'ftp://x', timeouts: { connect_ms: -1 }, headers: { a: 1 } }, { ...provider, data_policy: { zdr: 'yes' }, max_connections: 0, http2: 'yes' }],
      models: [{ id: 'no-slash' }, { ...model, context_length: 'big', reasoning: { mandatory: 'no' }, aliases: ['has space'] }],
      endpoints: [
        { model: 'acme/chat-1', provider: 'local', pricing: { prompt: '-1', completion: 1e-7 }, max_completion_tokens: 0, supported_parameters: 'all' },
        { model: 'acme/missing', provider: 'nowhere', pricing: { prompt: '0', completion: '0', bananas: '1' } },
      ],
    });
    expect(p).toEqual(
      expect.arrayContaining([
        'providers[0].slug must be a lowercase slug',
        'providers[0].protocol must be one of openai, anthropic, google, openai-responses, azure-openai, azure-openai-responses, bedrock, vertex, vertex-anthropic',
        'providers[0].base_url must be an http(s) URL',
        'providers[0].timeouts.connect_ms must be a positive integer (milliseconds)',
        'providers[0].headers must map header names to strings',
        'providers[1].data_policy.zdr must be true or false',
        'providers[1].max_connections must be an integer from 1 to 1000000 (connections to the provider at once)',
        'providers[1].http2 must be true or false',
        'models[0].id must look like author/slug',
        'models[1].context_length must be a non-negative integer (tokens)',
        'models[1].reasoning.mandatory must be true or false',
        'models[1].aliases must be a list of model ids: author/slug, or bare ids of letters, digits, dots, dashes, underscores and colons',
        'endpoints[0].pricing.prompt must be a non-negative decimal string like "0.0000025" (got "-1")',
        'endpoints[0].pricing.completion must be a non-negative decimal string like "0.0000025" (got 1e-7)',
        'endpoints[0].max_completion_tokens must be a positive integer or null',
        'endpoints[0].supported_parameters must be a list of strings',
        'endpoints[1].model must name a model of the catalog (got "acme/missing")',
        'endpoints[1].provider must name a configured provider (got "nowhere")',
      ]),
    );
    expect(p.some((x) => x.startsWith('endpoints[1].pricing.bananas is not a known field; known: prompt, completion,'))).toBe(true);
    expect(p).toHaveLength(19);
  });

  it('names unknown fields (a typo is an error, not a silently ignored key) and sections that are not lists', () => {
    expect(problems({ providers: [{ ...provider, base_ulr: 'http://x' }] })).toEqual([expect.stringMatching(/^providers\[0\]\.base_ulr is not a known field; known: slug, name, protocol, base_url, /)]);
    expect(problems({ models: { id: 'a/b' } })).toEqual(['models must be a list of mappings']);
    expect(problems({ endpoints: ['x'] })).toEqual(['endpoints must be a list of mappings']);
    expect(problems({ providers: [{ slug: 'new' }] })).toEqual(['providers[0].protocol must be one of openai, anthropic, google, openai-responses, azure-openai, azure-openai-responses, bedrock, vertex, vertex-anthropic', 'providers[0].base_url must be an http(s) URL']);
  });

  it('accepts a plain number where it prints as a plain decimal, and keeps it as a string', () => {
    const c = buildCatalog({ providers: [provider], models: [model], endpoints: [{ model: model.id, provider: 'local', pricing: { prompt: 0, completion: 0.5, discount: 0.1 } }] }, empty);
    expect(c.endpoints[0].pricing).toEqual({ prompt: '0', completion: '0.5', discount: 0.1 });
  });

  it('carries aliases (bare or author/slug ids) into the model, and provider metadata into the provider', () => {
    const c = buildCatalog(
      {
        providers: [{ ...provider, privacy_policy_url: 'https://example.com/privacy', headquarters: 'FR', datacenters: ['EU'] }],
        models: [{ ...model, aliases: ['chat-1', 'acme/chat-1-20260101', 'chat_1:latest', 'chat-1'] }, { id: 'acme/plain' }],
      },
      empty,
    );
    expect(c.models[0].aliases).toEqual(['chat-1', 'acme/chat-1-20260101', 'chat_1:latest']);
    expect('aliases' in c.models[1]).toBe(false);
    expect(c.providers[0]).toMatchObject({ privacyPolicyUrl: 'https://example.com/privacy', headquarters: 'FR', datacenters: ['EU'] });
    // An override keeps what it does not set, aliases included.
    const again = buildCatalog({ models: [{ id: model.id, name: 'Renamed' }] }, c);
    expect(again.models[0]).toMatchObject({ name: 'Renamed', aliases: ['chat-1', 'acme/chat-1-20260101', 'chat_1:latest'] });
  });

  it('fills a partial reasoning section with the defaults', () => {
    const c = buildCatalog({ models: [{ ...model, reasoning: { supported_efforts: ['low', 'high'] } }] }, empty);
    expect(c.models[0].reasoning).toEqual({ default_effort: null, default_enabled: false, mandatory: false, supported_efforts: ['low', 'high'] });
  });

  it('overrides a shipped endpoint price field by field, leaving the shipped catalog untouched', () => {
    const base = shippedCatalog();
    const before = base.endpoints.find((e) => e.model === 'openai/gpt-4o' && e.tag === 'openai')!.pricing;
    const c = buildCatalog({ endpoints: [{ model: 'openai/gpt-4o', provider: 'openai', pricing: { prompt: '0.000002', completion: '0.000009' } }] }, base);
    const e = c.endpoints.find((x) => x.model === 'openai/gpt-4o' && x.tag === 'openai')!;
    expect(e.pricing).toEqual({ prompt: '0.000002', completion: '0.000009' });
    expect(e.upstreamModel).toBe('gpt-4o');
    expect(base.endpoints.find((x) => x.model === 'openai/gpt-4o' && x.tag === 'openai')!.pricing).toEqual(before);
    expect(c.endpoints).toHaveLength(base.endpoints.length);
  });
});
