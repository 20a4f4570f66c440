/** The pure policy functions (src/core/policy.ts, policy-refusals.ts, guardrail-ids.ts): combining, model and endpoint verdicts, access, refusals. */
import { describe, expect, it } from 'vitest';
import type { EndpointDef, ModelDef, ProviderDef } from '../../src/core/catalog-types.js';
import {
  combinePolicies,
  endpointAllowed,
  endpointVerdict,
  modelAccess,
  modelAllowed,
  modelVerdict,
  zdrGroup,
  type GuardrailPolicyInput,
  type OrgSettings,
} from '../../src/core/policy.js';
import { budgetRefusal, refusal } from '../../src/core/policy-refusals.js';
import { workspaceGuardrailId } from '../../src/core/guardrail-ids.js';
import { planRoute, type RouteCatalog } from '../../src/core/routing.js';

const provider = (slug: string, dp: Partial<ProviderDef['dataPolicy']> = {}): ProviderDef => ({
  slug,
  name: `Prov ${slug.toUpperCase()}`,
  protocol: 'openai',
  baseUrl: 'http://127.0.0.1:9/v1',
  noAuth: true,
  dataPolicy: { training: false, retainsPrompts: false, zdr: true, ...dp },
});
const model = (id: string, canonical = id): ModelDef => ({
  id,
  canonical_slug: canonical,
  name: id,
  created: 1,
  description: '',
  context_length: 1000,
  architecture: { modality: 'text->text', input_modalities: ['text'], output_modalities: ['text'], tokenizer: 'Other', instruct_type: null },
  reasoning: null,
  knowledge_cutoff: null,
  expiration_date: null,
  hugging_face_id: null,
  default_parameters: null,
  supported_voices: null,
});
const endpoint = (m: string, p: string, price = '0.000001', tag = p): EndpointDef => ({
  model: m,
  provider: p,
  tag,
  upstreamModel: m,
  pricing: { prompt: price, completion: price },
  context_length: 1000,
  max_prompt_tokens: null,
  max_completion_tokens: null,
  quantization: 'fp16',
  supported_parameters: [],
  is_moderated: false,
  supports_implicit_caching: false,
});

// a: zdr, no training; b: trains and retains; c: zdr; d: no zdr but neither trains nor retains.
const PROVIDERS = [provider('a'), provider('b', { training: true, retainsPrompts: true, zdr: false }), provider('c'), provider('d', { zdr: false }), provider('nocreds')];
const MODELS = [model('test/alpha', 'test/alpha-2025'), model('test/beta'), model('openai/gpt-x'), model('test/free'), model('test/orphan')];
const ENDPOINTS = [
  endpoint('test/alpha', 'a'),
  endpoint('test/alpha', 'b'),
  endpoint('test/beta', 'c'),
  endpoint('test/beta', 'd'),
  endpoint('openai/gpt-x', 'b'),
  endpoint('openai/gpt-x', 'a'),
  endpoint('test/free', 'b', '0'),
  endpoint('test/orphan', 'nocreds'),
];
const CATALOG: RouteCatalog = {
  models: new Map(MODELS.map((m) => [m.id, m])),
  endpointsByModel: ENDPOINTS.reduce((m, e) => m.set(e.model, [...(m.get(e.model) ?? []), e]), new Map<string, EndpointDef[]>()),
  providers: new Map(PROVIDERS.map((p) => [p.slug, p])),
};
const hasCreds = (p: ProviderDef) => p.slug !== 'nocreds';
const P = (slug: string) => CATALOG.providers.get(slug)!;
const ep = (m: string, p: string) => ENDPOINTS.find((e) => e.model === m && e.provider === p)!;

const ORG: OrgSettings = { allowed_providers: null, ignored_providers: null, allowed_models: null, ignored_models: null, default_provider_sort: null, data_collection: 'allow', enforce_zdr: false };
let n = 0;
const guardrail = (over: Partial<GuardrailPolicyInput> = {}): GuardrailPolicyInput => ({
  id: `g${++n}`,
  name: `G${n}`,
  scope: 'key',
  allowed_providers: null,
  ignored_providers: null,
  allowed_models: null,
  ignored_models: null,
  enforce_zdr_anthropic: false,
  enforce_zdr_openai: false,
  enforce_zdr_google: false,
  enforce_zdr_xai: false,
  enforce_zdr_other: false,
  enable_free_model_training: null,
  enable_paid_model_training: null,
  limit_usd: null,
  reset_interval: null,
  include_byok_in_budgets: false,
  ...over,
});
const zdrAll = { enforce_zdr_anthropic: true, enforce_zdr_openai: true, enforce_zdr_google: true, enforce_zdr_xai: true, enforce_zdr_other: true };

/** Model ids a policy leaves reachable. */
const reachable = (policy: ReturnType<typeof combinePolicies>) => MODELS.map((m) => m.id).filter((id) => modelAccess(policy, CATALOG, hasCreds, id).endpoints.length > 0);

describe('combinePolicies', () => {
  it('no settings and no guardrails restrict nothing (no rules, every routable model reachable)', () => {
    const p = combinePolicies(ORG, []);
    expect(p.rules).toEqual([]);
    expect(reachable(p)).toEqual(['test/alpha', 'test/beta', 'openai/gpt-x', 'test/free']);
    expect(p.budgets).toEqual([]);
  });

  it('allowlists intersect: an endpoint must pass every allowlist; the first refusing rule is named', () => {
    const p = combinePolicies({ ...ORG, allowed_providers: ['a', 'c'] }, [guardrail({ id: 'k', name: 'Key', allowed_providers: ['a', 'b'] })]);
    expect(endpointAllowed(p, ep('test/alpha', 'a'), P('a'))).toBe(true);
    expect(endpointVerdict(p, ep('test/alpha', 'b'), P('b'))).toEqual({ reason: 'allowed_providers', source: { kind: 'organization' } });
    expect(endpointVerdict(p, ep('test/beta', 'c'), P('c'))).toEqual({ reason: 'allowed_providers', source: { kind: 'guardrail', id: 'k', name: 'Key', scope: 'key' } });
    expect(reachable(p)).toEqual(['test/alpha', 'openai/gpt-x']);
    // Model allowlists intersect too.
    const m = combinePolicies({ ...ORG, allowed_models: ['test/alpha', 'test/beta'] }, [guardrail({ allowed_models: ['test/beta', 'openai/gpt-x'] })]);
    expect(reachable(m)).toEqual(['test/beta']);
  });

  it('ignore lists union (providers and models)', () => {
    const p = combinePolicies({ ...ORG, ignored_providers: ['a'] }, [guardrail({ ignored_providers: ['c'], ignored_models: ['test/free'] })]);
    expect(reachable(p)).toEqual(['test/alpha', 'test/beta', 'openai/gpt-x']);
    expect(modelAccess(p, CATALOG, hasCreds, 'test/alpha').endpoints.map((e) => e.provider)).toEqual(['b']);
  });

  it('ZDR is ORed: any layer requiring it applies; per-vendor switches apply to their model group only', () => {
    const p = combinePolicies(ORG, [guardrail({ scope: 'key' }), guardrail({ scope: 'workspace', ...zdrAll })]);
    expect(reachable(p)).toEqual(['test/alpha', 'test/beta', 'openai/gpt-x']);
    expect(modelAccess(p, CATALOG, hasCreds, 'test/beta').endpoints.map((e) => e.provider)).toEqual(['c']);
    const openaiOnly = combinePolicies(ORG, [guardrail({ enforce_zdr_openai: true })]);
    expect(modelAccess(openaiOnly, CATALOG, hasCreds, 'openai/gpt-x').endpoints.map((e) => e.provider)).toEqual(['a']);
    expect(modelAccess(openaiOnly, CATALOG, hasCreds, 'test/free').endpoints.map((e) => e.provider)).toEqual(['b']);
    expect(combinePolicies({ ...ORG, enforce_zdr: true }, []).rules[0].zdrGroups).toHaveLength(5);
    expect([zdrGroup('anthropic/x'), zdrGroup('OpenAI/x'), zdrGroup('google/x'), zdrGroup('x-ai/grok'), zdrGroup('meta/llama')]).toEqual(['anthropic', 'openai', 'google', 'xai', 'other']);
  });

  it('data collection denied: no endpoint that trains on or retains prompts (ZDR not required)', () => {
    const p = combinePolicies({ ...ORG, data_collection: 'deny' }, []);
    expect(endpointVerdict(p, ep('test/alpha', 'b'), P('b'))?.reason).toBe('data_policy:training');
    expect(endpointAllowed(p, ep('test/beta', 'd'), P('d'))).toBe(true);
    expect(reachable(p)).toEqual(['test/alpha', 'test/beta', 'openai/gpt-x']);
    const retainsOnly = { ...P('a'), dataPolicy: { training: false, retainsPrompts: true, zdr: false } };
    expect(endpointVerdict(p, ep('test/alpha', 'a'), retainsOnly)?.reason).toBe('data_policy:retention');
  });

  it('guardrail training switches: paid endpoints and free endpoints separately', () => {
    const paid = combinePolicies(ORG, [guardrail({ enable_paid_model_training: false })]);
    expect(endpointAllowed(paid, ep('test/alpha', 'b'), P('b'))).toBe(false);
    expect(endpointAllowed(paid, ep('test/free', 'b'), P('b'))).toBe(true);
    const free = combinePolicies(ORG, [guardrail({ enable_free_model_training: false })]);
    expect(endpointAllowed(free, ep('test/alpha', 'b'), P('b'))).toBe(true);
    expect(endpointAllowed(free, ep('test/free', 'b'), P('b'))).toBe(false);
  });

  it('model lists match ids and canonical slugs, case-insensitively, ignoring a :variant suffix', () => {
    const alpha = CATALOG.models.get('test/alpha')!;
    for (const entry of ['test/alpha', 'TEST/Alpha', 'test/alpha-2025', 'test/alpha:free']) {
      expect(modelAllowed(combinePolicies({ ...ORG, allowed_models: [entry] }, []), alpha), entry).toBe(true);
    }
    expect(modelVerdict(combinePolicies(ORG, [guardrail({ id: 'x', name: 'X', ignored_models: ['test/alpha-2025'] })]), alpha)).toMatchObject({ reason: 'ignored_models', source: { kind: 'guardrail', id: 'x' } });
  });

  it('budgets are kept per guardrail with their scope; the organization default sort is carried', () => {
    const p = combinePolicies({ ...ORG, default_provider_sort: 'latency' }, [guardrail({ id: 'b1', name: 'B', scope: 'member', limit_usd: 5, reset_interval: 'weekly', include_byok_in_budgets: true }), guardrail({ limit_usd: null })]);
    expect(p.defaultSort).toBe('latency');
    expect(p.budgets).toEqual([{ guardrailId: 'b1', name: 'B', scope: 'member', limitUsd: 5, resetInterval: 'weekly', includeByok: true }]);
    expect(p.guardrails).toHaveLength(2);
  });
});

describe('modelAccess and refusals', () => {
  it('a model without routable endpoints is unavailable, not blocked by policy', () => {
    const p = combinePolicies({ ...ORG, ignored_providers: ['a'] }, []);
    expect(modelAccess(p, CATALOG, hasCreds, 'test/orphan')).toMatchObject({ endpoints: [], blocked: null });
    expect(modelAccess(p, CATALOG, hasCreds, 'no/such')).toMatchObject({ endpoints: [], blocked: null });
  });

  it('the decisive verdict is the earliest filter, then the first layer', () => {
    const p = combinePolicies({ ...ORG, data_collection: 'deny' }, [guardrail({ id: 'g', name: 'G', scope: 'member', allowed_providers: ['b'] })]);
    // alpha: a refused by the guardrail allowlist, b by the organization's data rule → the allowlist decides.
    expect(modelAccess(p, CATALOG, hasCreds, 'test/alpha')).toMatchObject({ blocked: { reason: 'allowed_providers', source: { id: 'g' } }, reasons: ['allowed_providers', 'data_policy:training'] });
  });

  it('a guardrail list → 403 naming the guardrail; organization lists and privacy rules → 404 with the reason', () => {
    const g = combinePolicies(ORG, [guardrail({ id: 'g1', name: 'Prod', allowed_models: ['test/beta'] })]);
    const r403 = refusal([{ model: 'test/alpha', access: modelAccess(g, CATALOG, hasCreds, 'test/alpha') }]);
    expect(r403.status).toBe(403);
    expect(r403.message).toBe('Blocked by guardrail "Prod": test/alpha is not among its allowed models');
    expect(r403.metadata).toMatchObject({ error_type: 'permission_denied', guardrail_id: 'g1', guardrail_name: 'Prod', excluded_by: ['allowed_models'], policy: { setting: 'allowed_models', source: 'guardrail' } });

    const o = combinePolicies({ ...ORG, ignored_models: ['test/alpha'] }, []);
    const r404 = refusal([{ model: 'test/alpha', access: modelAccess(o, CATALOG, hasCreds, 'test/alpha') }]);
    expect(r404.status).toBe(404);
    expect(r404.metadata).toMatchObject({ excluded_by: ['ignored_models'], policy: { setting: 'ignored_models', source: 'organization' } });

    const z = combinePolicies(ORG, [guardrail({ id: 'z', name: 'ZDR', scope: 'workspace', ...zdrAll })]);
    const rz = refusal([{ model: 'test/free', access: modelAccess(z, CATALOG, hasCreds, 'test/free') }]);
    expect(rz.status).toBe(404);
    expect(rz.message).toContain('zero data retention required by guardrail "ZDR"');
    expect(rz.metadata).toMatchObject({ error_type: 'privacy_restricted', excluded_by: ['data_policy:zdr'], policy: { source: 'guardrail', guardrail_id: 'z', guardrail_scope: 'workspace' } });
  });

  it('budget refusal names the guardrail, the limit and the spend', () => {
    const r = budgetRefusal({ guardrailId: 'b', name: 'Budget', scope: 'key', limitUsd: 1, resetInterval: 'daily', includeByok: false }, 1.5);
    expect(r.status).toBe(403);
    expect(r.message).toMatch(/^Blocked by guardrail "Budget": its daily budget of \$1 is spent/);
    expect(r.metadata).toMatchObject({ guardrail_id: 'b', excluded_by: ['budget'], limit_usd: 1, usage: 1.5 });
  });

  it('planRoute with the policy filter routes exactly to the endpoints modelAccess lists', () => {
    const policies = [
      combinePolicies({ ...ORG, data_collection: 'deny' }, []),
      combinePolicies(ORG, [guardrail({ allowed_providers: ['b', 'd'] })]),
      combinePolicies({ ...ORG, ignored_providers: ['Prov A'] }, [guardrail({ enforce_zdr_openai: true })]),
    ];
    for (const p of policies) {
      for (const m of MODELS) {
        const plan = planRoute({
          now: 0,
          rng: () => 0,
          models: [m.id],
          catalog: CATALOG,
          hasCredentials: hasCreds,
          health: () => undefined,
          params: [],
          endpointPolicy: (e, prov) => endpointVerdict(p, e, prov)?.reason,
        });
        const routed = plan.attempts.map((a) => a.endpoint.provider).sort();
        expect(routed, m.id).toEqual(modelAccess(p, CATALOG, hasCreds, m.id).endpoints.map((e) => e.provider).sort());
      }
    }
  });
});

describe('workspace default guardrail id', () => {
  it('is a stable name-based UUID (v5) per workspace', () => {
    const a = workspaceGuardrailId('0df9e665-d932-5740-b2c7-b52af166bc11');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(workspaceGuardrailId('0df9e665-d932-5740-b2c7-b52af166bc11')).toBe(a);
    expect(workspaceGuardrailId('another')).not.toBe(a);
  });
});
