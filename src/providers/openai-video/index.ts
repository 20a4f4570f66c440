/**
 * OpenAI Videos API upstream (`openai-video`; docs/videos.md), on the provider's base URL (e.g. `https://api.openai.com/v1`):
 *   POST {base}/videos                 {model, prompt, seconds: "8", size: "1280x720", input_reference?: {image_url}}
 *   GET  {base}/videos/{id}            {id, object: "video", status: queued|in_progress|completed|failed, progress,
 *                                       seconds, size, error: {code, message} | null, …}
 *   GET  {base}/videos/{id}/content    the MP4 (`?variant=video`, the default)
 * JSON bodies only (no multipart upload): a first frame or image reference is sent as `input_reference.image_url`
 * (a URL or a data URL). `seconds` is a string; a size is required by the API's enum, so the gateway derives one from
 * resolution and aspect ratio when the request gives no size. Errors use OpenAI's envelope (mapped by `openaiError`).
 */
import { Type } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import { Opt, wireCheck } from '../wire-schema.js';
import { openaiError } from '../openai/chat.js';
import { UpstreamError } from '../../core/provider-errors.js';
import type { VideoContentRef } from '../../store/types.js';
import { downloadError, type VideoAdapter, type VideoCallContext, type VideoPoll, type VideoSubmitRequest } from '../video-types.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const SAFE_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

function headers(ctx: VideoCallContext, json: boolean): Record<string, string> {
  const h: Record<string, string> = { accept: json ? 'application/json' : 'video/mp4, */*', 'user-agent': 'model-gateway/0.1', ...ctx.provider.headers };
  if (json) h['content-type'] = 'application/json';
  if (ctx.apiKey) h.authorization = `Bearer ${ctx.apiKey}`;
  return h;
}

function videoUrl(ctx: VideoCallContext, id?: string, suffix = ''): URL {
  if (id !== undefined && !SAFE_ID.test(id)) throw new UpstreamError(502, 'Provider returned an invalid video id', 'provider_unavailable', null, id.slice(0, 200));
  return new URL(`${ctx.provider.baseUrl}/videos${id === undefined ? '' : `/${encodeURIComponent(id)}${suffix}`}`);
}

/** The request body of POST /videos. */
export function openaiVideoBody(model: string, req: VideoSubmitRequest): Obj {
  const body: Obj = { model };
  if (req.prompt !== null) body.prompt = req.prompt;
  if (req.duration !== null) body.seconds = String(req.duration);
  if (req.size !== null) body.size = req.size;
  const image = req.first_frame ?? req.references[0] ?? null;
  if (image !== null) body.input_reference = { image_url: image };
  if (req.seed !== null) body.seed = req.seed;
  // Passthrough options (already filtered by the endpoint's allowed list) complete the body; they never replace
  // the fields above.
  for (const [k, v] of Object.entries(req.options)) if (!(k in body)) body[k] = v;
  return body;
}

/** A video object as the adapter reads it (unknown fields pass); `id` is required when it is created. */
const VideoFields = {
  status: Type.String(),
  progress: Opt(Type.Number()),
  seconds: Opt(Type.Union([Type.String(), Type.Number()])),
  error: Opt(Type.Object({ message: Opt(Type.String()) })),
};
const checkVideo = wireCheck(Type.Object({ id: Opt(Type.String()), ...VideoFields }), 'video object');
const checkCreated = wireCheck(Type.Object({ id: Type.String(), status: Opt(Type.String()) }), 'video object');

/** A video object → the job's state. */
export function openaiVideoState(raw: unknown): VideoPoll {
  const v = checkVideo(raw);
  switch (v.status) {
    case 'queued':
    case 'in_progress':
      return { state: 'running', progress: typeof v.progress === 'number' ? v.progress : null };
    case 'completed': {
      const id = v.id ?? '';
      const seconds = Number(v.seconds);
      return { state: 'completed', content: [{ kind: 'openai-video', video_id: id }], seconds: Number.isFinite(seconds) && seconds > 0 ? seconds : null };
    }
    case 'failed': {
      return { state: 'failed', message: v.error?.message || 'The provider failed to generate the video' };
    }
    default:
      return { state: 'failed', message: `The provider reported the video as ${v.status}` };
  }
}

export const openaiVideoAdapter: VideoAdapter = {
  protocol: 'openai-video',

  async submit(ctx, req) {
    const body = openaiVideoBody(ctx.endpoint.upstreamModel, req);
    const res = await ctx.http.json({ method: 'POST', url: videoUrl(ctx), headers: headers(ctx, true), body: JSON.stringify(body), timeouts: ctx.timeouts, signal: ctx.signal }, openaiError);
    const { id } = checkCreated(res);
    if (!SAFE_ID.test(id)) throw new UpstreamError(502, 'Provider returned an invalid video object: id has characters outside [A-Za-z0-9_.:-] or is too long', 'provider_unavailable', null, res);
    return id;
  },

  async poll(ctx, id) {
    const res = await ctx.http.json({ method: 'GET', url: videoUrl(ctx, id), headers: headers(ctx, true), timeouts: ctx.timeouts, signal: ctx.signal }, openaiError);
    const state = openaiVideoState(res);
    if (state.state === 'completed') state.content = [{ kind: 'openai-video', video_id: id }];
    return state;
  },

  async download(ctx, ref: VideoContentRef): Promise<Dispatcher.ResponseData> {
    if (ref.kind !== 'openai-video') throw new UpstreamError(502, 'Stored video reference does not match the provider protocol', 'provider_unavailable', null, null);
    const url = videoUrl(ctx, ref.video_id, '/content');
    url.searchParams.set('variant', 'video');
    const res = await ctx.http.request({ method: 'GET', url, headers: headers(ctx, false), timeouts: ctx.timeouts, signal: ctx.signal });
    if (res.statusCode < 200 || res.statusCode >= 300) throw await downloadError(res, openaiError);
    return res;
  },
};
