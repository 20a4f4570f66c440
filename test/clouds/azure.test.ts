/**
 * Azure OpenAI through the gateway (docs/clouds.md): chat on a deployment with the operator's api-key, embeddings
 * through the OpenAI SDK, Entra ID bearer auth, a workspace's BYOK Azure key, Azure's errors and fallbacks. The
 * fidelity matrix (test/fidelity/) covers every inbound API × Azure chat completions and Responses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { buildCatalog } from '../../src/core/catalog-build.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { createInferenceKey } from '../helpers.js';

const ZDR = { training: false, retains_prompts: false, zdr: true };

describe('Azure OpenAI upstream', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', {
      env: { GATEWAY_ENCRYPTION_KEY: 'azure-test-encryption-key-0123456789abcdef' },
      catalog: (sim) => ({
        providers: [
          { slug: 'az-key', name: 'Azure (key)', protocol: 'azure-openai', base_url: `${sim}/az-key`, api_key: 'operator-azure-key', data_policy: ZDR },
          { slug: 'az-entra', name: 'Azure (Entra)', protocol: 'azure-openai', base_url: `${sim}/az-entra`, api_key: 'entra-access-token', cloud: { auth: 'entra', api_version: '2025-01-01-preview' }, data_policy: ZDR },
          { slug: 'az-byok', name: 'Azure (BYOK only)', protocol: 'azure-openai', base_url: `${sim}/az-byok`, data_policy: ZDR },
        ],
        models: [
          { id: 'test/azure-chat', name: 'Azure chat', context_length: 128000 },
          { id: 'test/azure-embed', name: 'Azure embeddings', context_length: 8192, input_modalities: ['text'], output_modalities: ['embeddings'] },
        ],
        endpoints: [
          { model: 'test/azure-chat', provider: 'az-key', upstream_model: 'gpt4o-prod', pricing: { prompt: '0.000001', completion: '0.000002' }, supported_parameters: ['max_tokens', 'temperature'] },
          { model: 'test/azure-chat', provider: 'az-entra', upstream_model: 'gpt4o-entra', pricing: { prompt: '0.000001', completion: '0.000002' }, supported_parameters: ['max_tokens', 'temperature'] },
          { model: 'test/azure-chat', provider: 'az-byok', upstream_model: 'gpt4o-team', pricing: { prompt: '0.000001', completion: '0.000002' }, supported_parameters: ['max_tokens', 'temperature'] },
          { model: 'test/azure-embed', provider: 'az-key', upstream_model: 'emb-small', pricing: { prompt: '0.00000002', completion: '0' }, supported_parameters: ['dimensions'] },
        ],
      }),
    });
  });
  afterAll(async () => env?.close());

  const client = (key = env.key) => new OpenAI({ baseURL: env.t.api, apiKey: key, maxRetries: 0 });
  const chat = (only: string[], key?: string) => client(key).chat.completions.create({ model: 'test/azure-chat', messages: [{ role: 'user', content: 'hello azure' }], max_tokens: 8, provider: { only } } as never) as Promise<OpenAI.ChatCompletion>;
  const last = (p: string) => env.sim.requests.filter((r) => r.provider === p).at(-1)!;

  it('chat completions on the deployment with the api-key header', async () => {
    const r = await chat(['az-key']);
    expect(r.choices[0].message.content).toMatch(/^Simulated reply to: hello azure/);
    const up = last('az-key');
    expect(up.path).toBe('/openai/deployments/gpt4o-prod/chat/completions');
    expect(up.headers['api-key']).toBe('operator-azure-key');
    expect(up.headers.authorization).toBeUndefined();
  });

  it('Entra ID: the token as a bearer, the configured api-version', async () => {
    await chat(['az-entra']);
    const up = env.sim.requests.filter((r) => r.provider === 'az-entra').at(-1)!;
    expect(up.headers.authorization).toBe('Bearer entra-access-token');
    expect(up.headers['api-key']).toBeUndefined();
  });

  it('embeddings through the OpenAI SDK on the embeddings deployment', async () => {
    const e = await client().embeddings.create({ model: 'test/azure-embed', input: ['one', 'two'] });
    expect(e.data).toHaveLength(2);
    expect(e.usage.prompt_tokens).toBeGreaterThan(0);
    expect(last('az-key').path).toBe('/openai/deployments/emb-small/embeddings');
  });

  it("a deployment that does not exist is Azure's DeploymentNotFound, and the next endpoint serves", async () => {
    env.sim.setKnobs('az-key', { models: ['emb-small'] });
    try {
      const failed = await chat(['az-key']).catch((e: InstanceType<typeof OpenAI.APIError>) => e);
      expect(failed).toBeInstanceOf(OpenAI.APIError);
      expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect(String((failed as Error).message)).toContain('deployment');
      const served = await chat(['az-key', 'az-entra']);
      expect(served.choices[0].message.content).toBeTruthy();
    } finally {
      env.sim.setKnobs('az-key', { models: null });
    }
  });

  it("a workspace's BYOK Azure key is sent as its api-key", async () => {
    const created = await env.t.call('POST', '/byok', { body: { provider: 'az-byok', key: 'team-azure-key-0001' } });
    expect(created.status).toBe(201);
    const r = (await chat(['az-byok'])) as OpenAI.ChatCompletion & { usage: { is_byok: boolean } };
    expect(r.usage.is_byok).toBe(true);
    expect(last('az-byok').headers['api-key']).toBe('team-azure-key-0001');
    const other = await createInferenceKey(env.t, { name: 'other workspace', workspace_id: (await env.t.call('POST', '/workspaces', { body: { name: 'Other', slug: 'other-az' } })).body.data.id });
    expect(await chat(['az-byok'], other.key).catch((e: { status?: number }) => e.status)).toBe(404);
  });

  it("the catalog refuses cloud settings a protocol does not have, naming them", () => {
    const catalog = (cloud: Record<string, string>, protocol = 'azure-openai') => () => buildCatalog({ providers: [{ slug: 'az', name: 'Az', protocol, base_url: 'https://x.openai.azure.com', cloud }] }, { providers: [], models: [], endpoints: [] });
    expect(catalog({ auth: 'password' })).toThrow(/providers\[0\]\.cloud\.auth must be api-key or entra/);
    expect(catalog({ api_version: 'latest-ish' })).toThrow(/cloud\.api_version must be an Azure api-version/);
    expect(catalog({ region: 'x' })).toThrow(/cloud\.region is not a azure-openai setting/);
    expect(catalog({ auth: 'entra' }, 'openai')).toThrow(/cloud is for the cloud protocols/);
  });
});
