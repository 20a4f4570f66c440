/**
 * OpenAI's images API (gpt-image, DALL·E and OpenAI-compatible image servers):
 * `POST {baseUrl}/images/generations` from a prompt, `POST {baseUrl}/images/edits` when reference images are given
 * (JSON body, `images: [{image_url}]`, as OpenAI accepts for gpt-image models).
 *
 * Request: `{model, prompt, n, size, quality, background, output_format, output_compression}`, each optional field only
 * where the endpoint lists it in `supported_parameters` (else named in `dropped`). `aspect_ratio` becomes a size
 * (1:1 → 1024x1024, 3:2 → 1536x1024, 2:3 → 1024x1536) when no size is given; a tier size (`1K`) becomes 1024 pixels
 * on the short side. DALL·E models get `response_format: "b64_json"` and `quality` as `hd`/`standard`.
 * Answer: `{created, data: [{b64_json}], usage?: {input_tokens, output_tokens}}`, checked by schema at the edge.
 * Errors: OpenAI's envelope, mapped like chat.
 * Streamed (`stream: true`, `partial_images` when asked): the event stream is read by stream.ts.
 */
import { Type } from '@sinclair/typebox';
import { openaiError } from '../openai/chat.js';
import { Count, Opt, wireCheck } from '../wire-schema.js';
import { OpenAIImageStreamDecoder } from './stream.js';
import { fillUnset, imageData, imageJson, invalidImage, sniffImageType, type ImageAdapter, type ImageInput } from '../images.js';

const ImagesResponse = Type.Object({
  created: Opt(Type.Number()),
  data: Type.Array(Type.Object({ b64_json: Opt(Type.String()), url: Opt(Type.String()), revised_prompt: Opt(Type.String()) })),
  output_format: Opt(Type.String()),
  usage: Opt(Type.Object({ input_tokens: Count, output_tokens: Count, total_tokens: Count })),
});
const checkImagesResponse = wireCheck(ImagesResponse, 'images response');

const RATIO_SIZES: Record<string, string> = { '1:1': '1024x1024', '3:2': '1536x1024', '2:3': '1024x1536' };
const PIXELS = /^\d{2,5}x\d{2,5}$/;
const FORMAT_TYPES: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

/** The size sent upstream: explicit pixels as given, a tier or an aspect ratio mapped (null: none to send). */
function upstreamSize(req: ImageInput): { size: string | null; droppedRatio: boolean } {
  if (req.size && PIXELS.test(req.size)) return { size: req.size, droppedRatio: false };
  if (req.size === 'auto') return { size: 'auto', droppedRatio: false };
  const ratio = req.aspect_ratio && req.aspect_ratio !== 'auto' ? req.aspect_ratio : null;
  if (ratio) return RATIO_SIZES[ratio] ? { size: RATIO_SIZES[ratio], droppedRatio: false } : { size: req.size ? '1024x1024' : null, droppedRatio: true };
  return { size: req.size ? '1024x1024' : null, droppedRatio: false };
}

export const openaiImagesAdapter: ImageAdapter = {
  protocol: 'openai-images',
  acceptsReferences: () => true,
  buildRequest(req, ctx) {
    const params = ctx.endpoint.supported_parameters;
    const dalle = ctx.endpoint.upstreamModel.startsWith('dall-e');
    const body: Record<string, unknown> = { model: ctx.endpoint.upstreamModel, prompt: req.prompt };
    const dropped: string[] = [];
    const set = (name: string, field: string, value: unknown) => {
      if (value === undefined || value === null) return;
      if (params.includes(name)) body[field] = value;
      else dropped.push(name);
    };
    if (req.n > 1) set('n', 'n', req.n);
    const { size, droppedRatio } = upstreamSize(req);
    // An aspect ratio travels as a size: it needs an endpoint that takes `size` (or lists `aspect_ratio`).
    if (size) set(req.size || params.includes('size') ? 'size' : 'aspect_ratio', 'size', size);
    if (droppedRatio) dropped.push('aspect_ratio');
    set('quality', 'quality', req.quality === undefined || !dalle ? req.quality : req.quality === 'high' ? 'hd' : 'standard');
    set('background', 'background', req.background);
    set('output_format', 'output_format', req.output_format);
    set('output_compression', 'output_compression', req.output_compression);
    if (req.seed !== undefined) dropped.push('seed');
    if (dalle) body.response_format = 'b64_json';
    // Streamed natively (the service asks only when the endpoint lists partial_images): partial images as they come.
    if (req.stream) {
      body.stream = true;
      if (req.stream.partialImages > 0) body.partial_images = req.stream.partialImages;
    }
    const edit = req.references.length > 0;
    if (edit) body.images = req.references.map((r) => ({ image_url: r.url }));
    fillUnset(body, req.options);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: req.stream ? 'text/event-stream' : 'application/json', 'user-agent': 'model-gateway/0.1', ...ctx.provider.headers };
    if (ctx.apiKey) headers.authorization = `Bearer ${ctx.apiKey}`;
    const url = new URL(`${ctx.provider.baseUrl}/images/${edit ? 'edits' : 'generations'}`);
    return { req: { url, headers, body: JSON.stringify(body) }, dropped };
  },
  parseError: openaiError,
  parse(text) {
    const json = imageJson(text, 'images response');
    const r = checkImagesResponse(json);
    if (r.data.length === 0) throw invalidImage('Provider returned no image');
    const declared = r.output_format ? (FORMAT_TYPES[r.output_format] ?? null) : null;
    const images = r.data.map((d, i) => {
      if (d.b64_json === undefined || d.b64_json === null) throw invalidImage(`Provider returned an invalid images response: data[${i}].b64_json is missing`);
      const b64 = imageData(d.b64_json, `data[${i}].b64_json`);
      return { b64, mediaType: sniffImageType(b64) ?? declared };
    });
    const u = r.usage;
    const usage = u && (typeof u.input_tokens === 'number' || typeof u.output_tokens === 'number') ? { promptTokens: u.input_tokens ?? 0, completionTokens: u.output_tokens ?? 0 } : null;
    return { images, usage, upstreamId: null, text: null };
  },
  streamDecoder: () => new OpenAIImageStreamDecoder(),
};
