/**
 * The image adapters (providers/openai-images, providers/gemini-image) as pure translation: requests built per the
 * endpoint's supported parameters, answers checked at the edge (a malformed one is an UpstreamError 502), media types
 * sniffed; the shipped catalog's image endpoints; the cost and the reservation of an images request.
 */
import { describe, expect, it } from 'vitest';
import { imageAdapter } from '../../src/providers/registry.js';
import { sniffImageType } from '../../src/providers/images.js';
import { UpstreamError } from '../../src/core/provider-errors.js';
import type { EndpointDef, ProviderDef } from '../../src/core/catalog-types.js';
import { simPng } from '../../src/sim/images.js';
import { CatalogService } from '../../src/services/catalog.js';
import { shippedCatalog } from '../../src/services/shipped-catalog.js';
import { imageCost, imagesAsk } from '../../src/services/images.js';
import { imageModelEndpoints, imageModels } from '../../src/services/image-models.js';

const provider = (protocol: 'openai' | 'google'): ProviderDef => ({ slug: 'p', name: 'P', protocol, baseUrl: 'http://up/v1', headers: {} }) as unknown as ProviderDef;
const endpoint = (upstreamModel: string, params: string[]): EndpointDef => ({ model: 'm/x', provider: 'p', tag: 'p', upstreamModel, pricing: null, context_length: 0, max_prompt_tokens: null, max_completion_tokens: null, quantization: 'unknown', supported_parameters: params, is_moderated: false, supports_implicit_caching: false });
const base = { prompt: 'a cat', n: 1, references: [], options: {} };
const png = simPng('x').toString('base64');

describe('openai-images adapter', () => {
  const a = imageAdapter('openai-images');
  it('generations: supported fields sent, others dropped; aspect ratio as a size', () => {
    const { req, dropped } = a.buildRequest({ ...base, n: 2, aspect_ratio: '3:2', quality: 'high', seed: 3, background: 'transparent' }, { provider: provider('openai'), endpoint: endpoint('gpt-image-1', ['n', 'size', 'quality']), apiKey: 'sk' });
    expect(req.url.href).toBe('http://up/v1/images/generations');
    expect(req.headers.authorization).toBe('Bearer sk');
    expect(JSON.parse(req.body)).toEqual({ model: 'gpt-image-1', prompt: 'a cat', n: 2, size: '1536x1024', quality: 'high' });
    expect(dropped.sort()).toEqual(['background', 'seed']);
  });
  it('edits: references as images[{image_url}]; DALL·E asks for b64_json with hd quality', () => {
    const edit = a.buildRequest({ ...base, references: [{ url: 'https://x/a.png' }] }, { provider: provider('openai'), endpoint: endpoint('gpt-image-1', ['input_references']), apiKey: null });
    expect(edit.req.url.pathname).toBe('/v1/images/edits');
    expect(JSON.parse(edit.req.body).images).toEqual([{ image_url: 'https://x/a.png' }]);
    const dalle = a.buildRequest({ ...base, quality: 'high' }, { provider: provider('openai'), endpoint: endpoint('dall-e-3', ['quality']), apiKey: null });
    expect(JSON.parse(dalle.req.body)).toEqual({ model: 'dall-e-3', prompt: 'a cat', quality: 'hd', response_format: 'b64_json' });
  });
  it('answers: images with sniffed media types and usage; malformed ones are 502s', () => {
    const ok = a.parse(JSON.stringify({ created: 1, data: [{ b64_json: png }], usage: { input_tokens: 5, output_tokens: 272, total_tokens: 277 } }));
    expect(ok).toEqual({ images: [{ b64: png, mediaType: 'image/png' }], usage: { promptTokens: 5, completionTokens: 272 }, upstreamId: null, text: null });
    for (const bad of ['not json', '{"data": []}', '{"data": [{"b64_json": 42}]}', '{"data": [{"url": "https://x"}]}', '{"data": [{"b64_json": "***"}]}']) {
      expect(() => a.parse(bad), bad).toThrow(UpstreamError);
    }
  });
});

describe('gemini-image adapter', () => {
  const a = imageAdapter('gemini-image');
  it('builds generateContent with TEXT+IMAGE, inline references, aspect ratio and seed', () => {
    expect(a.acceptsReferences([{ url: 'https://x/a.png' }])).toBe(false);
    const { req, dropped } = a.buildRequest({ ...base, aspect_ratio: '16:9', seed: 9, quality: 'high', references: [{ url: `data:image/png;base64,${png}` }] }, { provider: provider('google'), endpoint: endpoint('gemini-2.5-flash-image', ['aspect_ratio', 'seed']), apiKey: 'g' });
    expect(req.url.href).toBe('http://up/v1/models/gemini-2.5-flash-image:generateContent');
    expect(req.headers['x-goog-api-key']).toBe('g');
    expect(JSON.parse(req.body)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a cat' }, { inlineData: { mimeType: 'image/png', data: png } }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9' }, seed: 9 },
    });
    expect(dropped).toEqual(['quality']);
  });
  it('reads inlineData parts and usage; no image or a blocked prompt is a 502', () => {
    const r = a.parse(JSON.stringify({ candidates: [{ content: { parts: [{ text: 'hi' }, { inlineData: { mimeType: 'image/png', data: png } }] } }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1291 }, responseId: 'r1' }));
    expect(r).toEqual({ images: [{ b64: png, mediaType: 'image/png' }], usage: { promptTokens: 3, completionTokens: 1291 }, upstreamId: 'r1', text: 'hi' });
    expect(() => a.parse(JSON.stringify({ candidates: [{ content: { parts: [{ text: 'no' }] }, finishReason: 'STOP' }] }))).toThrow(/no image/);
    expect(() => a.parse(JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' } }))).toThrow(/SAFETY/);
    expect(() => a.parse(JSON.stringify({ candidates: [{ content: { parts: [{ inlineData: { data: 5 } }] } }] }))).toThrow(UpstreamError);
  });
});

describe('images: media types, catalog, cost and reservation', () => {
  it('sniffs PNG, JPEG, WebP and SVG', () => {
    expect(sniffImageType(png)).toBe('image/png');
    expect(sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]).toString('base64'))).toBe('image/jpeg');
    expect(sniffImageType(Buffer.from('RIFF\0\0\0\0WEBPVP8 ').toString('base64'))).toBe('image/webp');
    expect(sniffImageType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64'))).toBe('image/svg+xml');
    expect(sniffImageType(Buffer.from('hello world!').toString('base64'))).toBeNull();
  });

  it('the shipped catalog routes its image models to the images API (Gemini image also to chat)', () => {
    const c = new CatalogService(shippedCatalog(), {});
    expect([...c.imageRoute.endpointsByModel.keys()].sort()).toEqual([
      'amazon/nova-canvas',
      'amazon/titan-image-generator-v2',
      'google/gemini-2.5-flash-image',
      'openai/dall-e-3',
      'openai/gpt-image-1',
      'stability/sd3.5-large',
      'stability/stable-image-core',
      'stability/stable-image-ultra',
    ]);
    expect(c.route.endpointsByModel.has('google/gemini-2.5-flash-image')).toBe(true);
    expect(c.route.endpointsByModel.has('openai/gpt-image-1')).toBe(false);
    // Bedrock's image models (InvokeModel) are never chat models.
    expect(c.route.endpointsByModel.has('amazon/nova-canvas')).toBe(false);
    expect(imageModels(c.imageRoute).map((m) => m.id)).toContain('openai/dall-e-3');
    expect(imageModelEndpoints(c.imageRoute, 'openai/dall-e-3')?.endpoints[0].pricing).toEqual([{ billable: 'output_image', unit: 'image', cost_usd: 0.04 }]);
    expect(imageModelEndpoints(c.imageRoute, 'openai/gpt-4o')).toBeNull();
  });

  it('cost: per image and per token, exact', () => {
    expect(imageCost({ prompt: '0', completion: '0', image_output: '0.04' }, 3, null).cost).toBe(0.12);
    expect(imageCost({ prompt: '0.000005', completion: '0.00004' }, 2, { promptTokens: 3, completionTokens: 8320 }).cost).toBe(0.332815);
    expect(imageCost({ prompt: '0.000001', completion: '0', image_output: '0.01', request: '0.001' }, 1, { promptTokens: 10, completionTokens: 0 }).cost).toBe(0.01101);
  });

  it('reservation: image price × n, or n × the largest image in tokens (each attempt at its own endpoint)', () => {
    const at = (pricing: Record<string, string>) => ({ model: 'm/x', endpoint: { ...endpoint('x', []), pricing } }) as never;
    const perImage = imagesAsk(at({ prompt: '0', completion: '0', image_output: '0.04' }), 'a cat', 4)!;
    expect(perImage.nano).toBe(160_000_000);
    expect(perImage.refusal(50_000_000)).toBe('This request requires more credits: 4 images of m/x can cost up to $0.160000000, but only $0.050000000 can be spent.');
    const perToken = imagesAsk(at({ prompt: '0.000005', completion: '0.00004' }), 'a cat', 2)!;
    // the prompt's byte bound (5 bytes + 8) × $0.000005 + 2 × 6240 × $0.00004
    expect(perToken.nano).toBe(13 * 5_000 + 499_200_000);
  });
});
