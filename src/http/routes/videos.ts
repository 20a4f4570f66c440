/**
 * Video generation (docs/videos.md): POST /videos (202, a `pending` job), GET /videos/{jobId} (poll),
 * GET /videos/{jobId}/content?index= (the bytes, proxied as video/mp4), GET /videos/models (public), and the extension
 * POST /videos/{jobId}/cancel. A job is visible to the keys of its workspace only (404 otherwise).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { VIDEO_STATUSES } from '../../core/video-states.js';
import { errors, Nullable, StringEnum } from '../schemas/common.js';
import { ProviderPreferencesSchema } from '../schemas/inference.js';
import type { VideoCreateBody } from '../../services/videos.js';
import type { Services } from '../../services/index.js';

export const VIDEO_RESOLUTIONS = ['480p', '720p', '768p', '1080p', '1K', '2K', '4K'] as const;
export const VIDEO_ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3', '21:9', '9:21'] as const;

const Url = Type.Object({ url: Type.String({ minLength: 1 }) }, { additionalProperties: true });

const FrameImage = Type.Object(
  {
    type: Type.Literal('image_url'),
    image_url: Url,
    frame_type: StringEnum(['first_frame', 'last_frame'] as const, { description: 'Whether this image is the first or the last frame of the video.' }),
  },
  { additionalProperties: true },
);

const InputReference = Type.Object(
  {
    type: StringEnum(['image_url', 'audio_url', 'video_url'] as const),
    image_url: Type.Optional(Url),
    audio_url: Type.Optional(Url),
    video_url: Type.Optional(Url),
  },
  { additionalProperties: true },
);

export const VideoGenerationBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    prompt: Type.Optional(Type.String({ maxLength: 32_000, description: 'Required unless a first_frame image is given.' })),
    duration: Type.Optional(Type.Integer({ minimum: 1, maximum: 600, description: 'Seconds.' })),
    resolution: Type.Optional(StringEnum(VIDEO_RESOLUTIONS)),
    aspect_ratio: Type.Optional(StringEnum(VIDEO_ASPECT_RATIOS)),
    size: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$', description: 'WIDTHxHEIGHT, e.g. 1280x720; interchangeable with resolution + aspect_ratio.' })),
    frame_images: Type.Optional(Type.Array(FrameImage, { maxItems: 2, description: 'First and/or last frame (https or base64 data URLs).' })),
    input_references: Type.Optional(Type.Array(InputReference, { maxItems: 16 })),
    generate_audio: Type.Optional(Type.Boolean()),
    seed: Type.Optional(Type.Integer()),
    creativity: Type.Optional(Type.Integer({ description: 'Video upscaling models only.' })),
    upscale_factor: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Video upscaling models only.' })),
    callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, format: 'uri', description: 'HTTPS URL receiving a webhook when the job ends.' })),
    provider: Type.Optional(Nullable(ProviderPreferencesSchema)),
  },
  { additionalProperties: true },
);

/** Registered on the root instance by app.ts (see there: a plugin's own addSchema would reset its validator). */
export const VideoJob = Type.Object(
  {
    id: Type.String(),
    polling_url: Type.String(),
    status: StringEnum(VIDEO_STATUSES),
    error: Type.Optional(Type.String()),
    generation_id: Type.Optional(Type.String({ description: 'Present once the job has been processed.' })),
    unsigned_urls: Type.Optional(Type.Array(Type.String(), { description: "Paths of the gateway's content route, one per video." })),
    usage: Type.Optional(Type.Object({ cost: Nullable(Type.Number()), is_byok: Type.Boolean() }, { description: 'Present once the job has completed.' })),
  },
  { $id: 'VideoGenerationJob' },
);

const JobParams = Type.Object({ jobId: Type.String({ minLength: 1, maxLength: 200 }) });
const ContentQuery = Type.Object({ index: Type.Optional(Nullable(Type.Integer({ minimum: 0, default: 0 }))) });

export default async function videoRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Video Generation'];

  app.post<{ Body: Static<typeof VideoGenerationBody> }>(
    '/videos',
    {
      config: { auth: 'inference' },
      schema: {
        tags,
        summary: 'Submit a video generation job: answers 202 with the stored `pending` job and its polling URL',
        body: VideoGenerationBody,
        response: { 202: Type.Ref('VideoGenerationJob'), ...errors(400, 401, 402, 403, 404, 429, 500) },
      },
    },
    async (req, reply) => {
      const job = await svc.videos.create(req.key, req.body as VideoCreateBody, req.id);
      reply.code(202).header('location', job.polling_url);
      return job;
    },
  );

  app.get(
    '/videos/models',
    { schema: { tags, summary: 'List the video generation models and what they accept', security: [], response: { 200: Type.Object({ data: Type.Array(Type.Object({}, { additionalProperties: true })) }), ...errors(400, 500) } } },
    async () => ({ data: svc.videos.models() }),
  );

  app.get<{ Params: Static<typeof JobParams> }>(
    '/videos/:jobId',
    {
      config: { auth: 'inference' },
      schema: { tags, summary: 'Poll a video generation job', params: JobParams, response: { 200: Type.Ref('VideoGenerationJob'), ...errors(401, 403, 404, 500) } },
    },
    async (req) => svc.videos.get(req.key, req.params.jobId),
  );

  app.get<{ Params: Static<typeof JobParams>; Querystring: Static<typeof ContentQuery> }>(
    '/videos/:jobId/content',
    {
      config: { auth: 'inference' },
      schema: {
        tags,
        summary: "Download a completed job's video (the provider's bytes, proxied as video/mp4)",
        params: JobParams,
        querystring: ContentQuery,
        response: { 200: { description: 'The video bytes.', content: { 'video/mp4': { schema: { type: 'string', format: 'binary' } } } }, ...errors(400, 401, 403, 404, 500, 502) },
      },
    },
    async (req, reply) => {
      const controller = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) controller.abort();
      });
      const { body, length } = await svc.videos.content(req.key, req.params.jobId, req.query.index ?? 0, controller.signal);
      reply.type('video/mp4').header('cache-control', 'private, no-store');
      if (length !== null) reply.header('content-length', length);
      return reply.send(body);
    },
  );

  app.post<{ Params: Static<typeof JobParams> }>(
    '/videos/:jobId/cancel',
    {
      config: { auth: 'inference' },
      schema: {
        tags,
        summary: 'Cancel a job that has not ended (extension): it moves to `cancelled`; an upstream job already running is not billed',
        params: JobParams,
        response: { 200: Type.Ref('VideoGenerationJob'), ...errors(401, 403, 404, 409, 500) },
      },
    },
    async (req) => svc.videos.cancel(req.key, req.params.jobId),
  );
}
