/**
 * Chat test harness: the provider simulator plus a gateway whose catalog routes test models to simulated
 * providers (`sim-a`, `sim-b`, `sim-c`), each a path prefix of one simulator with its own knobs.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createSimulator, type Simulator } from '../src/sim/index.js';
import { createInferenceKey, startGateway, type Backend, type TestGateway } from './helpers.js';

export interface ChatEnv {
  sim: Simulator;
  t: TestGateway;
  key: string;
  keyHash: string;
  close(): Promise<void>;
}

/** Prices in USD per token, chosen so that costs are easy to compute by hand. */
export const PRICES = {
  a: { prompt: '0.000001', completion: '0.000002', input_cache_read: '0.0000001' },
  b: { prompt: '0.000003', completion: '0.000004' },
  c: { prompt: '0.0000005', completion: '0.000001' },
};

export function simCatalog(simUrl: string, extra: { providers?: object[]; models?: object[]; endpoints?: object[] } = {}) {
  const provider = (slug: string, dp = { training: false, retains_prompts: false, zdr: true }) => ({
    slug,
    name: `Sim ${slug.slice(4).toUpperCase()}`,
    protocol: 'openai',
    base_url: `${simUrl}/${slug}/v1`,
    no_auth: true,
    data_policy: dp,
  });
  const params = ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'seed', 'tools', 'tool_choice', 'response_format', 'frequency_penalty', 'presence_penalty', 'logprobs', 'top_logprobs'];
  return {
    providers: [provider('sim-a'), provider('sim-b', { training: true, retains_prompts: true, zdr: false }), provider('sim-c'), ...(extra.providers ?? [])],
    models: [
      { id: 'test/alpha', name: 'Test Alpha', context_length: 32000 },
      { id: 'test/beta', name: 'Test Beta', context_length: 32000 },
      { id: 'test/unpriced', name: 'Test Unpriced', context_length: 32000 },
      ...(extra.models ?? []),
    ],
    endpoints: [
      { model: 'test/alpha', provider: 'sim-a', upstream_model: 'alpha-a', pricing: PRICES.a, supported_parameters: params, quantization: 'fp16' },
      { model: 'test/alpha', provider: 'sim-b', upstream_model: 'alpha-b', pricing: PRICES.b, supported_parameters: params.filter((p) => p !== 'tools' && p !== 'tool_choice'), quantization: 'fp8' },
      { model: 'test/beta', provider: 'sim-c', upstream_model: 'beta-c', pricing: PRICES.c, supported_parameters: params },
      { model: 'test/unpriced', provider: 'sim-c', upstream_model: 'unpriced-c', pricing: null, supported_parameters: params },
      ...(extra.endpoints ?? []),
    ],
  };
}

export async function startChatEnv(
  backend: Backend = 'sqlite',
  opts: { env?: Record<string, string>; catalog?: Parameters<typeof simCatalog>[1]; recorder?: { intervalMs: number; batchSize: number } } = {},
): Promise<ChatEnv> {
  const sim = await createSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'gw-chat-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, stringify(simCatalog(sim.url, opts.catalog)));
  const t = await startGateway(backend, {
    env: { GATEWAY_CONFIG: file, GATEWAY_DEFAULT_CATALOG: 'false', ...opts.env },
    gateway: { recorder: opts.recorder },
  });
  const { key, hash } = await createInferenceKey(t, { name: 'chat-tests' });
  return {
    sim,
    t,
    key,
    keyHash: hash,
    close: async () => {
      await t.close();
      await sim.close();
    },
  };
}
