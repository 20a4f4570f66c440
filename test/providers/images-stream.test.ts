/**
 * Streamed image output as pure translation: OpenAI's streamed images answer (providers/openai-images/stream.ts) and
 * the Responses API's hosted image_generation tool (image_generation_call items, partial images, tool_usage) read by
 * the Responses upstream adapter, and the `image_generation` tool added for `modalities` image.
 */
import { describe, expect, it } from 'vitest';
import { imageAdapter } from '../../src/providers/registry.js';
import { UpstreamError } from '../../src/core/provider-errors.js';
import type { EndpointDef, ProviderDef } from '../../src/core/catalog-types.js';
import type { IrStreamEvent } from '../../src/core/ir.js';
import { simPng } from '../../src/sim/images.js';
import { buildResponsesBody, parseResponsesResponse, ResponsesStreamDecoder } from '../../src/providers/openai-responses/index.js';
import { withImageTool } from '../../src/providers/openai-responses/upstream.js';
import { imagesAsk, IMAGE_TOKENS_MAX, PARTIAL_IMAGE_TOKENS } from '../../src/services/images.js';

const provider = { slug: 'p', name: 'P', protocol: 'openai', baseUrl: 'http://up/v1', headers: {} } as unknown as ProviderDef;
const endpoint = (params: string[]): EndpointDef => ({ model: 'm/x', provider: 'p', tag: 'p', upstreamModel: 'gpt-image-1', pricing: null, context_length: 0, max_prompt_tokens: null, max_completion_tokens: null, quantization: 'unknown', supported_parameters: params, is_moderated: false, supports_implicit_caching: false });
const png = (k: string) => simPng(k).toString('base64');
const ev = (type: string, fields: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;

describe('OpenAI streamed images', () => {
  const a = imageAdapter('openai-images');
  const decoder = () => a.streamDecoder!();

  it('the request asks for the stream and the partial images', () => {
    const { req } = a.buildRequest({ prompt: 'a cat', n: 1, references: [], options: {}, stream: { partialImages: 2 } }, { provider, endpoint: endpoint(['partial_images']), apiKey: null });
    expect(JSON.parse(req.body)).toEqual({ model: 'gpt-image-1', prompt: 'a cat', stream: true, partial_images: 2 });
    expect(req.headers.accept).toBe('text/event-stream');
  });

  it('partial images as they complete (any chunk boundary), then the final image and usage', () => {
    const d = decoder();
    const text = ev('image_generation.partial_image', { b64_json: png('p0'), partial_image_index: 0 }) + ev('image_generation.completed', { b64_json: png('f'), output_format: 'png', usage: { input_tokens: 7, output_tokens: 372 } });
    const cut = 40;
    expect(d.push(text.slice(0, cut))).toEqual([]);
    expect(d.push(text.slice(cut))).toEqual([{ b64: png('p0'), index: 0 }]);
    expect(d.end()).toEqual({ images: [{ b64: png('f'), mediaType: 'image/png' }], usage: { promptTokens: 7, completionTokens: 372 }, upstreamId: null, text: null });
  });

  it('an error event after a partial image in the same chunk: the partial first, the error at the next call', () => {
    const d = decoder();
    const text = ev('image_generation.partial_image', { b64_json: png('p0'), partial_image_index: 0 }) + `data: ${JSON.stringify({ error: { message: 'boom', type: 'server_error' } })}\n\n`;
    expect(d.push(text)).toHaveLength(1);
    expect(() => d.end()).toThrow(UpstreamError);
  });

  it('a stream without a completed image, bad base64 or a malformed event is a 502', () => {
    const none = decoder();
    none.push('data: [DONE]\n\n');
    expect(() => none.end()).toThrow(/ended before an image/);
    expect(() => decoder().push(ev('image_generation.partial_image', { b64_json: '###', partial_image_index: 0 }))).toThrow(/not base64/);
    expect(() => decoder().push(ev('image_generation.completed', { b64_json: 3 }))).toThrow(UpstreamError);
    expect(() => decoder().push('data: {oops\n\n')).toThrow(UpstreamError);
  });
});

describe('Responses: the hosted image_generation tool', () => {
  it('modalities image adds the tool once', () => {
    const body = buildResponsesBody({ model: 'gpt-5', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'draw' }] }], modalities: ['image', 'text'], stream: false });
    expect(body.tools).toEqual([{ type: 'image_generation' }]);
    expect(withImageTool([{ type: 'image_generation', quality: 'low' }])).toEqual([{ type: 'image_generation', quality: 'low' }]);
  });

  it('a response: the image_generation_call item is an image; the tool tokens join the usage', () => {
    const res = parseResponsesResponse(
      JSON.stringify({
        id: 'r',
        status: 'completed',
        output: [
          { id: 'ig_1', type: 'image_generation_call', status: 'completed', result: png('i'), output_format: 'png' },
          { type: 'message', content: [{ type: 'output_text', text: 'here' }] },
        ],
        usage: { input_tokens: 10, output_tokens: 4 },
        tool_usage: { image_gen: { input_tokens: 3, output_tokens: 1056 } },
      }),
    );
    expect(res.content).toEqual([{ type: 'image', data: png('i'), media_type: 'image/png' }, { type: 'text', text: 'here' }]);
    expect(res.usage).toMatchObject({ input: 13, output: 1060 });
  });

  it('streamed: partial images, then the image (a part of its own), then the finish and usage', () => {
    const d = new ResponsesStreamDecoder();
    const item = { id: 'ig_1', type: 'image_generation_call', status: 'in_progress', result: null };
    const text =
      ev('response.created', { response: { id: 'r', model: 'gpt-5' } }) +
      ev('response.output_item.added', { output_index: 0, item }) +
      ev('response.image_generation_call.partial_image', { item_id: 'ig_1', output_index: 0, partial_image_index: 0, partial_image_b64: png('p0') }) +
      ev('response.output_item.done', { output_index: 0, item: { ...item, status: 'completed', result: png('i') } }) +
      ev('response.completed', { response: { id: 'r', status: 'completed', output: [{ ...item, status: 'completed', result: png('i') }], usage: { input_tokens: 10, output_tokens: 4 }, tool_usage: { image_gen: { input_tokens: 3, output_tokens: 1156 } } } });
    const out: IrStreamEvent[] = d.push(text);
    expect(out.filter((e) => e.type !== 'start' && e.type !== 'finish')).toEqual([
      { type: 'image_partial', index: 0, data: png('p0'), partial_index: 0 },
      { type: 'image', index: 0, data: png('i'), media_type: 'image/png' },
      { type: 'usage', usage: expect.objectContaining({ input: 13, output: 1160 }) },
    ]);
  });
});

describe('the reservation of a streamed request with partial images', () => {
  it("counts OpenAI's 100 output tokens per partial image on a token-priced endpoint", () => {
    const e = { ...endpoint([]), pricing: { prompt: '0', completion: '0.00004' } } as EndpointDef;
    const whole = imagesAsk({ endpoint: e, model: 'm/x' }, 'a cat', 1)!;
    const partial = imagesAsk({ endpoint: e, model: 'm/x' }, 'a cat', 1, 3)!;
    expect(PARTIAL_IMAGE_TOKENS).toBe(100);
    expect(partial.tokens - whole.tokens).toBe(300);
    expect(whole.tokens).toBe(IMAGE_TOKENS_MAX + Buffer.byteLength('a cat') + 8);
    // $0.00004 per output token, in nano-dollars: 300 tokens more cost $0.012 more.
    expect(partial.nano! - whole.nano!).toBe(12_000_000);
  });
});
