/**
 * Harness of the policy suites: the provider simulator and a gateway whose catalog has models chosen so that every
 * rule changes the reachable set differently (not a test file itself).
 *
 *   test/alpha      sim-a (ZDR, no training) + sim-b (trains, retains)
 *   test/beta       sim-c (ZDR)
 *   test/unpriced   sim-c (price unknown)
 *   test/gamma      sim-b only
 *   test/delta      sim-a, but this endpoint is not ZDR (it neither trains nor retains)
 *   openai/sim-gpt  sim-b (cheap) + sim-c (pricier)  — the `openai` ZDR group
 *   anthropic/sim-claude  sim-b only                 — the `anthropic` ZDR group
 *   test/nocreds    sim-x, a provider without credentials: never reachable, for non-policy reasons
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { createInferenceKey, startGateway, type Backend, type TestGateway } from '../helpers.js';

/** USD per token. */
export const PRICES = {
  a: { prompt: '0.000001', completion: '0.000002' },
  b: { prompt: '0.000003', completion: '0.000004' },
  c: { prompt: '0.0000005', completion: '0.000001' },
};
export const CHEAP = { prompt: '0.0000001', completion: '0.0000001' };

/** The suite's own catalog (independent of the chat suites' harness). */
function catalog(simUrl: string) {
  const provider = (slug: string, dp: { training: boolean; retains_prompts: boolean; zdr: boolean }) => ({
    slug,
    name: `Sim ${slug.slice(4).toUpperCase()}`,
    protocol: 'openai',
    base_url: `${simUrl}/${slug}/v1`,
    no_auth: true,
    data_policy: dp,
  });
  const zdr = { training: false, retains_prompts: false, zdr: true };
  return {
    providers: [provider('sim-a', zdr), provider('sim-b', { training: true, retains_prompts: true, zdr: false }), provider('sim-c', zdr), ...EXTRA.providers],
    models: [
      { id: 'test/alpha', name: 'Test Alpha', context_length: 32000 },
      { id: 'test/beta', name: 'Test Beta', context_length: 32000 },
      { id: 'test/unpriced', name: 'Test Unpriced', context_length: 32000 },
      ...EXTRA.models,
    ],
    endpoints: [
      { model: 'test/alpha', provider: 'sim-a', upstream_model: 'alpha-a', pricing: PRICES.a },
      { model: 'test/alpha', provider: 'sim-b', upstream_model: 'alpha-b', pricing: PRICES.b },
      { model: 'test/beta', provider: 'sim-c', upstream_model: 'beta-c', pricing: PRICES.c },
      { model: 'test/unpriced', provider: 'sim-c', upstream_model: 'unpriced-c', pricing: null },
      ...EXTRA.endpoints,
    ],
  };
}

const EXTRA = {
  providers: [
    {
      slug: 'sim-x',
      name: 'Sim X',
      protocol: 'openai',
      base_url: 'http://127.0.0.1:9/v1',
      api_key_env: 'GW_TEST_SIM_X_KEY_NEVER_SET',
      data_policy: { training: false, retains_prompts: false, zdr: true },
    },
  ],
  models: [
    { id: 'test/gamma', name: 'Test Gamma', context_length: 32000 },
    { id: 'test/delta', name: 'Test Delta', context_length: 32000 },
    { id: 'openai/sim-gpt', name: 'Sim GPT', context_length: 32000 },
    { id: 'anthropic/sim-claude', name: 'Sim Claude', context_length: 32000 },
    { id: 'test/nocreds', name: 'Test No Credentials', context_length: 32000 },
  ],
  endpoints: [
    { model: 'test/gamma', provider: 'sim-b', upstream_model: 'gamma-b', pricing: PRICES.b },
    { model: 'test/delta', provider: 'sim-a', upstream_model: 'delta-a', pricing: PRICES.a, data_policy: { training: false, retains_prompts: false, zdr: false } },
    { model: 'openai/sim-gpt', provider: 'sim-b', upstream_model: 'gpt-b', pricing: CHEAP },
    { model: 'openai/sim-gpt', provider: 'sim-c', upstream_model: 'gpt-c', pricing: PRICES.b },
    { model: 'anthropic/sim-claude', provider: 'sim-b', upstream_model: 'claude-b', pricing: PRICES.b },
    { model: 'test/nocreds', provider: 'sim-x', upstream_model: 'nocreds-x', pricing: PRICES.a },
  ],
};

export const ALL_MODELS = ['test/alpha', 'test/beta', 'test/unpriced', 'test/gamma', 'test/delta', 'openai/sim-gpt', 'anthropic/sim-claude', 'test/nocreds'].sort();
/** Reachable with no policy at all: everything but the model whose provider has no credentials. */
export const REACHABLE = ALL_MODELS.filter((m) => m !== 'test/nocreds');

export interface PolicyEnv {
  sim: Simulator;
  t: TestGateway;
  close(): Promise<void>;
}

export async function startPolicyEnv(backend: Backend, file: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<PolicyEnv> {
  const sim = await createSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'gw-policy-'));
  const path = join(dir, 'gateway.yaml');
  writeFileSync(path, stringify({ ...catalog(sim.url), ...file }));
  try {
    const t = await startGateway(backend, { env: { GATEWAY_CONFIG: path, GATEWAY_DEFAULT_CATALOG: 'false', ...env } });
    return {
      sim,
      t,
      close: async () => {
        await t.close();
        await sim.close();
      },
    };
  } catch (err) {
    await sim.close();
    throw err;
  }
}

export async function newKey(t: TestGateway, body: Record<string, unknown> = {}): Promise<string> {
  return (await createInferenceKey(t, { name: 'policy', ...body })).key;
}

export async function newMember(t: TestGateway): Promise<string> {
  const res = await t.call('POST', '/organization/members', { body: { email: `member-${Math.random().toString(36).slice(2)}@example.com` } });
  if (res.status !== 201) throw new Error(`member creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

export function chat(t: TestGateway, key: string, model: string, extra: Record<string, unknown> = {}) {
  return t.call('POST', '/chat/completions', { key, body: { model, messages: [{ role: 'user', content: 'hello' }], ...extra }, headers: { 'X-Gateway-Metadata': 'enabled' } });
}

/** A refusal that comes from the policy (a guardrail or the organization settings), not from availability. */
export function isPolicyRefusal(res: { status: number; body: any }): boolean {
  return (res.status === 403 && /^Blocked by guardrail "/.test(res.body?.error?.message ?? '')) || (res.status === 404 && res.body?.error?.metadata?.policy !== undefined);
}

export interface Views {
  /** Ids listed by GET /models/user, sorted. */
  listed: string[];
  /** The listed models by id. */
  byId: Map<string, any>;
  /** Chat replies per model. */
  replies: Map<string, { status: number; body: any }>;
}

/**
 * GET /models/user for the key, and a chat request to every model of the catalog: a model is listed if and only if
 * its chat request succeeds; a model not listed fails, by policy unless it is unreachable anyway (no credentials).
 */
export async function views(t: TestGateway, key: string): Promise<Views> {
  const res = await t.call('GET', '/models/user', { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const listed = res.body.data.map((m: any) => m.id).sort();
  expect(res.body.total_count).toBe(listed.length);
  const replies = new Map<string, { status: number; body: any }>();
  for (const m of ALL_MODELS) {
    const r = await chat(t, key, m);
    replies.set(m, r);
    const ctx = `${m}: ${r.status} ${JSON.stringify(r.body?.error ?? r.body?.model)}`;
    if (listed.includes(m)) {
      expect(r.status, ctx).toBe(200);
      expect(r.body.model, ctx).toBe(m);
    } else {
      expect(r.status, ctx).not.toBe(200);
      // test/nocreds is unreachable anyway (the policy may still be what refuses it first); any other model that is
      // not listed is refused by the policy.
      if (m === 'test/nocreds') expect(isPolicyRefusal(r) || (r.status === 404 && r.body.error.metadata.excluded_by.includes('no_credentials')), ctx).toBe(true);
      else expect(isPolicyRefusal(r), ctx).toBe(true);
    }
  }
  return { listed, byId: new Map(res.body.data.map((m: any) => [m.id, m])), replies };
}

export const without = (...ids: string[]) => REACHABLE.filter((m) => !ids.includes(m));
