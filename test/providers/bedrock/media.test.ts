/**
 * Bedrock's image families and Rerank API (providers/bedrock/image-sizes.ts, images.ts, rerank.ts): sizes and ratios
 * mapped per family or refused naming the field, the InvokeModel bodies, answers checked, the agent runtime's URL,
 * model ARN and SigV4 signature (checked by the simulator's own verifier).
 */
import { describe, expect, it } from 'vitest';
import type { EndpointDef, ProviderDef } from '../../../src/core/catalog-types.js';
import { chooseSize, imageFamily } from '../../../src/providers/bedrock/image-sizes.js';
import { bedrockImageAdapter, bedrockImageProblem } from '../../../src/providers/bedrock/images.js';
import { bedrockRerankAdapter, rerankUrl } from '../../../src/providers/bedrock/rerank.js';
import { verifySigV4 } from '../../../src/sim/sigv4.js';

const provider = (region = 'us-west-2', cloud: Record<string, string> = { region }): ProviderDef => ({ slug: 'bedrock', name: 'Bedrock', protocol: 'bedrock', baseUrl: `https://bedrock-runtime.${region}.amazonaws.com`, dataPolicy: { training: false, retainsPrompts: false, zdr: true }, cloud });
const endpoint = (upstreamModel: string, params: string[] = ['n', 'size', 'aspect_ratio', 'seed', 'output_format']) =>
  ({ model: 'x/m', provider: 'bedrock', tag: 'bedrock', upstreamModel, pricing: null, context_length: 0, max_prompt_tokens: null, max_completion_tokens: null, quantization: 'unknown', supported_parameters: params, is_moderated: false, supports_implicit_caching: false }) as EndpointDef;
const KEY = 'AKIDSIMUNIT:simsecret/AKIDSIMUNIT';
const input = (over: Record<string, unknown> = {}) => ({ prompt: 'a fox', n: 1, references: [], options: {}, ...over });

describe('Bedrock image sizes', () => {
  it('knows the families by model id (inference profiles and ARNs too)', () => {
    expect(imageFamily('amazon.nova-canvas-v1:0')).toBe('nova-canvas');
    expect(imageFamily('us.amazon.nova-canvas-v1:0')).toBe('nova-canvas');
    expect(imageFamily('amazon.titan-image-generator-v1')).toBe('titan-image');
    expect(imageFamily('arn:aws:bedrock:us-west-2::foundation-model/stability.sd3-5-large-v1:0')).toBe('stability');
    expect(imageFamily('amazon.titan-embed-text-v2:0')).toBeNull();
  });

  it('maps sizes, tiers and ratios per family, or names the field it cannot take', () => {
    expect(chooseSize('nova-canvas', { size: '1280x720' })).toEqual({ width: 1280, height: 720 });
    expect(chooseSize('nova-canvas', { aspect_ratio: '3:2' })).toEqual({ width: 1248, height: 832 });
    expect(chooseSize('nova-canvas', { size: '1K', aspect_ratio: '1:1' })).toEqual({ width: 1024, height: 1024 });
    expect(chooseSize('nova-canvas', { size: '300x300' })).toMatchObject({ field: 'size' });
    expect(chooseSize('nova-canvas', {})).toBeNull();
    expect(chooseSize('titan-image', { aspect_ratio: '1:1' })).toEqual({ width: 1024, height: 1024 });
    expect(chooseSize('titan-image', { size: '2K' })).toMatchObject({ field: 'size' });
    expect(chooseSize('titan-image', { aspect_ratio: '4:5' })).toMatchObject({ field: 'aspect_ratio' });
    expect(chooseSize('stability', { size: '1344x576' })).toEqual({ ratio: '21:9' });
    expect(chooseSize('stability', { aspect_ratio: '9:21' })).toEqual({ ratio: '9:21' });
    expect(chooseSize('stability', { size: '1536x640' })).toMatchObject({ field: 'size' });
    expect(chooseSize('stability', { size: '2K' })).toMatchObject({ field: 'size' });
    expect(chooseSize('stability', { size: 'big' })).toMatchObject({ field: 'size' });
  });

  it('names n, seed and output_format when the family cannot take them', () => {
    expect(bedrockImageProblem({ n: 6 }, endpoint('amazon.nova-canvas-v1:0'))).toMatchObject({ field: 'n' });
    expect(bedrockImageProblem({ n: 1, seed: 2_147_483_647 }, endpoint('amazon.titan-image-generator-v2:0'))).toMatchObject({ field: 'seed' });
    expect(bedrockImageProblem({ n: 1, output_format: 'gif' }, endpoint('stability.stable-image-core-v1:1'))).toMatchObject({ field: 'output_format' });
    expect(bedrockImageProblem({ n: 1, size: '1024x1024' }, endpoint('amazon.nova-canvas-v1:0'))).toBeNull();
    expect(bedrockImageProblem({ n: 1, size: '1088x1088' }, endpoint('amazon.nova-canvas-v1:0'))).toMatchObject({ field: 'size', message: expect.stringMatching(/above 1024x1024/) });
    expect(bedrockImageProblem({ n: 1 }, endpoint('meta.llama3-8b'))).toMatchObject({ field: 'model' });
  });
});

describe('Bedrock image adapter', () => {
  it('builds the InvokeModel body of each family; options fill what the gateway leaves unset; signs it', async () => {
    const ctx = { provider: provider(), endpoint: endpoint('stability.sd3-5-large-v1:0'), apiKey: KEY };
    const built = bedrockImageAdapter.buildRequest(input({ aspect_ratio: '16:9', seed: 3, output_format: 'webp', quality: 'high', options: { negative_prompt: 'blur' } }), ctx);
    expect(built.req.url.toString()).toBe('https://bedrock-runtime.us-west-2.amazonaws.com/model/stability.sd3-5-large-v1%3A0/invoke');
    expect(JSON.parse(built.req.body)).toEqual({ prompt: 'a fox', aspect_ratio: '16:9', seed: 3, output_format: 'webp', negative_prompt: 'blur' });
    expect(built.dropped).toEqual(['quality']);
    const signed = await bedrockImageAdapter.authorize!(built.req, ctx);
    expect(verifySigV4({ method: 'POST', path: signed.url.pathname, query: '', headers: { ...signed.headers, host: signed.url.host }, body: signed.body }, 'bedrock')).toBeNull();
    const titan = bedrockImageAdapter.buildRequest(input({ n: 2, size: '768x1280', seed: 9, output_format: 'jpeg' }), { ...ctx, endpoint: endpoint('amazon.titan-image-generator-v2:0', ['n', 'size']) });
    expect(JSON.parse(titan.req.body)).toEqual({ taskType: 'TEXT_IMAGE', textToImageParams: { text: 'a fox' }, imageGenerationConfig: { numberOfImages: 2, width: 768, height: 1280 } });
    expect(titan.dropped.sort()).toEqual(['output_format', 'seed']);
  });

  it('reads images back; filtered, erroneous or empty answers are no image (502)', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]).toString('base64');
    expect(bedrockImageAdapter.parse(JSON.stringify({ images: [png, png] })).images).toEqual([
      { b64: png, mediaType: 'image/png' },
      { b64: png, mediaType: 'image/png' },
    ]);
    expect(bedrockImageAdapter.parse(JSON.stringify({ seeds: [1], finish_reasons: [null], images: [png] })).images).toHaveLength(1);
    expect(() => bedrockImageAdapter.parse(JSON.stringify({ finish_reasons: ['Filter reason: prompt'] }))).toThrow(/Filter reason: prompt/);
    expect(() => bedrockImageAdapter.parse(JSON.stringify({ images: [], error: 'blocked' }))).toThrow(/blocked/);
    expect(() => bedrockImageAdapter.parse(JSON.stringify({ images: ['not base64!'] }))).toThrow(/not base64/);
    expect(() => bedrockImageAdapter.parse('<html>')).toThrow(/not JSON/);
  });
});

describe('Bedrock rerank adapter', () => {
  it("goes to the agent runtime's /rerank with the model's ARN in the key's region, signed for service bedrock", async () => {
    expect(rerankUrl(provider()).toString()).toBe('https://bedrock-agent-runtime.us-west-2.amazonaws.com/rerank');
    expect(rerankUrl({ ...provider(), baseUrl: 'http://127.0.0.1:9/br' }).toString()).toBe('http://127.0.0.1:9/br/rerank');
    const key = JSON.stringify({ access_key_id: 'AKIDSIMEU', secret_access_key: 'simsecret/AKIDSIMEU', region: 'eu-central-1' });
    const ep = endpoint('cohere.rerank-v3-5:0', ['top_n']);
    const built = bedrockRerankAdapter.build({ query: 'q', documents: ['a', { text: 'b' }], top_n: 1 }, ep, provider(), key);
    const body = JSON.parse(built.body);
    expect(body.rerankingConfiguration.bedrockRerankingConfiguration).toEqual({ modelConfiguration: { modelArn: 'arn:aws:bedrock:eu-central-1::foundation-model/cohere.rerank-v3-5:0' }, numberOfResults: 1 });
    expect(body.sources[1]).toEqual({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'b' } } });
    const signed = await bedrockRerankAdapter.authorize!({ url: built.url, headers: built.headers, body: built.body }, { provider: provider(), endpoint: ep, apiKey: key });
    expect(signed.url.hostname).toBe('bedrock-agent-runtime.eu-central-1.amazonaws.com');
    expect(signed.headers.authorization).toMatch(/Credential=AKIDSIMEU\/\d{8}\/eu-central-1\/bedrock\/aws4_request/);
    expect(verifySigV4({ method: 'POST', path: signed.url.pathname, query: '', headers: { ...signed.headers, host: signed.url.host }, body: signed.body }, 'bedrock')).toBeNull();
    expect(bedrockRerankAdapter.accepts(['a', { text: 'b' }])).toBe(true);
    expect(bedrockRerankAdapter.accepts([{ image: 'data:image/png;base64,AA' }])).toBe(false);
    expect(bedrockRerankAdapter.accepts(Array.from({ length: 1001 }, () => 'x'))).toBe(false);
  });

  it('reads results; an index out of range or twice is an invalid answer', () => {
    expect(bedrockRerankAdapter.parse(JSON.stringify({ results: [{ index: 1, relevanceScore: 0.9 }, { index: 0, relevanceScore: 0.1 }] }), 2)).toEqual({ results: [{ index: 1, score: 0.9 }, { index: 0, score: 0.1 }], totalTokens: null, searchUnits: null, upstreamId: null });
    expect(() => bedrockRerankAdapter.parse(JSON.stringify({ results: [{ index: 2, relevanceScore: 0.9 }] }), 2)).toThrow(/result index 2/);
    expect(() => bedrockRerankAdapter.parse(JSON.stringify({ results: [{ index: 0, relevanceScore: 0.9 }, { index: 0, relevanceScore: 0.8 }] }), 2)).toThrow(/result index 0/);
    expect(() => bedrockRerankAdapter.parse(JSON.stringify({ results: [{ index: 0 }] }), 2)).toThrow();
  });
});
