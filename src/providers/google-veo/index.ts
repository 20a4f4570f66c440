/**
 * Google Veo upstream through the Gemini API (`google-veo`; docs/videos.md), on the provider's base URL (e.g.
 * `https://generativelanguage.googleapis.com/v1beta`), with the key in `x-goog-api-key`:
 *   POST {base}/models/{model}:predictLongRunning  {instances: [{prompt, image?, lastFrame?, referenceImages?}],
 *                                                   parameters: {durationSeconds, aspectRatio, resolution, seed, …}}
 *                                                   → a long-running operation {name}
 *   GET  {base}/{operation name}                   {name, done?, metadata?, error?: {code, message},
 *                                                   response?: {generateVideoResponse: {generatedSamples: [{video: {uri}}]}}}
 *   GET  {video uri}                               the MP4 (Files API `…:download?alt=media`, which may redirect)
 * Images: a data URL is sent inline (`bytesBase64Encoded` + `mimeType`); any other URL as `gcsUri` (Google accepts
 * Cloud Storage and Files API URIs). The API key is sent only to the provider's own origin: a download redirect to
 * another host (Google's storage) is followed without it. Errors use Google's envelope (`parseGoogleError`).
 */
import { Type } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import { Opt, wireCheck } from '../wire-schema.js';
import { parseGoogleError } from '../google/errors.js';
import { UpstreamError } from '../../core/provider-errors.js';
import type { VideoContentRef } from '../../store/types.js';
import { downloadError, drain, type VideoAdapter, type VideoCallContext, type VideoPoll, type VideoSubmitRequest } from '../video-types.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Operation names are paths under the base URL: `models/<m>/operations/<id>` or `operations/<id>`. */
const OPERATION_NAME = /^(?:models\/[A-Za-z0-9._-]+\/)?operations\/[A-Za-z0-9._-]+$/;
const MAX_REDIRECTS = 5;

function headers(ctx: VideoCallContext, json: boolean, withKey: boolean): Record<string, string> {
  const h: Record<string, string> = { accept: json ? 'application/json' : 'video/mp4, */*', 'user-agent': 'model-gateway/0.1' };
  if (withKey) Object.assign(h, ctx.provider.headers);
  if (json) h['content-type'] = 'application/json';
  if (withKey && ctx.apiKey) h['x-goog-api-key'] = ctx.apiKey;
  return h;
}

/** An image URL as a Veo image: inline bytes for a data URL, else a URI Google can read. */
export function veoImage(url: string): Obj {
  const m = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  if (m) return { bytesBase64Encoded: m[2], mimeType: m[1] };
  return { gcsUri: url };
}

/** The request body of `:predictLongRunning`. */
export function veoBody(req: VideoSubmitRequest): Obj {
  const instance: Obj = {};
  if (req.prompt !== null) instance.prompt = req.prompt;
  if (req.first_frame !== null) instance.image = veoImage(req.first_frame);
  if (req.last_frame !== null) instance.lastFrame = veoImage(req.last_frame);
  if (req.references.length > 0) instance.referenceImages = req.references.map((u) => ({ image: veoImage(u), referenceType: 'asset' }));
  const parameters: Obj = {};
  if (req.duration !== null) parameters.durationSeconds = req.duration;
  if (req.aspect_ratio !== null) parameters.aspectRatio = req.aspect_ratio;
  if (req.resolution !== null) parameters.resolution = req.resolution.toLowerCase();
  if (req.seed !== null) parameters.seed = req.seed;
  if (req.generate_audio !== null) parameters.generateAudio = req.generate_audio;
  for (const [k, v] of Object.entries(req.options)) if (!(k in parameters)) parameters[k] = v;
  return Object.keys(parameters).length > 0 ? { instances: [instance], parameters } : { instances: [instance] };
}

const Samples = Opt(Type.Array(Type.Object({ video: Opt(Type.Object({ uri: Opt(Type.String()) })) })));
/** A long-running operation as the adapter reads it (unknown fields pass). */
const checkOperation = wireCheck(
  Type.Object({
    name: Opt(Type.String()),
    done: Opt(Type.Boolean()),
    metadata: Opt(Type.Object({ progressPercent: Opt(Type.Number()) })),
    error: Opt(Type.Object({ message: Opt(Type.String()) })),
    response: Opt(
      Type.Object({
        generateVideoResponse: Opt(Type.Object({ generatedSamples: Samples, raiMediaFilteredReasons: Opt(Type.Array(Type.Unknown())) })),
        generatedVideos: Samples,
      }),
    ),
  }),
  'operation',
);
const checkSubmitted = wireCheck(Type.Object({ name: Type.String() }), 'operation');

/** An operation → the job's state. */
export function veoOperationState(raw: unknown): VideoPoll {
  const op = checkOperation(raw);
  if (op.done !== true) {
    const md = isObj(op.metadata) ? op.metadata : {};
    return { state: 'running', progress: typeof md.progressPercent === 'number' ? md.progressPercent : null };
  }
  if (isObj(op.error)) {
    return { state: 'failed', message: typeof op.error.message === 'string' && op.error.message ? op.error.message : 'The provider failed to generate the video' };
  }
  const r = isObj(op.response) ? op.response : {};
  const gvr = isObj(r.generateVideoResponse) ? r.generateVideoResponse : {};
  const samples = Array.isArray(gvr.generatedSamples) ? gvr.generatedSamples : Array.isArray(r.generatedVideos) ? r.generatedVideos : [];
  const content: VideoContentRef[] = [];
  for (const s of samples) {
    const uri = isObj(s) && isObj(s.video) ? s.video.uri : undefined;
    if (typeof uri === 'string' && /^https?:\/\//.test(uri)) content.push({ kind: 'google-veo', uri });
  }
  if (content.length === 0) {
    const reasons = Array.isArray(gvr.raiMediaFilteredReasons) ? gvr.raiMediaFilteredReasons.filter((x) => typeof x === 'string') : [];
    return { state: 'failed', message: reasons.length > 0 ? `The provider filtered the video: ${reasons.join('; ')}` : 'The provider returned no video' };
  }
  return { state: 'completed', content, seconds: null };
}

export const googleVeoAdapter: VideoAdapter = {
  protocol: 'google-veo',

  async submit(ctx, req) {
    const model = ctx.endpoint.upstreamModel.replace(/^models\//, '');
    const url = new URL(`${ctx.provider.baseUrl}/models/${encodeURIComponent(model)}:predictLongRunning`);
    const res = await ctx.http.json({ method: 'POST', url, headers: headers(ctx, true, true), body: JSON.stringify(veoBody(req)), timeouts: ctx.timeouts, signal: ctx.signal }, parseGoogleError);
    const { name } = checkSubmitted(res);
    if (!OPERATION_NAME.test(name)) throw new UpstreamError(502, 'Provider returned an invalid operation: name is not an operation path', 'provider_unavailable', null, res);
    return name;
  },

  async poll(ctx, name) {
    if (!OPERATION_NAME.test(name)) throw new UpstreamError(502, 'Stored operation name is invalid', 'provider_unavailable', null, name);
    const res = await ctx.http.json({ method: 'GET', url: new URL(`${ctx.provider.baseUrl}/${name}`), headers: headers(ctx, true, true), timeouts: ctx.timeouts, signal: ctx.signal }, parseGoogleError);
    return veoOperationState(res);
  },

  async download(ctx, ref: VideoContentRef): Promise<Dispatcher.ResponseData> {
    if (ref.kind !== 'google-veo') throw new UpstreamError(502, 'Stored video reference does not match the provider protocol', 'provider_unavailable', null, null);
    const own = new URL(ctx.provider.baseUrl).origin;
    let url = new URL(ref.uri);
    for (let hop = 0; ; hop++) {
      const res = await ctx.http.request({ method: 'GET', url, headers: headers(ctx, false, url.origin === own), timeouts: ctx.timeouts, signal: ctx.signal });
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') {
        await drain(res);
        if (hop >= MAX_REDIRECTS) throw new UpstreamError(502, 'Provider redirected the download too many times', 'provider_unavailable', res.statusCode, null);
        const next = new URL(location, url);
        if (next.protocol !== 'https:' && next.protocol !== 'http:') throw new UpstreamError(502, 'Provider redirected the download to an unsupported URL', 'provider_unavailable', res.statusCode, null);
        url = next;
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) throw await downloadError(res, parseGoogleError);
      return res;
    }
  },
};
