/**
 * The OpenAI embeddings adapter on its own: the upstream body (pass-through, gateway fields removed, parameters the
 * endpoint does not take dropped), and the answer checked against the request and converted between float and base64.
 */
import { describe, expect, it } from 'vitest';
import type { EndpointDef, ProviderDef } from '../../../src/core/catalog-types.js';
import { UpstreamError } from '../../../src/core/provider-errors.js';
import { buildEmbeddingsRequest, decodeBase64, encodeBase64, parseEmbeddings } from '../../../src/providers/openai/embeddings.js';
import { float32Base64 } from '../../../src/sim/embeddings.js';

const provider = { slug: 'p', name: 'P', protocol: 'openai', baseUrl: 'http://127.0.0.1:1/v1', headers: { 'x-extra': '1' }, dataPolicy: { training: false, retainsPrompts: false, zdr: true } } as ProviderDef;
const endpoint = (supported: string[]) => ({ model: 'a/e', provider: 'p', tag: 'p', upstreamModel: 'e-up', supported_parameters: supported }) as unknown as EndpointDef;
const answer = (data: unknown[], usage: unknown = { prompt_tokens: 3, total_tokens: 3 }) => JSON.stringify({ object: 'list', data, model: 'e-up', usage });

describe('buildEmbeddingsRequest', () => {
  it('the upstream model id, the caller’s fields (unknown ones too), no provider preferences; the key as a bearer', () => {
    const { req, dropped } = buildEmbeddingsRequest({ model: 'a/e', input: ['x'], dimensions: 8, encoding_format: 'base64', truncate: 'END', provider: { sort: 'price' } }, endpoint(['dimensions', 'encoding_format']), provider, 'sk-up');
    expect(req.url.href).toBe('http://127.0.0.1:1/v1/embeddings');
    expect(JSON.parse(req.body)).toEqual({ model: 'e-up', input: ['x'], dimensions: 8, encoding_format: 'base64', truncate: 'END' });
    expect(req.headers).toMatchObject({ authorization: 'Bearer sk-up', 'content-type': 'application/json', 'x-extra': '1' });
    expect(dropped).toEqual([]);
  });

  it('encoding_format, input_type and user are dropped for an endpoint that does not list them', () => {
    const { req, dropped } = buildEmbeddingsRequest({ model: 'a/e', input: 'x', encoding_format: 'float', input_type: 'search_query', user: 'u' }, endpoint([]), provider, null);
    expect(JSON.parse(req.body)).toEqual({ model: 'e-up', input: 'x' });
    expect(dropped).toEqual(['encoding_format', 'input_type', 'user']);
    expect(req.headers.authorization).toBeUndefined();
  });
});

describe('base64 vectors', () => {
  it('round trip through float32 little-endian bytes, as OpenAI encodes them', () => {
    const v = [0.5, -0.25, 1e-3, 3.4e38];
    const f32 = Array.from(Float32Array.from(v));
    expect(encodeBase64(v)).toBe(float32Base64(f32));
    expect(decodeBase64(encodeBase64(v))).toEqual(f32);
  });

  it('refuses text that is not base64, or not whole float32 values', () => {
    expect(decodeBase64('not base64!')).toBeNull();
    expect(decodeBase64(Buffer.from([1, 2, 3]).toString('base64'))).toBeNull();
  });
});

describe('parseEmbeddings', () => {
  const want = { inputs: 2, format: 'float' as const, dimensions: null };

  it('vectors in input order (by index, whatever the order of the list), the usage and the upstream id', () => {
    const text = JSON.stringify({ id: 'emb-1', object: 'list', data: [{ index: 1, embedding: [3, 4] }, { index: 0, embedding: [1, 2] }], usage: { prompt_tokens: 5, total_tokens: 5 } });
    expect(parseEmbeddings(text, want)).toEqual({ vectors: [[1, 2], [3, 4]], promptTokens: 5, rawUsage: { prompt_tokens: 5, total_tokens: 5 }, upstreamId: 'emb-1' });
  });

  it('converts to the format asked for', () => {
    const b64 = encodeBase64([1, 2]);
    expect(parseEmbeddings(answer([{ index: 0, embedding: b64 }]), { inputs: 1, format: 'float', dimensions: null }).vectors).toEqual([[1, 2]]);
    expect(parseEmbeddings(answer([{ index: 0, embedding: [1, 2] }]), { inputs: 1, format: 'base64', dimensions: null }).vectors).toEqual([b64]);
    // base64 asked, base64 given: passed through untouched.
    expect(parseEmbeddings(answer([{ index: 0, embedding: b64 }]), { inputs: 1, format: 'base64', dimensions: 2 }).vectors).toEqual([b64]);
  });

  it('usage with total_tokens only (Voyage): those are the prompt tokens', () => {
    expect(parseEmbeddings(JSON.stringify({ data: [{ embedding: [1] }], usage: { total_tokens: 7 } }), { inputs: 1, format: 'float', dimensions: null }).promptTokens).toBe(7);
  });

  it('no usage: promptTokens null (the service bills its estimate)', () => {
    expect(parseEmbeddings(JSON.stringify({ data: [{ embedding: [1] }] }), { inputs: 1, format: 'float', dimensions: null }).promptTokens).toBeNull();
  });

  it.each([
    ['not JSON', '{"data": [', /non-JSON/],
    ['no data', JSON.stringify({ object: 'list' }), /invalid response: data is missing/],
    ['too few vectors', answer([{ index: 0, embedding: [1] }]), /1 embeddings for 2 inputs/],
    ['a repeated index', answer([{ index: 0, embedding: [1] }, { index: 0, embedding: [2] }]), /index 0/],
    ['an index out of range', answer([{ index: 0, embedding: [1] }, { index: 5, embedding: [2] }]), /index 5/],
    ['a vector of strings', answer([{ index: 0, embedding: ['a'] }, { index: 1, embedding: [2] }]), /invalid response: data\[0\]\.embedding\[0\] must be a number \(got "a"\)/],
    ['usage of the wrong type', JSON.stringify({ data: [{ embedding: [1] }, { embedding: [2] }], usage: { prompt_tokens: 'ten' } }), /invalid response: usage\.prompt_tokens must be a number or null \(got "ten"\)/],
    ['an empty vector', answer([{ index: 0, embedding: [] }, { index: 1, embedding: [2] }]), /empty/],
    ['bad base64', answer([{ index: 0, embedding: '!!' }, { index: 1, embedding: [2] }]), /not base64/],
  ])('%s → 502', (_label, text, message) => {
    let err: unknown;
    try {
      parseEmbeddings(text, want);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).status).toBe(502);
    expect((err as UpstreamError).message).toMatch(message);
  });

  it('vectors of another size than the dimensions asked for → 502 (in either form)', () => {
    expect(() => parseEmbeddings(answer([{ embedding: [1, 2, 3] }]), { inputs: 1, format: 'float', dimensions: 2 })).toThrow(/3 dimensions where 2 were asked for/);
    expect(() => parseEmbeddings(answer([{ embedding: encodeBase64([1, 2, 3]) }]), { inputs: 1, format: 'base64', dimensions: 2 })).toThrow(/3 dimensions/);
  });

  it('an error body answered with 200 is an upstream error', () => {
    expect(() => parseEmbeddings(JSON.stringify({ error: { message: 'boom' } }), want)).toThrow(UpstreamError);
  });
});
