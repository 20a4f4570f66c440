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
  const provider = (slug: string, dp = { training: false, retains_prompts: false, zdr: true }, protocol = 'openai', version = 'v1') => ({
    slug,
    name: `Sim ${slug.slice(4).toUpperCase()}`,
    protocol,
    base_url: `${simUrl}/${slug}/${version}`,
    no_auth: true,
    data_policy: dp,
  });
  const zdr = { training: false, retains_prompts: false, zdr: true };
  const params = ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'seed', 'tools', 'tool_choice', 'response_format', 'frequency_penalty', 'presence_penalty', 'logprobs', 'top_logprobs'];
  return {
    providers: [
      provider('sim-a'),
      provider('sim-b', { training: true, retains_prompts: true, zdr: false }),
      provider('sim-c'),
      // One simulated provider per other upstream protocol.
      provider('sim-anthropic', zdr, 'anthropic'),
      provider('sim-google', zdr, 'google', 'v1beta'),
      provider('sim-responses', zdr, 'openai-responses'),
      ...(extra.providers ?? []),
    ],
    models: [
      { id: 'test/alpha', name: 'Test Alpha', context_length: 32000 },
      { id: 'test/beta', name: 'Test Beta', context_length: 32000 },
      { id: 'test/unpriced', name: 'Test Unpriced', context_length: 32000 },
      { id: 'test/claude', name: 'Test Claude (Anthropic protocol)', context_length: 200000, input_modalities: ['text', 'image'] },
      { id: 'test/gemini', name: 'Test Gemini (Google protocol)', context_length: 200000, input_modalities: ['text', 'image'] },
      { id: 'test/responses', name: 'Test Responses (OpenAI Responses protocol)', context_length: 200000, input_modalities: ['text', 'image'] },
      ...(extra.models ?? []),
    ],
    endpoints: [
      { model: 'test/alpha', provider: 'sim-a', upstream_model: 'alpha-a', pricing: PRICES.a, supported_parameters: params, quantization: 'fp16' },
      { model: 'test/alpha', provider: 'sim-b', upstream_model: 'alpha-b', pricing: PRICES.b, supported_parameters: params.filter((p) => p !== 'tools' && p !== 'tool_choice'), quantization: 'fp8' },
      { model: 'test/beta', provider: 'sim-c', upstream_model: 'beta-c', pricing: PRICES.c, supported_parameters: params },
      { model: 'test/unpriced', provider: 'sim-c', upstream_model: 'unpriced-c', pricing: null, supported_parameters: params },
      { model: 'test/claude', provider: 'sim-anthropic', upstream_model: 'claude-sim', pricing: { prompt: '0.000003', completion: '0.000015', input_cache_read: '0.0000003', input_cache_write: '0.00000375' }, supported_parameters: [...params, 'top_k', 'reasoning', 'include_reasoning'] },
      { model: 'test/gemini', provider: 'sim-google', upstream_model: 'gemini-sim', pricing: { prompt: '0.0000003', completion: '0.0000025', input_cache_read: '0.000000075' }, supported_parameters: [...params, 'top_k', 'reasoning', 'include_reasoning'] },
      { model: 'test/responses', provider: 'sim-responses', upstream_model: 'resp-sim', pricing: { prompt: '0.00000125', completion: '0.00001', input_cache_read: '0.000000125' }, supported_parameters: [...params, 'reasoning', 'include_reasoning'] },
      ...(extra.endpoints ?? []),
    ],
  };
}

export async function startChatEnv(
  backend: Backend = 'sqlite',
  opts: { env?: Record<string, string>; catalog?: Parameters<typeof simCatalog>[1] | ((simUrl: string) => Parameters<typeof simCatalog>[1]); recorder?: { intervalMs: number; batchSize: number } } = {},
): Promise<ChatEnv> {
  const sim = await createSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'gw-chat-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, stringify(simCatalog(sim.url, typeof opts.catalog === 'function' ? opts.catalog(sim.url) : opts.catalog)));
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
