/**
 * Amazon Bedrock through the gateway (docs/clouds.md): Converse and ConverseStream signed with SigV4 (the simulator
 * verifies every signature), through the official SDKs; a workspace's BYOK AWS key pair; Bedrock's errors, a refused
 * signature falling back, an exception inside the event stream. The fidelity matrix covers every inbound API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

const ZDR = { training: false, retains_prompts: false, zdr: true };
const MODEL = 'anthropic.claude-sim-v1:0';

describe('Amazon Bedrock upstream', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', {
      env: { GATEWAY_ENCRYPTION_KEY: 'bedrock-test-encryption-key-0123456789abcdef' },
      catalog: (sim) => ({
        providers: [
          { slug: 'br-ops', name: 'Bedrock (operator)', protocol: 'bedrock', base_url: `${sim}/br-ops`, api_key: 'AKIDSIMOPS:simsecret/AKIDSIMOPS', cloud: { region: 'us-east-1' }, data_policy: ZDR },
          { slug: 'br-bad', name: 'Bedrock (wrong secret)', protocol: 'bedrock', base_url: `${sim}/br-bad`, api_key: 'AKIDSIMBAD:wrong-secret', cloud: { region: 'us-east-1' }, data_policy: ZDR },
          { slug: 'br-throttled', name: 'Bedrock (throttled)', protocol: 'bedrock', base_url: `${sim}/br-throttled`, api_key: 'AKIDSIMOPS:simsecret/AKIDSIMOPS', cloud: { region: 'us-east-1' }, data_policy: ZDR },
          { slug: 'br-team', name: 'Bedrock (BYOK only)', protocol: 'bedrock', base_url: `${sim}/br-team`, cloud: { region: 'us-west-2' }, data_policy: ZDR },
        ],
        models: [{ id: 'test/bedrock', name: 'Bedrock Claude', context_length: 200000 }],
        endpoints: ['br-ops', 'br-bad', 'br-throttled', 'br-team'].map((p) => ({ model: 'test/bedrock', provider: p, upstream_model: MODEL, pricing: { prompt: '0.000003', completion: '0.000015' }, supported_parameters: ['max_tokens', 'temperature', 'tools', 'tool_choice', 'reasoning'] })),
      }),
    });
  });
  afterAll(async () => env?.close());

  const anthropic = () => new Anthropic({ baseURL: `${env.t.url}/api`, authToken: env.key, apiKey: null, maxRetries: 0 });
  const openai = () => new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
  const last = (p: string) => env.sim.requests.filter((r) => r.provider === p).at(-1)!;

  it('Messages through the Anthropic SDK, streamed over ConverseStream, signed for us-east-1', async () => {
    const msg = await anthropic()
      .messages.stream({ model: 'test/bedrock', max_tokens: 64, messages: [{ role: 'user', content: 'hello bedrock' }], provider: { only: ['br-ops'] } } as never)
      .finalMessage();
    expect(msg.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^Simulated reply to: hello bedrock/) });
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
    const up = last('br-ops');
    expect(up.path).toBe(`/model/${encodeURIComponent(MODEL)}/converse-stream`);
    expect(up.status).toBe(200);
    expect(String(up.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDSIMOPS\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
  });

  it('a refused signature (wrong secret) is an authentication failure, and the next endpoint serves', async () => {
    const failed = await openai()
      .chat.completions.create({ model: 'test/bedrock', messages: [{ role: 'user', content: 'hi' }], provider: { only: ['br-bad'] } } as never)
      .catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect(last('br-bad').status).toBe(403);
    const served = (await openai().chat.completions.create({ model: 'test/bedrock', messages: [{ role: 'user', content: 'hi' }], provider: { order: ['br-bad', 'br-ops'] } } as never)) as OpenAI.ChatCompletion;
    expect(served.choices[0].message.content).toBeTruthy();
  });

  it("a workspace's BYOK key pair (JSON, with its region) signs its requests; a key that is not one is refused", async () => {
    const bad = await env.t.call('POST', '/byok', { body: { provider: 'br-team', key: 'not-an-aws-key' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^key: not a Bedrock \(BYOK only\) credential/);
    const ok = await env.t.call('POST', '/byok', { body: { provider: 'br-team', key: JSON.stringify({ access_key_id: 'AKIDSIMTEAM', secret_access_key: 'simsecret/AKIDSIMTEAM', region: 'eu-west-1' }) } });
    expect(ok.status).toBe(201);
    const r = (await openai().chat.completions.create({ model: 'test/bedrock', messages: [{ role: 'user', content: 'team call' }], provider: { only: ['br-team'] } } as never)) as OpenAI.ChatCompletion & { usage: { is_byok: boolean } };
    expect(r.usage.is_byok).toBe(true);
    expect(String(last('br-team').headers.authorization)).toMatch(/Credential=AKIDSIMTEAM\/\d{8}\/eu-west-1\/bedrock\/aws4_request/);
  });

  it('an exception inside the event stream after content ends the client stream with an error event', async () => {
    env.sim.setKnobs('br-ops', { errorAfterChunks: 2 });
    try {
      const s = await openai().chat.completions.create({ model: 'test/bedrock', messages: [{ role: 'user', content: 'stream then fail' }], stream: true, provider: { only: ['br-ops'] } } as never);
      let text = '';
      const err = await (async () => {
        for await (const c of s as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) text += c.choices[0]?.delta?.content ?? '';
      })().catch((e: Error) => e);
      expect(text.length).toBeGreaterThan(0);
      expect(err).toBeInstanceOf(Error);
    } finally {
      env.sim.setKnobs('br-ops', { errorAfterChunks: null });
    }
  });

  it("Bedrock's throttling is a 429 with its message", async () => {
    env.sim.setKnobs('br-throttled', { errorStatus: 429 });
    try {
      const e = await openai()
        .chat.completions.create({ model: 'test/bedrock', messages: [{ role: 'user', content: 'hi' }], provider: { only: ['br-throttled'] } } as never)
        .catch((x: InstanceType<typeof OpenAI.APIError>) => x);
      expect((e as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
      expect(String((e as Error).message)).toContain('Too many requests');
    } finally {
      env.sim.setKnobs('br-throttled', { errorStatus: null });
    }
  });
});
