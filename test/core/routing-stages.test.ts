/**
 * The routing stages (src/core/routing/*) one at a time: preferences, candidates, policy filters, sort, partition and
 * the no-endpoint errors. test/core/routing.test.ts covers planRoute as a whole.
 */
import { describe, expect, it } from 'vitest';
import type { EndpointDef, ModelDef, Pricing, ProviderDef } from '../../src/core/catalog-types.js';
import type { Candidate, ConsideredEndpoint, ModelState, RouteCatalog, RouteInput } from '../../src/core/routing/types.js';
import { missesPreferences, orderIndex, resolvePreferences, type RoutePrefs } from '../../src/core/routing/preferences.js';
import { modelCandidates, requestedModels } from '../../src/core/routing/candidates.js';
import {
  availabilityReason,
  capabilityReason,
  exceedsContext,
  exceedsMaxPrice,
  hardExclusion,
  orderOnlyFilter,
  privacyReason,
  providerListReason,
  softParameterFilter,
} from '../../src/core/routing/filters.js';
import { compareCandidates, makeSorter, orderTier, orderUnhealthy, sortKey, splitTiers, weightedPick } from '../../src/core/routing/sort.js';
import { onePerModel, partitionBlocks, promoteSticky, strategyLabel } from '../../src/core/routing/partition.js';
import { allUnhealthyError, emptiedBy, noEndpointsError } from '../../src/core/routing/errors.js';

const NOW = 1_700_000_000_000;
const pm = (perM: number): string => (perM / 1e6).toFixed(12);
const pr = (p: number, c: number, extra: Partial<Pricing> = {}): Pricing => ({ prompt: pm(p), completion: pm(c), ...extra });

function provider(slug: string, extra: Partial<ProviderDef> = {}): ProviderDef {
  return { slug, name: slug.toUpperCase(), protocol: 'openai', baseUrl: `https://${slug}.example/v1`, dataPolicy: { training: false, retainsPrompts: false, zdr: false }, ...extra };
}

function ep(model: string, tag: string, pricing: Pricing | null = pr(1, 1), extra: Partial<EndpointDef> = {}): EndpointDef {
  return {
    model,
    provider: tag.split('/')[0],
    tag,
    upstreamModel: model,
    pricing,
    context_length: 8_000,
    max_prompt_tokens: null,
    max_completion_tokens: 1_000,
    quantization: 'fp8',
    supported_parameters: ['temperature'],
    is_moderated: false,
    supports_implicit_caching: false,
    ...extra,
  };
}

const modelDef = (id: string): ModelDef => ({ id, canonical_slug: id, name: id } as unknown as ModelDef);

function catalog(endpoints: EndpointDef[], providers: ProviderDef[]): RouteCatalog {
  const endpointsByModel = new Map<string, EndpointDef[]>();
  for (const e of endpoints) endpointsByModel.set(e.model, [...(endpointsByModel.get(e.model) ?? []), e]);
  return { models: new Map([...endpointsByModel.keys()].map((m) => [m, modelDef(m)])), endpointsByModel, providers: new Map(providers.map((p) => [p.slug, p])) };
}

function input(extra: Partial<RouteInput> = {}): RouteInput {
  return { now: NOW, rng: () => 0, models: [], catalog: catalog([], []), hasCredentials: () => true, health: () => undefined, params: [], ...extra };
}

function prefsOf(extra: Partial<RouteInput> = {}): RoutePrefs {
  const p = resolvePreferences(input(extra));
  if ('code' in p) throw new Error(p.message);
  return p;
}

let catIdx = 0;
function cand(tag: string, extra: Partial<Candidate> = {}): Candidate {
  const endpoint = ep(extra.model ?? 'm', tag);
  return {
    model: 'm',
    modelIdx: 0,
    catIdx: catIdx++,
    endpoint,
    provider: provider(endpoint.provider),
    row: { model: extra.model ?? 'm', provider: endpoint.provider, tag },
    price: 1e-6,
    health: undefined,
    unhealthy: false,
    missesPrefs: false,
    orderIdx: Infinity,
    ...extra,
  };
}

const state = (model: string, idx: number, cands: Candidate[]): ModelState => ({ model, idx, cands, reasons: [] });
const tags = (cs: Candidate[]): string[] => cs.map((c) => c.endpoint.tag);

describe('preferences stage', () => {
  it('resolves defaults: no lists, default strategy, model partition, 30 s window', () => {
    const p = prefsOf();
    expect(p).toMatchObject({ order: null, only: null, sortBy: null, partition: 'model', allowFallbacks: true, hasMaxPrice: false, hasSoftPrefs: false, windowMs: 30_000 });
  });

  it('drops blank list entries, lower-cases quantizations, ORs account policy into the request', () => {
    const p = prefsOf({ provider: { only: [' ', ''], quantizations: ['FP8'], order: ['a', ''] }, orgAllowedProviders: [], requireZdr: true, denyDataCollection: true });
    expect(p.only).toBeNull();
    expect(p.orgAllowed).toBeNull();
    expect(p.order).toEqual(['a']);
    expect(p.quantizations).toEqual(['fp8']);
    expect(p.requireZdr).toBe(true);
    expect(p.denyData).toBe(true);
  });

  it('an invalid max_price is a 400 naming the field', () => {
    const p = resolvePreferences(input({ provider: { max_price: { prompt: 1, completion: '-2' } } }));
    expect(p).toEqual({ status: 400, code: 'invalid_request', message: 'provider.max_price.completion must be a non-negative number' });
  });

  it('the request sort wins over the workspace default; exacto behaves like the default strategy', () => {
    expect(prefsOf({ provider: { sort: { by: 'latency', partition: 'none' } }, defaultSort: 'price' })).toMatchObject({ sortBy: 'latency', partition: 'none' });
    expect(prefsOf({ defaultSort: 'price' }).sortBy).toBe('price');
    expect(prefsOf({ provider: { sort: 'exacto' } })).toMatchObject({ sortBy: null, partition: 'model' });
  });

  it('require_parameters checks only the non-universal request parameters, once each', () => {
    expect(prefsOf({ provider: { require_parameters: true }, params: ['model', 'messages', 'tools', 'tools', 'top_k'] }).checkedParams).toEqual(['tools', 'top_k']);
  });

  it('marks an endpoint missing the latency (seconds) or throughput preference; unknown stats are not penalised', () => {
    const p = prefsOf({ provider: { preferred_max_latency: 2, preferred_min_throughput: { p90: 50 } } });
    expect(missesPreferences({ latencyMs: { p50: 2500 } }, p)).toBe(true);
    expect(missesPreferences({ latencyMs: { p50: 1500 }, throughput: { p50: 10, p90: 60 } }, p)).toBe(false);
    expect(missesPreferences({ throughput: { p50: 100, p90: 40 } }, p)).toBe(true);
    expect(missesPreferences(undefined, p)).toBe(false);
  });

  it('orderIndex: the first matching order entry (slug, tag or display name), Infinity otherwise', () => {
    const e = ep('m', 'deepinfra/turbo');
    const prov = provider('deepinfra', { name: 'DeepInfra' });
    expect(orderIndex(['x', 'DeepInfra'], e, prov)).toBe(1);
    expect(orderIndex(['deepinfra/turbo'], e, prov)).toBe(0);
    expect(orderIndex(['deepinfra/other'], e, prov)).toBe(Infinity);
    expect(orderIndex(null, e, prov)).toBe(Infinity);
  });
});

describe('candidates stage', () => {
  const cat = catalog([ep('a', 'p1'), ep('a', 'p2', pr(2, 2)), ep('a', 'ghost'), ep('b', 'p1')], [provider('p1'), provider('p2')]);

  it('keeps requested models in order, once; unknown ids become model_not_found rows', () => {
    const considered: ConsideredEndpoint[] = [];
    const r = requestedModels(['a', 'zz', 'a', 'b'], cat, considered);
    if ('code' in r) throw new Error(r.message);
    expect(r.requested).toEqual(['a', 'zz', 'b']);
    expect(r.states.map((s) => [s.model, s.idx])).toEqual([['a', 0], ['b', 1]]);
    expect(considered).toEqual([{ model: 'zz', provider: '', tag: '', excluded: 'model_not_found' }]);
  });

  it('no model is a 400; no existing model is a 404 naming them', () => {
    expect(requestedModels([], cat, [])).toMatchObject({ status: 400, message: 'No model specified' });
    expect(requestedModels(['x'], cat, [])).toMatchObject({ status: 404, code: 'model_not_found', message: 'x is not a valid model ID' });
    expect(requestedModels(['x', 'y'], cat, [])).toMatchObject({ message: 'None of the requested models exist: x, y', excluded_by: ['model_not_found'] });
  });

  it('records every endpoint, excludes by the first hard filter, and marks price, health and order on the others', () => {
    const considered: ConsideredEndpoint[] = [];
    const st = state('a', 0, []);
    const inp = input({
      catalog: cat,
      provider: { order: ['p2'] },
      health: (e) => (e.tag === 'p2' ? { lastFailureAt: NOW - 1000, consecutiveFailures: 2 } : undefined),
    });
    modelCandidates(st, inp, prefsOf({ provider: { order: ['p2'] } }), considered, new Set());
    expect(considered.map((c) => [c.tag, c.excluded])).toEqual([['p1', undefined], ['p2', undefined], ['ghost', 'unknown_provider']]);
    expect(st.reasons).toEqual(['unknown_provider']);
    expect(st.cands.map((c) => [c.endpoint.tag, c.catIdx, c.price, c.unhealthy, c.orderIdx])).toEqual([
      ['p1', 0, 2e-6, false, Infinity],
      ['p2', 1, 4e-6, true, 0],
    ]);
  });
});

describe('policy filters stage', () => {
  const prov = provider('p');
  const e = ep('m', 'p');

  it('availability: unknown provider, then missing credentials', () => {
    expect(availabilityReason(undefined, { hasCredentials: () => true })).toBe('unknown_provider');
    expect(availabilityReason(prov, { hasCredentials: () => false })).toBe('no_credentials');
    expect(availabilityReason(prov, { hasCredentials: () => true })).toBeUndefined();
  });

  it('provider lists: account allowlist, account ignore list, only, ignore — in that order', () => {
    expect(providerListReason(e, prov, prefsOf({ orgAllowedProviders: ['x'], provider: { ignore: ['p'] } }))).toBe('allowed_providers');
    expect(providerListReason(e, prov, prefsOf({ orgIgnoredProviders: ['p'], provider: { only: ['x'] } }))).toBe('ignored_providers');
    expect(providerListReason(e, prov, prefsOf({ provider: { only: ['x'], ignore: ['p'] } }))).toBe('only');
    expect(providerListReason(e, prov, prefsOf({ provider: { ignore: ['P'] } }))).toBe('ignore');
    expect(providerListReason(e, prov, prefsOf({ provider: { only: ['p'] } }))).toBeUndefined();
  });

  it('privacy: zdr, training, retention, with the endpoint overriding its provider', () => {
    const training = ep('m', 'p', pr(1, 1), { dataPolicy: { training: true } });
    expect(privacyReason(e, prov, prefsOf({ requireZdr: true }))).toBe('data_policy:zdr');
    expect(privacyReason(training, prov, prefsOf({ denyDataCollection: true }))).toBe('data_policy:training');
    expect(privacyReason(e, provider('r', { dataPolicy: { training: false, retainsPrompts: true, zdr: false } }), prefsOf({ denyDataCollection: true }))).toBe('data_policy:retention');
    expect(privacyReason(training, prov, prefsOf())).toBeUndefined();
  });

  it('max_price: per-million token ceilings, per-request price; unknown pricing never fits', () => {
    const p = prefsOf({ provider: { max_price: { prompt: 1.5, request: 0.01 } } });
    expect(exceedsMaxPrice(ep('m', 'p', pr(1, 9)), p)).toBe(false);
    expect(exceedsMaxPrice(ep('m', 'p', pr(2, 1)), p)).toBe(true);
    expect(exceedsMaxPrice(ep('m', 'p', pr(1, 1, { request: '0.02' })), p)).toBe(true);
    expect(exceedsMaxPrice(ep('m', 'p', null), p)).toBe(true);
    expect(exceedsMaxPrice(ep('m', 'p', null), prefsOf())).toBe(false);
  });

  it('context: prompt within max_prompt_tokens and context, output within max_completion_tokens, both within context', () => {
    const c = ep('m', 'p', pr(1, 1), { context_length: 1000, max_prompt_tokens: 600, max_completion_tokens: 500 });
    expect(exceedsContext(c, 600, undefined)).toBe(false);
    expect(exceedsContext(c, 601, undefined)).toBe(true);
    expect(exceedsContext(c, undefined, 501)).toBe(true);
    expect(exceedsContext(c, 600, 401)).toBe(true);
    expect(exceedsContext(ep('m', 'p', pr(1, 1), { context_length: 0, max_completion_tokens: null }), 1e9, 1e9)).toBe(false);
  });

  it('capability: quantization before price before parameters (collecting the missing ones) before context', () => {
    const missing = new Set<string>();
    expect(capabilityReason(e, prefsOf({ provider: { quantizations: ['fp16'], max_price: { prompt: 0 } } }), missing)).toBe('quantization');
    expect(capabilityReason(e, prefsOf({ provider: { require_parameters: true }, params: ['top_k', 'temperature', 'logprobs'] }), missing)).toBe('require_parameters');
    expect([...missing]).toEqual(['top_k', 'logprobs']);
    expect(capabilityReason(e, prefsOf({ estimatedPromptTokens: 9000 }), missing)).toBe('context_length');
  });

  it('hardExclusion: availability, then the organization policy, then the other groups', () => {
    const ctx = { hasCredentials: () => true, endpointPolicy: () => 'data_policy:zdr' as const };
    expect(hardExclusion(e, undefined, prefsOf(), ctx, new Set())).toBe('unknown_provider');
    expect(hardExclusion(e, prov, prefsOf({ provider: { only: ['x'] } }), ctx, new Set())).toBe('data_policy:zdr');
    expect(hardExclusion(e, prov, prefsOf({ provider: { only: ['x'] } }), { hasCredentials: () => true }, new Set())).toBe('only');
    expect(hardExclusion(e, prov, prefsOf(), { hasCredentials: () => true }, new Set())).toBeUndefined();
  });

  it('soft parameter filter drops non-supporters only when some candidate supports the parameter', () => {
    const withTools = cand('a', { endpoint: ep('m', 'a', pr(1, 1), { supported_parameters: ['tools'] }) });
    const plain = cand('b');
    const st = state('m', 0, [withTools, plain]);
    softParameterFilter(st, ['tools'], prefsOf());
    expect(tags(st.cands)).toEqual(['a']);
    expect(plain.row.excluded).toBe('unsupported_parameter');
    const none = state('m', 0, [cand('c'), cand('d')]);
    softParameterFilter(none, ['response_format'], prefsOf());
    expect(none.cands).toHaveLength(2);
    const required = state('m', 0, [withTools, cand('e')]);
    softParameterFilter(required, ['tools'], prefsOf({ provider: { require_parameters: true } }));
    expect(required.cands).toHaveLength(2);
  });

  it('order with allow_fallbacks false keeps only the named providers', () => {
    const st = state('m', 0, [cand('a', { orderIdx: 0 }), cand('b')]);
    orderOnlyFilter(st, prefsOf({ provider: { order: ['a'], allow_fallbacks: false } }));
    expect(tags(st.cands)).toEqual(['a']);
    expect(st.reasons).toEqual(['allow_fallbacks']);
    const kept = state('m', 0, [cand('a', { orderIdx: 0 }), cand('b')]);
    orderOnlyFilter(kept, prefsOf({ provider: { order: ['a'] } }));
    expect(kept.cands).toHaveLength(2);
  });
});

describe('sort stage', () => {
  it('sort keys: price, throughput descending, latency; unknown is null', () => {
    const c = cand('a', { price: 3e-6, health: { throughput: { p50: 80 }, latencyMs: { p50: 400 } } });
    expect(sortKey(c, 'price')).toBe(3e-6);
    expect(sortKey(c, null)).toBe(3e-6);
    expect(sortKey(c, 'throughput')).toBe(-80);
    expect(sortKey(c, 'latency')).toBe(400);
    expect(sortKey(cand('b'), 'latency')).toBeNull();
  });

  it('comparator: order position, then sort key with unknown last, then price, then model and catalog order', () => {
    const fastCheap = cand('fast', { price: 1e-6, health: { throughput: { p50: 100 } } });
    const slow = cand('slow', { price: 1e-7, health: { throughput: { p50: 10 } } });
    const unknown = cand('unknown', { price: 1e-8 });
    const named = cand('named', { price: 9e-6, orderIdx: 0 });
    expect(tags([unknown, slow, fastCheap, named].sort(compareCandidates('throughput')))).toEqual(['named', 'fast', 'slow', 'unknown']);
    const m2 = cand('m2', { modelIdx: 1, price: 1e-6 });
    const m1 = cand('m1', { modelIdx: 0, price: 1e-6 });
    expect(tags([m2, m1].sort(compareCandidates(null)))).toEqual(['m1', 'm2']);
  });

  it('weightedPick draws index i with probability weights[i]/sum', () => {
    expect(weightedPick([1, 1], 0)).toBe(0);
    expect(weightedPick([1, 1], 0.49)).toBe(0);
    expect(weightedPick([1, 1], 0.5)).toBe(1);
    expect(weightedPick([1, 3], 0.3)).toBe(1);
    expect(weightedPick([1, 3], 1)).toBe(1);
  });

  it('load balancing draws the first attempt from the cheap tier (≤ 2× the cheapest) only', () => {
    const tier = [cand('p1', { price: 1 }), cand('p2', { price: 2 }), cand('p3', { price: 2.5 })];
    const lb = (r: number) => ({ ...makeSorter(prefsOf(), () => r) });
    // weights (1/1)², (1/2)² = 1, 0.25 → p2 from r ≥ 0.8
    expect(tags(orderTier(tier, lb(0.79)))).toEqual(['p1', 'p2', 'p3']);
    expect(tags(orderTier(tier, lb(0.99)))).toEqual(['p2', 'p1', 'p3']);
    // a sort disables load balancing
    expect(tags(orderTier(tier, makeSorter(prefsOf({ provider: { sort: 'price' } }), () => 0.99)))).toEqual(['p1', 'p2', 'p3']);
  });

  it('unhealthy candidates: fewest consecutive failures first, then the oldest failure', () => {
    const sorter = makeSorter(prefsOf(), () => 0);
    const a = cand('a', { health: { consecutiveFailures: 3, lastFailureAt: 1 } });
    const b = cand('b', { health: { consecutiveFailures: 1, lastFailureAt: 5 } });
    const c = cand('c', { health: { consecutiveFailures: 1, lastFailureAt: 2 } });
    expect(tags(orderUnhealthy([a, b, c], sorter))).toEqual(['c', 'b', 'a']);
  });

  it('splitTiers: preferred, missing preferences, unhealthy', () => {
    const t = splitTiers([cand('ok'), cand('miss', { missesPrefs: true }), cand('bad', { unhealthy: true, missesPrefs: true })]);
    expect([tags(t.pref), tags(t.miss), tags(t.bad)]).toEqual([['ok'], ['miss'], ['bad']]);
  });
});

describe('partition stage', () => {
  const sorter = makeSorter(prefsOf({ provider: { sort: 'price' } }), () => 0);

  it('one block per model in request order; partition none sorts across models', () => {
    const a = state('a', 0, [cand('a1', { model: 'a', price: 5 })]);
    const b = state('b', 1, [cand('b1', { model: 'b', modelIdx: 1, price: 1 })]);
    expect(partitionBlocks([a, b], prefsOf({ provider: { sort: 'price' } }), sorter).map(tags)).toEqual([['a1'], ['b1']]);
    const none = prefsOf({ provider: { sort: { by: 'price', partition: 'none' } } });
    expect(partitionBlocks([a, b], none, sorter).map(tags)).toEqual([['b1', 'a1']]);
  });

  it('soft preferences move a model with no endpoint meeting them after the others', () => {
    const p = prefsOf({ provider: { preferred_max_latency: 1 } });
    const a = state('a', 0, [cand('a1', { model: 'a', missesPrefs: true })]);
    const b = state('b', 1, [cand('b1', { model: 'b', modelIdx: 1 })]);
    expect(partitionBlocks([a, b], p, sorter).map(tags)).toEqual([['b1'], ['a1']]);
  });

  it('the sticky endpoint moves to the front of its block when healthy', () => {
    const blocks = [[cand('x', { model: 'a' }), cand('y', { model: 'a' })]];
    const sticky = promoteSticky(blocks, { model: 'a', tag: 'y' });
    expect(sticky?.endpoint.tag).toBe('y');
    expect(blocks.map(tags)).toEqual([['y', 'x']]);
    expect(promoteSticky([[cand('z', { model: 'a', unhealthy: true })]], { model: 'a', tag: 'z' })).toBeUndefined();
    expect(promoteSticky(blocks, undefined)).toBeUndefined();
  });

  it('allow_fallbacks false without order keeps the first endpoint of each model', () => {
    const a = state('a', 0, []);
    const list = [cand('a1', { model: 'a' }), cand('a2', { model: 'a', unhealthy: true })];
    list[1].row.unhealthy = true;
    const kept = onePerModel(list, [a], prefsOf({ provider: { allow_fallbacks: false } }));
    expect(tags(kept)).toEqual(['a1']);
    expect(list[1].row).toEqual({ model: 'a', provider: 'a2', tag: 'a2', excluded: 'allow_fallbacks' });
    expect(onePerModel(list, [a], prefsOf())).toBe(list);
  });

  it('strategy label: sticky, order, sort, fallback, direct', () => {
    const first = cand('a', { model: 'a' });
    expect(strategyLabel([first], first, prefsOf({ provider: { order: ['a'] } }), 'a')).toBe('sticky');
    expect(strategyLabel([first], undefined, prefsOf({ provider: { order: ['a'] } }), 'a')).toBe('order');
    expect(strategyLabel([first], undefined, prefsOf({ provider: { sort: 'latency' } }), 'a')).toBe('sort:latency');
    expect(strategyLabel([first], undefined, prefsOf(), 'b')).toBe('fallback');
    expect(strategyLabel([first], undefined, prefsOf(), 'a')).toBe('direct');
  });
});

describe('route errors', () => {
  it('the emptying filter is the latest reason; privacy beats constraints beats availability across models', () => {
    const priv = { ...state('a', 0, []), reasons: ['no_credentials', 'data_policy:zdr'] } as ModelState;
    const cons = { ...state('b', 1, []), reasons: ['max_price'] } as ModelState;
    expect(emptiedBy(priv)).toBe('data_policy:zdr');
    const considered: ConsideredEndpoint[] = [{ model: 'a', provider: 'p', tag: 'p', excluded: 'data_policy:zdr' }, { model: 'b', provider: 'q', tag: 'q', excluded: 'max_price' }];
    expect(noEndpointsError([cons, priv], considered, prefsOf(), new Set())).toEqual({
      status: 404,
      code: 'privacy_restricted',
      message: 'No endpoints found for b, a that match your data policy (zero data retention required)',
      excluded_by: ['data_policy:zdr', 'max_price'],
    });
  });

  it('names missing credentials, missing parameters and the token counts', () => {
    const creds = { ...state('a', 0, []), reasons: ['no_credentials'] } as ModelState;
    expect(noEndpointsError([creds], [{ model: 'a', provider: 'p', tag: 'p', excluded: 'no_credentials' }], prefsOf(), new Set()).message).toBe(
      'No endpoints found for a. No credentials are configured for: p.',
    );
    const params = { ...state('a', 0, []), reasons: ['require_parameters'] } as ModelState;
    expect(noEndpointsError([params], [], prefsOf(), new Set(['top_k'])).message).toBe('No endpoints found that support the requested parameters: top_k');
    const ctx = { ...state('a', 0, []), reasons: ['context_length'] } as ModelState;
    expect(noEndpointsError([ctx], [], prefsOf({ estimatedPromptTokens: 10, maxOutputTokens: 5 }), new Set()).message).toBe(
      'No endpoints found for a that can fit the request (10 prompt tokens + 5 output tokens)',
    );
  });

  it('all unhealthy: 503 with the time until the first endpoint leaves the window', () => {
    const list = [cand('a', { health: { lastFailureAt: NOW - 10_000 } }), cand('b', { health: { lastFailureAt: NOW - 20_000 } })];
    expect(allUnhealthyError(list, [state('m', 0, [])], [], NOW, 30_000)).toEqual({
      status: 503,
      code: 'all_unhealthy',
      message: 'All endpoints for m failed in the last 30s; try again shortly',
      excluded_by: [],
      retry_after_ms: 10_000,
    });
  });
});
