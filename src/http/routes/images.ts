/**
 * Image generation (docs/images.md): POST /images (the hosted API's shape: `data[{b64_json, media_type}]`, usage and
 * cost), GET /images/models and GET /images/models/{author}/{slug}/endpoints (public listings). Validate, hand over
 * to the images service, shape the reply.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, notFound } from '../../core/errors.js';
import { errors, Nullable, StringEnum } from '../schemas/common.js';
import { ProviderPreferencesSchema } from '../schemas/inference.js';
import { answerOnce, apiCall, MetadataHeader } from './inference.js';
import { streamImages } from '../../services/images-stream.js';
import { imageModelEndpoints, imageModels } from '../../services/image-models.js';
import type { ImagesBody as ServiceBody } from '../../services/images.js';
import type { Services } from '../../services/index.js';

export const IMAGE_ASPECT_RATIOS = ['1:1', '1:2', '1:4', '1:8', '2:1', '2:3', '3:2', '3:4', '4:1', '4:3', '4:5', '5:4', '8:1', '9:16', '16:9', '9:19.5', '19.5:9', '9:20', '20:9', '9:21', '21:9', 'auto'] as const;
export const IMAGE_RESOLUTIONS = ['512', '1K', '2K', '4K'] as const;
export const MAX_IMAGES = 10;

const Reference = Type.Object(
  {
    type: Type.Literal('image_url'),
    image_url: Type.Object(
      {
        url: Type.String({ minLength: 1, maxLength: 20_000_000, pattern: '^(https?://|data:image/)', description: 'An http(s) URL or a base64 `data:image/…` URL.' }),
        detail: Type.Optional(StringEnum(['auto', 'low', 'high'] as const)),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const ImagesBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256, description: 'Image generation model id, e.g. `openai/gpt-image-1`.' }),
    prompt: Type.String({ minLength: 1, maxLength: 32_000, description: 'Text description of the desired image.' }),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_IMAGES, description: 'Number of images (1-10). Endpoints that generate one image per call are skipped when n > 1.' })),
    size: Type.Optional(Type.String({ pattern: '^([1-9][0-9]{1,4}x[1-9][0-9]{1,4}|512|1K|2K|4K|auto)$', description: 'A tier (`1K`, `2K`, `4K`) or explicit pixels (`1024x1024`); explicit pixels are authoritative (a mismatched aspect_ratio or resolution is a 400).' })),
    aspect_ratio: Type.Optional(StringEnum(IMAGE_ASPECT_RATIOS, { description: 'Normalized aspect ratio; providers clamp to their supported subset.' })),
    resolution: Type.Optional(StringEnum(IMAGE_RESOLUTIONS, { description: 'Normalized resolution tier.' })),
    quality: Type.Optional(StringEnum(['auto', 'low', 'medium', 'high'] as const)),
    background: Type.Optional(StringEnum(['auto', 'transparent', 'opaque'] as const)),
    output_format: Type.Optional(StringEnum(['png', 'jpeg', 'webp', 'svg'] as const)),
    output_compression: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    seed: Type.Optional(Type.Integer({ minimum: -2147483648, maximum: 4294967295 })),
    stream: Type.Optional(Type.Boolean({ description: 'Answer as Server-Sent Events: `image_generation.partial_image` events while an endpoint that streams natively (OpenAI) makes the image, an `image_generation.completed` event per image (usage and cost on the last), or an `error` event, then `[DONE]`.' })),
    partial_images: Type.Optional(Type.Integer({ minimum: 0, maximum: 3, description: "OpenAI compatibility (the openai SDK's `partial_images`): with `stream: true` and n = 1, how many partial images an endpoint that streams natively sends before the final one (0-3; each adds 100 output tokens upstream). Elsewhere dropped (named in gateway_metadata.dropped_parameters)." })),
    input_references: Type.Optional(Type.Array(Reference, { maxItems: 16, description: 'Reference images for image-to-image generation (edits).' })),
    provider: Type.Optional(Nullable(ProviderPreferencesSchema)),
    // OpenAI's fields, accepted for the openai SDK: images always come back as base64.
    response_format: Type.Optional(StringEnum(['b64_json'] as const, { description: 'OpenAI compatibility: only `b64_json` (images are never returned as URLs).' })),
    user: Type.Optional(Type.String({ maxLength: 256, description: 'OpenAI compatibility: accepted and ignored.' })),
  },
  { additionalProperties: false, description: 'Image generation request.' },
);

const ImageUsage = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
  completion_tokens_details: Type.Object({ image_tokens: Type.Integer() }),
  cost: Nullable(Type.Number({ description: 'USD; null when the price is unknown.' })),
  is_byok: Type.Boolean(),
});

const ImagesResponse = Type.Object(
  {
    id: Type.String({ description: 'The generation id (also in X-Generation-Id).' }),
    created: Type.Integer(),
    model: Type.String({ description: 'The model that served.' }),
    provider: Type.String(),
    data: Type.Array(Type.Object({ b64_json: Type.String(), media_type: Type.Optional(Type.String({ description: 'e.g. image/png; absent when unknown.' })) })),
    usage: ImageUsage,
    gateway_metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);

/** One `data:` event of the image stream (`stream: true`), then `data: [DONE]`. */
const ImageStreamEvent = Type.Object(
  {
    data: Type.Union([
      Type.Object(
        {
          type: Type.Literal('image_generation.partial_image'),
          b64_json: Type.String({ description: 'Base64 of the partial image.' }),
          partial_image_index: Type.Integer({ minimum: 0, description: '0-based index of this partial image.' }),
        },
        { description: 'A partial image, relayed as the upstream sends it (stream: true and partial_images on an endpoint that streams natively).' },
      ),
      Type.Object(
        {
          type: Type.Literal('image_generation.completed'),
          b64_json: Type.String(),
          media_type: Type.Optional(Type.String()),
          created: Type.Integer(),
          usage: Type.Optional(ImageUsage),
          gateway_metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
        },
        { description: 'One per image; usage and cost on the last.' },
      ),
      Type.Object(
        {
          type: Type.Literal('error'),
          error: Type.Object({ code: Nullable(Type.String()), message: Type.String(), param: Nullable(Type.String()), type: Nullable(Type.String()) }),
        },
        { description: 'The generation failed after the stream started (keep-alive comments had been sent).' },
      ),
    ]),
  },
  { description: 'Server-Sent Events: each `data:` line holds one event object; the stream ends with `data: [DONE]`.' },
);

const Capability = Type.Union([
  Type.Object({ type: Type.Literal('enum'), values: Type.Array(Type.String()) }),
  Type.Object({ type: Type.Literal('range'), min: Type.Number(), max: Type.Number() }),
  Type.Object({ type: Type.Literal('boolean') }),
]);
const SupportedParameters = Type.Record(Type.String(), Capability, { description: 'Parameter name → what it accepts.' });

const ImageModelsList = Type.Object({
  data: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      description: Type.String(),
      created: Type.Integer(),
      architecture: Type.Object({ input_modalities: Type.Array(Type.String()), output_modalities: Type.Array(Type.String()) }),
      supported_parameters: SupportedParameters,
      supports_streaming: Type.Boolean(),
      endpoints: Type.String({ description: 'Relative URL of the per-endpoint records.' }),
    }),
  ),
});

const ImageModelEndpoints = Type.Object({
  id: Type.String(),
  endpoints: Type.Array(
    Type.Object({
      provider_name: Type.String(),
      provider_slug: Type.String(),
      provider_tag: Nullable(Type.String()),
      supported_parameters: SupportedParameters,
      allowed_passthrough_parameters: Type.Array(Type.String()),
      supports_streaming: Type.Boolean(),
      pricing: Type.Array(Type.Object({ billable: StringEnum(['output_image', 'input_text'] as const), unit: StringEnum(['image', 'token'] as const), cost_usd: Type.Number() })),
    }),
  ),
});

const ModelParams = Type.Object({ author: Type.String({ minLength: 1, maxLength: 128 }), slug: Type.String({ minLength: 1, maxLength: 256 }) });

export default async function imageRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Images'];

  /** `stream: true`: refusals before the stream as JSON errors, then the image event stream (services/images-stream.ts). */
  async function streamed(req: FastifyRequest<{ Body: Static<typeof ImagesBody> }>, reply: FastifyReply): Promise<FastifyReply> {
    const call = apiCall(req, reply);
    const prepared = await svc.images.prepare(req.body as ServiceBody, call);
    reply.hijack();
    try {
      await streamImages(reply.raw, req.id, svc.config.streamKeepaliveMs, () => call.cancel.aborted, (sink) => svc.images.generate(prepared, call, sink));
    } catch (err) {
      const e = err instanceof HttpError ? err : new HttpError(500, 'Internal server error', { error_type: 'server' });
      if (!(err instanceof HttpError)) req.log.error({ err }, 'image stream failed');
      if (!reply.raw.headersSent && !reply.raw.destroyed) {
        reply.raw.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': req.id, ...e.headers });
        reply.raw.end(JSON.stringify(e.envelope()));
      } else if (!reply.raw.writableEnded) reply.raw.end();
    }
    return reply;
  }
  // POST /images (the hosted API's path) and POST /images/generations (OpenAI's, for the openai SDK's images.generate).
  for (const [url, summary] of [
    ['/images', 'Generate images from a prompt (and reference images)'],
    ['/images/generations', "Generate images (OpenAI's path: the openai SDK's `images.generate`); the same as POST /images"],
  ] as const) {
    app.post<{ Body: Static<typeof ImagesBody> }>(
      url,
      {
        config: { auth: 'inference' },
        schema: {
          tags,
          summary,
          headers: MetadataHeader,
          body: ImagesBody,
          response: {
            200: { description: 'The images (JSON), or with `stream: true` their event stream', content: { 'application/json': { schema: ImagesResponse }, 'text/event-stream': { schema: ImageStreamEvent } } },
            ...errors(400, 401, 402, 403, 404, 413, 429, 500, 502, 503, 524, 529),
          },
        },
      },
      async (req, reply) => {
        if (req.body.stream === true) return streamed(req, reply);
        return answerOnce(
          req,
          reply,
          (call) => svc.images.prepare(req.body as ServiceBody, call),
          (p, call) => svc.images.generate(p, call),
        );
      },
    );
  }

  app.get(
    '/images/models',
    { schema: { tags, summary: 'List the image generation models and what they accept', security: [], response: { 200: ImageModelsList, ...errors(500) } } },
    async () => ({ data: imageModels(svc.images.catalogRoute) }),
  );

  app.get<{ Params: Static<typeof ModelParams> }>(
    '/images/models/:author/:slug/endpoints',
    { schema: { tags, summary: "List an image model's endpoints: parameters and pricing", security: [], params: ModelParams, response: { 200: ImageModelEndpoints, ...errors(400, 404, 500) } } },
    async (req) => {
      const id = `${req.params.author}/${req.params.slug}`;
      const out = imageModelEndpoints(svc.images.catalogRoute, id);
      if (!out) throw notFound(`No image model ${id}`, { error_type: 'not_found' });
      return out;
    },
  );
}
