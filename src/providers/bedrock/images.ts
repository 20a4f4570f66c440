/**
 * Image generation on Amazon Bedrock through InvokeModel (docs/clouds.md, docs/images.md):
 * `POST {runtime}/model/{modelId}/invoke`, signed like Converse (auth.ts), in the model family's own body:
 *
 * - Amazon Nova Canvas and Titan Image Generator (TEXT_IMAGE task):
 *   `{taskType: "TEXT_IMAGE", textToImageParams: {text, negativeText?}, imageGenerationConfig: {numberOfImages,
 *   width, height, quality, seed, cfgScale?}}` → `{images: [base64 PNG…], error?}`.
 * - Stability AI (SD3.5 Large, Stable Image Core, Stable Image Ultra): `{prompt, aspect_ratio, seed, output_format}`
 *   → `{seeds, finish_reasons: [null], images: [base64…]}`; a non-null finish reason ("Filter reason: prompt") is a
 *   refusal with no image.
 *
 * The request's `size` / `aspect_ratio` are mapped to what the family takes (image-sizes.ts); `seed`, `n` and
 * `output_format` (Stability) go where the endpoint lists them, else are dropped. Nova Canvas and Titan are asked for
 * standard quality up to 1024×1024 (Nova), the tier an endpoint's one per-image price covers: `quality` is dropped and
 * a larger Nova size is refused. Fields the
 * gateway does not set (`negativeText`, `cfgScale`, `negative_prompt`, `style`) come from `provider.options`. Answers
 * are checked by schema at the edge; errors are Bedrock's (errors.ts). Reference images are not sent (the TEXT_IMAGE
 * task here is text only), so routing skips these endpoints for edits.
 */
import { Type } from '@sinclair/typebox';
import type { EndpointDef } from '../../core/catalog-types.js';
import { Opt, wireCheck } from '../wire-schema.js';
import { fillUnset, imageData, imageJson, invalidImage, sniffImageType, type ImageAdapter, type ImageInput } from '../images.js';
import { authorizeBedrock } from './auth.js';
import { bedrockError } from './errors.js';
import { chooseSize, FAMILY_NAME, imageFamily, isProblem, MAX_IMAGES, MAX_SEED, type SizeProblem } from './image-sizes.js';

const ImageResponse = Type.Object({
  images: Opt(Type.Array(Type.String())),
  error: Opt(Type.String()),
  seeds: Opt(Type.Array(Type.Unknown())),
  finish_reasons: Opt(Type.Array(Type.Union([Type.String(), Type.Null()]))),
});
const checkImageResponse = wireCheck(ImageResponse, 'response');

const STABILITY_FORMATS = new Set(['jpeg', 'png', 'webp']);

/** Why this endpoint's model cannot take the request (null when it can): the field to name and the reason. */
export function bedrockImageProblem(req: Pick<ImageInput, 'n' | 'size' | 'aspect_ratio' | 'seed' | 'output_format'>, endpoint: EndpointDef): SizeProblem | null {
  const family = imageFamily(endpoint.upstreamModel);
  if (!family) return { field: 'model', message: `${endpoint.upstreamModel} is not a Bedrock image model this gateway speaks (amazon.nova-canvas-*, amazon.titan-image-generator-*, stability.*)` };
  const name = FAMILY_NAME[family];
  if (req.n > MAX_IMAGES[family]) return { field: 'n', message: `${name} generates at most ${MAX_IMAGES[family]} image${MAX_IMAGES[family] === 1 ? '' : 's'} per request; n is ${req.n}` };
  if (req.seed !== undefined && (req.seed < 0 || req.seed > MAX_SEED[family])) return { field: 'seed', message: `${name} takes a seed from 0 to ${MAX_SEED[family]}; got ${req.seed}` };
  if (family === 'stability' && req.output_format !== undefined && !STABILITY_FORMATS.has(req.output_format)) return { field: 'output_format', message: `${name} returns jpeg, png or webp; not ${req.output_format}` };
  const size = chooseSize(family, { size: req.size, aspect_ratio: req.aspect_ratio });
  if (isProblem(size)) return size;
  // AWS bills Nova Canvas images above 1024×1024 at a higher per-image price than an endpoint's one `image_output`.
  if (family === 'nova-canvas' && size && 'width' in size && size.width * size.height > NOVA_PRICED_PIXELS) {
    return { field: req.size ? 'size' : 'aspect_ratio', message: `${name}: ${size.width}x${size.height} is above 1024x1024 (1,048,576 pixels), which AWS prices at a higher tier than this endpoint; ask for a smaller size` };
  }
  return null;
}

/** The largest Nova Canvas image of the standard price tier (1024×1024). */
const NOVA_PRICED_PIXELS = 1024 * 1024;

const refused = (p: SizeProblem) => invalidImage(p.message);

export const bedrockImageAdapter: ImageAdapter = {
  protocol: 'bedrock-image',
  acceptsReferences: (refs) => refs.length === 0,
  problem: bedrockImageProblem,
  buildRequest(req, ctx) {
    const endpoint = ctx.endpoint;
    const params = endpoint.supported_parameters;
    const problem = bedrockImageProblem(req, endpoint);
    if (problem) throw refused(problem);
    const family = imageFamily(endpoint.upstreamModel)!;
    const size = chooseSize(family, req);
    const dropped: string[] = [];
    const listed = (name: string, value: unknown) => {
      if (value === undefined || value === null) return false;
      if (params.includes(name)) return true;
      dropped.push(name);
      return false;
    };
    let body: Record<string, unknown>;
    if (family === 'stability') {
      body = { prompt: req.prompt };
      if (size && !isProblem(size) && 'ratio' in size) body.aspect_ratio = size.ratio;
      if (listed('seed', req.seed)) body.seed = req.seed;
      if (listed('output_format', req.output_format)) body.output_format = req.output_format;
      for (const name of ['quality', 'background', 'output_compression'] as const) if (req[name] !== undefined) dropped.push(name);
    } else {
      const config: Record<string, unknown> = { numberOfImages: req.n };
      if (size && !isProblem(size) && 'width' in size) Object.assign(config, { width: size.width, height: size.height });
      // Standard quality only: premium is billed at a higher per-image price than an endpoint's one `image_output`.
      if (req.quality !== undefined) dropped.push('quality');
      if (listed('seed', req.seed)) config.seed = req.seed;
      body = { taskType: 'TEXT_IMAGE', textToImageParams: { text: req.prompt }, imageGenerationConfig: config };
      // Nova Canvas and Titan return PNG only.
      if (req.output_format !== undefined && req.output_format !== 'png') dropped.push('output_format');
      for (const name of ['background', 'output_compression'] as const) if (req[name] !== undefined) dropped.push(name);
    }
    fillUnset(body, req.options);
    const url = new URL(`${ctx.provider.baseUrl}/model/${encodeURIComponent(endpoint.upstreamModel)}/invoke`);
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'model-gateway/0.1', ...ctx.provider.headers };
    return { req: { url, headers, body: JSON.stringify(body) }, dropped };
  },
  authorize: authorizeBedrock,
  parseError: bedrockError,
  parse(text) {
    const json = imageJson(text);
    const r = checkImageResponse(json);
    const reason = r.finish_reasons?.find((f) => f !== null);
    if (reason) throw invalidImage(`Provider returned no image (${reason})`, json);
    if (r.error) throw invalidImage(`Provider returned no image (${r.error})`, json);
    const list = r.images ?? [];
    if (list.length === 0) throw invalidImage('Provider returned no image');
    const images = list.map((b, i) => {
      const b64 = imageData(b, `images[${i}]`);
      return { b64, mediaType: sniffImageType(b64) };
    });
    return { images, usage: null, upstreamId: null, text: null };
  },
};
