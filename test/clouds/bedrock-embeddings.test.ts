/**
 * Embeddings on Amazon Bedrock through InvokeModel (docs/clouds.md), with the `openai` SDK's `embeddings.create` on
 * the simulator (which verifies every SigV4 signature): Cohere Embed in batches (input_type passed, base64 output),
 * Titan one input per call with dimensions (a batch skips Titan for the next endpoint, or is refused naming why), a
 * wrong secret failing over, and a catalog that routes `bedrock` embeddings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { simEmbedding } from '../../src/sim/embeddings.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

const ZDR = { training: false, retains_prompts: false, zdr: true };
const COHERE = 'cohere.embed-english-v3';
const TITAN = 'amazon.titan-embed-text-v2:0';

describe('Bedrock embeddings (InvokeModel)', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', {
      catalog: (sim) => ({
        providers: [
          { slug: 'br-emb', name: 'Bedrock embeddings', protocol: 'bedrock', base_url: `${sim}/br-emb`, api_key: 'AKIDSIMEMB:simsecret/AKIDSIMEMB', cloud: { region: 'us-east-1' }, data_policy: ZDR },
          { slug: 'br-emb-bad', name: 'Bedrock (wrong secret)', protocol: 'bedrock', base_url: `${sim}/br-emb-bad`, api_key: 'AKIDSIMBAD:wrong-secret', cloud: { region: 'us-east-1' }, data_policy: ZDR },
        ],
        models: [
          { id: 'test/br-cohere', name: 'Cohere Embed on Bedrock', context_length: 512, input_modalities: ['text'], output_modalities: ['embeddings'] },
          { id: 'test/br-titan', name: 'Titan on Bedrock', context_length: 8192, input_modalities: ['text'], output_modalities: ['embeddings'] },
        ],
        endpoints: [
          { model: 'test/br-cohere', provider: 'br-emb-bad', upstream_model: COHERE, pricing: { prompt: '0.0000001', completion: '0' }, supported_parameters: ['input_type'] },
          { model: 'test/br-cohere', provider: 'br-emb', upstream_model: COHERE, pricing: { prompt: '0.0000001', completion: '0' }, supported_parameters: ['input_type'] },
          { model: 'test/br-titan', provider: 'br-emb', upstream_model: TITAN, pricing: { prompt: '0.00000002', completion: '0' }, supported_parameters: ['dimensions'] },
        ],
      }),
    });
  });
  afterAll(async () => env?.close());

  const client = () => new OpenAI({ baseURL: env.t.api, apiKey: env.key, maxRetries: 0 });
  const last = (p: string) => env.sim.requests.filter((r) => r.provider === p).at(-1)!;

  it('Cohere Embed: a batch in one signed InvokeModel call, input_type passed, vectors in order', async () => {
    const r = await client().embeddings.create({ model: 'test/br-cohere', input: ['first text', 'second text'], input_type: 'search_query', provider: { only: ['br-emb'] } } as never);
    expect(r.data.map((d) => d.index)).toEqual([0, 1]);
    const want = (t: string) => simEmbedding(t, COHERE, 1024);
    expect(r.data[0].embedding).toEqual(want('first text'));
    expect(r.data[1].embedding).toEqual(want('second text'));
    const up = last('br-emb');
    expect(up.path).toBe(`/model/${encodeURIComponent(COHERE)}/invoke`);
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ texts: ['first text', 'second text'], input_type: 'search_query', embedding_types: ['float'] });
    expect(String(up.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDSIMEMB\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
    expect(r.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('base64 output is float32 bytes of the same vector', async () => {
    const r = await fetch(`${env.t.api}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}` }, body: JSON.stringify({ model: 'test/br-cohere', input: 'hello', encoding_format: 'base64', provider: { only: ['br-emb'] } }) });
    const body = (await r.json()) as { data: Array<{ embedding: string }> };
    const bytes = Buffer.from(body.data[0].embedding, 'base64');
    const floats = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(floats).toEqual(simEmbedding('hello', COHERE, 1024));
  });

  it('a wrong secret is refused by the signature check (403) and the next endpoint serves', async () => {
    const r = await client().embeddings.create({ model: 'test/br-cohere', input: 'fallback please', provider: { order: ['br-emb-bad', 'br-emb'] } } as never);
    expect(r.data).toHaveLength(1);
    expect(last('br-emb-bad').status).toBe(403);
    expect(last('br-emb').body).toMatchObject({ texts: ['fallback please'] });
  });

  it('Titan: one input with dimensions, the token count Bedrock reports', async () => {
    const r = await client().embeddings.create({ model: 'test/br-titan', input: 'titan text', dimensions: 256 });
    expect(r.data[0].embedding).toEqual(simEmbedding('titan text', TITAN, 256));
    expect(last('br-emb').body).toEqual({ inputText: 'titan text', normalize: true, dimensions: 256 });
  });

  it('Titan takes one input per call: a batch has no endpoint (refused, naming why); bad dimensions fail upstream', async () => {
    const batch = await client().embeddings.create({ model: 'test/br-titan', input: ['a', 'b'] }).catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(batch).toBeInstanceOf(OpenAI.APIError);
    expect((batch as InstanceType<typeof OpenAI.APIError>).status).toBeGreaterThanOrEqual(400);
    expect((batch as InstanceType<typeof OpenAI.APIError>).status).toBeLessThan(500);
    const dims = await client().embeddings.create({ model: 'test/br-titan', input: 'x', dimensions: 300 }).catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(dims).toBeInstanceOf(OpenAI.APIError);
    expect(last('br-emb').status).toBe(400);
  });
});
