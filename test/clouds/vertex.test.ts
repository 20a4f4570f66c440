/**
 * Google Vertex AI through the gateway (docs/clouds.md): the service-account token flow against the simulator's token
 * endpoint (JWT verified there), the token cached and refreshed, Gemini and Anthropic models on Vertex through the
 * official SDKs, a workspace's BYOK service account, and what happens with a key the token endpoint refuses.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { tokenExchanges } from '../../src/providers/vertex/index.js';
import { trustServiceAccount } from '../../src/sim/index.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

const ZDR = { training: false, retains_prompts: false, zdr: true };

function serviceAccount(email: string, trusted = true): string {
  const k = generateKeyPairSync('rsa', { modulusLength: 2048 });
  if (trusted) trustServiceAccount(email, k.publicKey.export({ type: 'spki', format: 'pem' }) as string);
  return JSON.stringify({ type: 'service_account', project_id: 'team-project', client_email: email, private_key: k.privateKey.export({ type: 'pkcs8', format: 'pem' }) });
}

const OPERATOR = serviceAccount('operator@ops-project.iam.gserviceaccount.com');
const UNTRUSTED = serviceAccount('stranger@nowhere.iam.gserviceaccount.com', false);

describe('Google Vertex AI upstream', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', {
      env: { GATEWAY_ENCRYPTION_KEY: 'vertex-test-encryption-key-0123456789abcdef' },
      catalog: (sim) => {
        const cloud = (p: string) => ({ project: 'ops-project', location: 'us-east5', token_url: `${sim}/${p}/token` });
        return {
          providers: [
            { slug: 'vx-gemini', name: 'Vertex Gemini', protocol: 'vertex', base_url: `${sim}/vx-gemini`, api_key: OPERATOR, cloud: cloud('vx-gemini'), data_policy: ZDR },
            { slug: 'vx-claude', name: 'Vertex Claude', protocol: 'vertex-anthropic', base_url: `${sim}/vx-claude`, api_key: OPERATOR, cloud: cloud('vx-claude'), data_policy: ZDR },
            { slug: 'vx-stranger', name: 'Vertex (untrusted key)', protocol: 'vertex', base_url: `${sim}/vx-stranger`, api_key: UNTRUSTED, cloud: cloud('vx-stranger'), data_policy: ZDR },
            { slug: 'vx-team', name: 'Vertex (BYOK only)', protocol: 'vertex', base_url: `${sim}/vx-team`, cloud: { location: 'europe-west4', token_url: `${sim}/vx-team/token` }, data_policy: ZDR },
          ],
          models: [
            { id: 'test/vx-gemini', name: 'Gemini on Vertex', context_length: 1000000 },
            { id: 'test/vx-claude', name: 'Claude on Vertex', context_length: 200000 },
          ],
          endpoints: [
            { model: 'test/vx-gemini', provider: 'vx-gemini', upstream_model: 'gemini-2.5-flash', pricing: { prompt: '0.0000003', completion: '0.0000025' }, supported_parameters: ['max_tokens'] },
            { model: 'test/vx-gemini', provider: 'vx-stranger', upstream_model: 'gemini-2.5-flash', pricing: { prompt: '0.0000003', completion: '0.0000025' }, supported_parameters: ['max_tokens'] },
            { model: 'test/vx-gemini', provider: 'vx-team', upstream_model: 'gemini-2.5-flash', pricing: { prompt: '0.0000003', completion: '0.0000025' }, supported_parameters: ['max_tokens'] },
            { model: 'test/vx-claude', provider: 'vx-claude', upstream_model: 'claude-sonnet-4-5@20250929', pricing: { prompt: '0.000003', completion: '0.000015' }, supported_parameters: ['max_tokens'] },
          ],
        };
      },
    });
  });
  afterAll(async () => env?.close());

  const openai = () => new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
  const ask = (model: string, only: string[]) => openai().chat.completions.create({ model, messages: [{ role: 'user', content: 'hello vertex' }], max_tokens: 16, provider: { only } } as never) as unknown as Promise<OpenAI.ChatCompletion & { usage: { is_byok: boolean } }>;
  const calls = (p: string) => env.sim.requests.filter((r) => r.provider === p);

  it('Gemini on Vertex: one token exchange, then the cached token for every call', async () => {
    const before = tokenExchanges.count;
    for (let i = 0; i < 3; i++) expect((await ask('test/vx-gemini', ['vx-gemini'])).choices[0].message.content).toMatch(/^Simulated reply/);
    expect(tokenExchanges.count - before).toBe(1);
    const up = calls('vx-gemini').at(-1)!;
    expect(up.path).toBe('/v1/projects/ops-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(String(up.headers.authorization)).toMatch(/^Bearer ya29\.sim-/);
    expect(up.headers['x-goog-api-key']).toBeUndefined();
  });

  it('Claude on Vertex through the Anthropic SDK, streamed (streamRawPredict), one token per service account and token endpoint', async () => {
    const before = tokenExchanges.count;
    const claude = () =>
      new Anthropic({ baseURL: `${env.t.url}/api`, authToken: env.key, apiKey: null, maxRetries: 0 })
        .messages.stream({ model: 'test/vx-claude', max_tokens: 64, messages: [{ role: 'user', content: 'hello claude on vertex' }] })
        .finalMessage();
    const msg = await claude();
    expect(msg.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^Simulated reply to: hello claude on vertex/) });
    await claude();
    // This provider names its own token endpoint (cloud.token_url): one exchange there, then the cached token.
    expect(tokenExchanges.count - before).toBe(1);
    const up = calls('vx-claude').at(-1)!;
    expect(up.path).toBe('/v1/projects/ops-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict');
    expect(up.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: true });
    expect((up.body as Record<string, unknown>).model).toBeUndefined();
  });

  it('a key the token endpoint refuses is an authentication failure (502), and the next endpoint serves', async () => {
    const failed = await ask('test/vx-gemini', ['vx-stranger']).catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect(calls('vx-stranger')).toHaveLength(0); // refused at the token endpoint: no model call was made
    expect((await ask('test/vx-gemini', ['vx-stranger', 'vx-gemini'])).choices[0].message.content).toBeTruthy();
  });

  it("a workspace's BYOK service account: validated, exchanged for its own token, the project from its key file", async () => {
    const bad = await env.t.call('POST', '/byok', { body: { provider: 'vx-team', key: '{"client_email":"x@y"}' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^key: not a Vertex \(BYOK only\) credential: the key file has no private_key/);
    const team = serviceAccount('team@team-project.iam.gserviceaccount.com');
    expect((await env.t.call('POST', '/byok', { body: { provider: 'vx-team', key: team } })).status).toBe(201);
    const r = await ask('test/vx-gemini', ['vx-team']);
    expect(r.usage.is_byok).toBe(true);
    expect(calls('vx-team').at(-1)!.path).toBe('/v1/projects/team-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent');
  });

  it('a token about to expire is refreshed before use', async () => {
    const team2 = serviceAccount('short-lived@ops-project.iam.gserviceaccount.com');
    // Tokens of 30 s are within the refresh margin (60 s): every call exchanges a fresh one.
    env.sim.setKnobs('vx-team', { tokenExpiresIn: 30 });
    try {
      const list = await env.t.call('GET', '/byok');
      for (const c of list.body.data) await env.t.call('DELETE', `/byok/${c.id}`);
      await env.t.call('POST', '/byok', { body: { provider: 'vx-team', key: team2 } });
      const before = tokenExchanges.count;
      await ask('test/vx-gemini', ['vx-team']);
      await ask('test/vx-gemini', ['vx-team']);
      expect(tokenExchanges.count - before).toBe(2);
    } finally {
      env.sim.setKnobs('vx-team', { tokenExpiresIn: null });
    }
  });
});
