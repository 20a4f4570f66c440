/**
 * Azure OpenAI's images and speech deployments through the gateway (docs/clouds.md), with the `openai` SDK on the
 * simulator: `POST /images` on `/openai/deployments/{d}/images/generations` (gpt-image per token, DALL·E per image),
 * `POST /audio/speech` on `/openai/deployments/{d}/audio/speech`, Azure's api-version and api-key, a BYOK Azure key
 * for images, Azure's errors with fallback, reference images kept off Azure (its edits are multipart only), and the
 * catalog rule that the Azure image and speech protocols need an Azure provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { buildCatalog } from '../../src/core/catalog-build.js';
import { simPng, SIM_IMAGE_TOKENS } from '../../src/sim/images.js';
import { simSpeechAudio } from '../../src/sim/tts.js';
import { tokensOfChars } from '../../src/sim/text.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

const ZDR = { training: false, retains_prompts: false, zdr: true };

describe('Azure OpenAI images and speech', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', {
      env: { GATEWAY_ENCRYPTION_KEY: 'azure-test-encryption-key-0123456789abcdef' },
      catalog: (sim) => ({
        providers: [
          { slug: 'az-img', name: 'Azure images', protocol: 'azure-openai', base_url: `${sim}/az-img`, api_key: 'operator-azure-key', data_policy: ZDR },
          { slug: 'az-img2', name: 'Azure images 2', protocol: 'azure-openai', base_url: `${sim}/az-img2`, api_key: 'second-azure-key', cloud: { api_version: '2024-10-21' }, data_policy: ZDR },
          { slug: 'az-byok-img', name: 'Azure images (BYOK only)', protocol: 'azure-openai', base_url: `${sim}/az-byok-img`, data_policy: ZDR },
          { slug: 'oai-img', name: 'OpenAI images', protocol: 'openai', base_url: `${sim}/oai-img/v1`, no_auth: true, data_policy: ZDR },
        ],
        models: [
          { id: 'test/az-gpt-image', name: 'Azure gpt-image', context_length: 0, input_modalities: ['text', 'image'], output_modalities: ['image'] },
          { id: 'test/az-dalle', name: 'Azure DALL·E', context_length: 0, input_modalities: ['text'], output_modalities: ['image'] },
          { id: 'test/az-tts', name: 'Azure TTS', context_length: 4096, input_modalities: ['text'], output_modalities: ['audio'] },
        ],
        endpoints: [
          { model: 'test/az-gpt-image', provider: 'az-img', upstream_model: 'gpt-image-prod', pricing: { prompt: '0.000005', completion: '0.00004' }, supported_parameters: ['n', 'size', 'quality', 'input_references'] },
          { model: 'test/az-gpt-image', provider: 'az-img2', upstream_model: 'gpt-image-west', pricing: { prompt: '0.00001', completion: '0.00008' }, supported_parameters: ['n', 'size', 'quality'] },
          { model: 'test/az-gpt-image', provider: 'oai-img', upstream_model: 'gpt-image-1', pricing: { prompt: '0.00002', completion: '0.0001' }, supported_parameters: ['n', 'size', 'quality', 'input_references'] },
          { model: 'test/az-gpt-image', provider: 'az-byok-img', upstream_model: 'gpt-image-team', pricing: { prompt: '0.000005', completion: '0.00004' }, supported_parameters: ['n', 'size', 'quality'] },
          { model: 'test/az-dalle', provider: 'az-img', upstream_model: 'dall-e-3', pricing: { image_output: '0.04' }, supported_parameters: ['size', 'quality'] },
          { model: 'test/az-tts', provider: 'az-img', upstream_model: 'tts-prod', speech_protocol: 'azure-openai-tts', pricing: { characters: '0.000015' } },
        ],
      }),
    });
  });
  afterAll(async () => env?.close());

  const client = (key = env.key) => new OpenAI({ baseURL: env.t.api, apiKey: key, maxRetries: 0 });
  const last = (p: string) => env.sim.requests.filter((r) => r.provider === p).at(-1)!;
  type Generated = Omit<OpenAI.ImagesResponse, 'usage'> & { usage: { cost: number; is_byok: boolean } };
  const generate = (body: Record<string, unknown>, key?: string) => client(key).images.generate({ model: 'test/az-gpt-image', prompt: 'a lighthouse', ...body } as never) as unknown as Promise<Generated>;

  it('images.generate on the gpt-image deployment: Azure URL, images api-version, api-key, exact per-token cost', async () => {
    const r = await generate({ n: 2, quality: 'low', provider: { only: ['az-img'] } });
    expect(r.data).toHaveLength(2);
    r.data!.forEach((d, i) => expect(Buffer.from(d.b64_json!, 'base64').equals(simPng(`a lighthouse\u0000${i}`))).toBe(true));
    const up = last('az-img');
    expect(up.path).toBe('/openai/deployments/gpt-image-prod/images/generations');
    expect(new URLSearchParams(up.query).get('api-version')).toBe('2025-04-01-preview');
    expect(up.headers['api-key']).toBe('operator-azure-key');
    expect(up.headers.authorization).toBeUndefined();
    expect(up.body).toMatchObject({ model: 'gpt-image-prod', n: 2, quality: 'low' });
    const input = tokensOfChars('a lighthouse'.length);
    const output = SIM_IMAGE_TOKENS.low * 2;
    expect(r.usage.cost).toBe((input * 50_000 + output * 400_000) / 1e10);
  });

  it('DALL·E 3 on Azure: priced per image; the configured api-version wins', async () => {
    const r = await client().images.generate({ model: 'test/az-dalle', prompt: 'a lighthouse' });
    expect((r as unknown as { usage: { cost: number } }).usage.cost).toBe(0.04);
    expect(last('az-img').path).toBe('/openai/deployments/dall-e-3/images/generations');
    await generate({ provider: { only: ['az-img2'] } });
    expect(new URLSearchParams(last('az-img2').query).get('api-version')).toBe('2024-10-21');
  });

  it("a missing deployment is Azure's DeploymentNotFound, and the next endpoint serves", async () => {
    env.sim.setKnobs('az-img', { models: ['dall-e-3'] });
    try {
      const r = await generate({ provider: { order: ['az-img', 'az-img2'], only: ['az-img', 'az-img2'] } });
      expect(r.data).toHaveLength(1);
      expect(last('az-img2').path).toBe('/openai/deployments/gpt-image-west/images/generations');
      const failed = await generate({ provider: { only: ['az-img'] } }).catch((e: InstanceType<typeof OpenAI.APIError>) => e);
      expect(failed).toBeInstanceOf(OpenAI.APIError);
      expect(String((failed as Error).message)).toContain('deployment');
    } finally {
      env.sim.setKnobs('az-img', { models: null });
    }
  });

  it('reference images never go to Azure (multipart edits only): the OpenAI endpoint serves them; Azure alone is refused naming them', async () => {
    const ref = `data:image/png;base64,${simPng('ref').toString('base64')}`;
    const res = await fetch(`${env.t.api}/images`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}` }, body: JSON.stringify({ model: 'test/az-gpt-image', prompt: 'make it blue', input_references: [{ type: 'image_url', image_url: { url: ref } }] }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { provider: string }).provider).toBe('OpenAI images');
    const azureOnly = await fetch(`${env.t.api}/images`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}` }, body: JSON.stringify({ model: 'test/az-gpt-image', prompt: 'make it blue', input_references: [{ type: 'image_url', image_url: { url: ref } }], provider: { only: ['az-img'] } }) });
    expect(azureOnly.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(await azureOnly.json())).toMatch(/input_references/);
  });

  it("a workspace's BYOK Azure key serves images (is_byok)", async () => {
    const created = await env.t.call('POST', '/byok', { body: { provider: 'az-byok-img', key: 'team-azure-images-key' } });
    expect(created.status).toBe(201);
    const r = await generate({ provider: { only: ['az-byok-img'] } });
    expect(r.usage.is_byok).toBe(true);
    expect(last('az-byok-img').headers['api-key']).toBe('team-azure-images-key');
  });

  it('audio.speech.create on the TTS deployment: Azure URL, speech api-version, the audio bytes', async () => {
    const res = await client().audio.speech.create({ model: 'test/az-tts', input: 'Hello from Azure', voice: 'alloy', response_format: 'mp3' });
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(simSpeechAudio({ input: 'Hello from Azure', voice: 'alloy', format: 'mp3' }))).toBe(true);
    const up = last('az-img');
    expect(up.path).toBe('/openai/deployments/tts-prod/audio/speech');
    expect(new URLSearchParams(up.query).get('api-version')).toBe('2025-03-01-preview');
    expect(up.headers['api-key']).toBe('operator-azure-key');
    expect(up.body).toMatchObject({ model: 'tts-prod', input: 'Hello from Azure', voice: 'alloy' });
  });

  it('the image listing describes Azure endpoints without input_references', async () => {
    const r = (await (await fetch(`${env.t.api}/images/models/test/az-gpt-image/endpoints`)).json()) as { endpoints: Array<{ provider_slug: string; supported_parameters: Record<string, unknown> }> };
    const az = r.endpoints.find((e) => e.provider_slug === 'az-img')!;
    expect(Object.keys(az.supported_parameters).sort()).toEqual(['n', 'quality', 'size']);
  });

  it('the catalog refuses the Azure image and speech protocols on another provider, naming the field', () => {
    const build = (endpoint: Record<string, unknown>, output: string) => () =>
      buildCatalog(
        { providers: [{ slug: 'oai', name: 'OAI', protocol: 'openai', base_url: 'https://api.example.com/v1' }], models: [{ id: 'x/m', name: 'm', context_length: 0, output_modalities: [output] }], endpoints: [{ model: 'x/m', provider: 'oai', ...endpoint }] },
        { providers: [], models: [], endpoints: [] },
      );
    expect(build({ speech_protocol: 'azure-openai-tts', pricing: { characters: '0.00001' } }, 'audio')).toThrow(/endpoints\[0\]\.speech_protocol azure-openai-tts needs an azure-openai provider/);
    expect(build({ image_protocol: 'azure-openai-images', pricing: { image_output: '0.04' } }, 'image')).toThrow(/endpoints\[0\]\.image_protocol azure-openai-images needs an azure-openai provider/);
  });
});
