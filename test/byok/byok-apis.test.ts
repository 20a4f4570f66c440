/**
 * `is_byok` outside chat's own answers (docs/byok.md): a speech request that failed on a workspace's credential says so
 * in its error (`error.metadata.is_byok`, and `gateway_metadata.is_byok` when asked), and a server-tool loop whose
 * turns ran on a credential says so in its combined usage — as the generation rows already did.
 *
 * Catalog: test/own-tts on sim-own-tts and test/own on sim-own, both without an operator key (BYOK only), and
 * test/pool-tts on sim-pool-tts with the operator's key (never BYOK).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRICES, startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { generation, speech } from '../speech/util.js';
import { chat } from '../chat/util.js';

const ENC = 'byok-apis-test-encryption-key-0123456789abcdef';
const dp = { training: false, retains_prompts: false, zdr: true };

function extraCatalog(simUrl: string) {
  const model = (id: string, out: string[]) => ({ id, name: id, context_length: 32000, output_modalities: out });
  const tts = (m: string, provider: string) => ({ model: m, provider, upstream_model: 'tts-1', speech_protocol: 'openai-tts', pricing: { characters: '0.000015' } });
  return {
    providers: [
      { slug: 'sim-own-tts', name: 'Sim Own TTS', protocol: 'openai', base_url: `${simUrl}/sim-own-tts/v1`, data_policy: dp },
      { slug: 'sim-pool-tts', name: 'Sim Pool TTS', protocol: 'openai', base_url: `${simUrl}/sim-pool-tts/v1`, api_key: 'operator-tts-key', data_policy: dp },
      { slug: 'sim-own', name: 'Sim Own', protocol: 'openai', base_url: `${simUrl}/sim-own/v1`, data_policy: dp },
    ],
    models: [model('test/own-tts', ['audio']), model('test/pool-tts', ['audio']), model('test/own', ['text'])],
    endpoints: [
      tts('test/own-tts', 'sim-own-tts'),
      tts('test/pool-tts', 'sim-pool-tts'),
      { model: 'test/own', provider: 'sim-own', upstream_model: 'own-1', pricing: PRICES.a, supported_parameters: ['tools', 'tool_choice', 'max_tokens'] },
    ],
  };
}

describe('is_byok in speech errors and server-tool usage', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', { env: { GATEWAY_ENCRYPTION_KEY: ENC }, catalog: extraCatalog });
    for (const provider of ['sim-own-tts', 'sim-own']) expect((await env.t.call('POST', '/byok', { body: { provider, key: `sk-own-${provider}` } })).status).toBe(201);
  });
  afterAll(async () => env?.close());

  it('speech that failed on a credential: error.metadata.is_byok and gateway_metadata.is_byok are true (false on the operator key)', async () => {
    env.sim.setKnobs('sim-own-tts', { errorStatus: 500 });
    env.sim.setKnobs('sim-pool-tts', { errorStatus: 500 });
    const meta = { headers: { 'x-gateway-metadata': 'enabled' } };
    const own = await speech(env, { model: 'test/own-tts', input: 'Hi', voice: 'alloy' }, meta);
    expect(own.status).toBe(502);
    expect(own.body.error.metadata).toMatchObject({ provider_name: 'Sim Own TTS', is_byok: true });
    expect(own.body.gateway_metadata).toMatchObject({ requested: 'test/own-tts', is_byok: true, attempts: [{ provider: 'sim-own-tts', status: 502 }] });
    const rec = await generation(env, own.headers.get('x-generation-id')!);
    expect(rec).toMatchObject({ api_type: 'tts', status: 502 });

    const pool = await speech(env, { model: 'test/pool-tts', input: 'Hi', voice: 'alloy' }, meta);
    expect(pool.status).toBe(502);
    expect(pool.body.error.metadata).toMatchObject({ provider_name: 'Sim Pool TTS', is_byok: false });
    expect(pool.body.gateway_metadata).toMatchObject({ is_byok: false });
  });

  it("a server-tool loop whose turns ran on a credential: the combined usage has is_byok, like each turn's record", async () => {
    const r = await chat(env, { model: 'test/own', tools: [{ type: 'gateway:datetime' }] }, { headers: { 'x-gateway-metadata': 'enabled' } });
    expect(r.status).toBe(200);
    expect(r.body.usage.server_tool_use_details).toMatchObject({ tool_calls_executed: 1 });
    expect(r.body.usage.is_byok).toBe(true);
    const { generations } = r.body.gateway_metadata.server_tools;
    expect(generations).toHaveLength(2);
    for (const id of generations) expect(await generation(env, id)).toMatchObject({ is_byok: true, provider_name: 'sim-own' });
  });
});
