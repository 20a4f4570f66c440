/**
 * Video generation in the simulator: OpenAI's Videos API and Google Veo's long-running operations (Gemini API), under
 * `/<provider>/…` like the other protocols.
 *
 * OpenAI (`…/v1`):
 *   POST /v1/videos                  {model, prompt, seconds?, size?, input_reference?} → video object (`queued`)
 *   GET  /v1/videos/<id>             video object: queued → in_progress (progress %) → completed | failed (`error`)
 *   GET  /v1/videos/<id>/content     the MP4 bytes once completed (`?variant=video`, the default)
 * Google (`…/v1beta`):
 *   POST /v1beta/models/<model>:predictLongRunning  {instances: [{prompt, image?, lastFrame?}], parameters?} → {name}
 *   GET  /v1beta/models/<model>/operations/<id>     {name, done: false, metadata} | {name, done: true, response: {
 *        generateVideoResponse: {generatedSamples: [{video: {uri}}]}}} | {name, done: true, error: {code, message}}
 *   GET  /v1beta/files/<id>:download?alt=media      the MP4 bytes (the `uri` of a sample; absolute, on this simulator)
 *
 * Knobs, read when a job is created (provider knobs or `x-sim-*` headers): `videoJobMs` (time until the job finishes,
 * default 0: done at the first poll), `videoFail` (the job fails with this message), `videoBytes` (size of each
 * video, default 2048). The fault knobs (`errorStatus`, `failTimes`, `latencyMs`, `hang`, …) apply to job creation only:
 * polls and downloads are not model calls (not counted in stats, not logged).
 *
 * A job belongs to the credential that created it (`Authorization: Bearer`, `x-goog-api-key`, `x-api-key` or `api-key`;
 * none on a provider without auth): polled or downloaded with another key (or none), it is not found — 404, as OpenAI
 * answers for another project's video and Google for another project's operation — so a gateway that follows a job
 * on the wrong credential sees it fail.
 *
 * The bytes are a deterministic fake MP4 (`fakeMp4`): an `ftyp` box then an `mdat` box of printable filler, every byte
 * below 0x80, so the simulator's string replies carry them unchanged.
 */
import { createHash } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { geminiProtocol } from './gemini.js';
import { openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext, JsonReply } from './protocol.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const DEFAULT_BYTES = 2048;
const MAX_JOBS = 10_000;
const JSON_HEADERS: OutgoingHttpHeaders = { 'content-type': 'application/json' };

/** OpenAI video sizes and durations (Sora 2 / 2 Pro). */
export const OPENAI_VIDEO_SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024', '1920x1080', '1080x1920'];
export const OPENAI_VIDEO_SECONDS = ['4', '8', '12', '16', '20'];

interface SimVideoJob {
  id: string;
  protocol: 'openai' | 'veo';
  model: string;
  prompt: string | null;
  seconds: string;
  size: string;
  createdAt: number;
  durationMs: number;
  fail: string | undefined;
  bytes: number;
  samples: number;
  /** `http://host[/provider]` for the download URIs of Veo samples. */
  origin: string;
  /** The credential the job was created with (null: none): only it may poll and download the job. */
  owner: string | null;
}

/** The credential a request presents, in any of the header forms the protocols use (null: none). */
function presentedKey(ctx: EndpointContext): string | null {
  const h = ctx.headers;
  const bearer = typeof h.authorization === 'string' && h.authorization.startsWith('Bearer ') ? h.authorization.slice(7) : undefined;
  for (const v of [bearer, h['x-goog-api-key'], h['x-api-key'], h['api-key']]) if (typeof v === 'string' && v !== '') return v;
  return null;
}

/** The job, when it exists and the request presents the credential that created it. */
function ownJob(ctx: EndpointContext, id: string, protocol: SimVideoJob['protocol']): SimVideoJob | undefined {
  const job = jobs.get(id);
  return job && job.protocol === protocol && job.owner === presentedKey(ctx) ? job : undefined;
}

/** Every job created by any simulator in this process (ids carry the simulator's random tag). */
const jobs = new Map<string, SimVideoJob>();

function remember(job: SimVideoJob): void {
  if (jobs.size >= MAX_JOBS) jobs.delete(jobs.keys().next().value as string);
  jobs.set(job.id, job);
}

/**
 * Deterministic fake MP4 bytes of about `size` bytes (at least 40): a 32-byte `ftyp` box (brand `isom`) and an `mdat`
 * box filled from the SHA-256 of `seed`. Each byte is below 0x80; box sizes are rounded down to keep that true.
 */
export function fakeMp4(seed: string, size = DEFAULT_BYTES): Buffer {
  const ftyp = Buffer.concat([Buffer.from([0, 0, 0, 32]), Buffer.from('ftypisom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2avc1mp41')]);
  let mdatSize = Math.max(8, size - ftyp.length) & 0x7f7f7f7f;
  if (mdatSize < 8) mdatSize = 8;
  const header = Buffer.from([(mdatSize >>> 24) & 0x7f, (mdatSize >>> 16) & 0x7f, (mdatSize >>> 8) & 0x7f, mdatSize & 0x7f]);
  const hex = createHash('sha256').update(seed).digest('hex');
  const filler = Buffer.alloc(mdatSize - 8);
  for (let i = 0; i < filler.length; i++) filler[i] = hex.charCodeAt(i % hex.length);
  return Buffer.concat([ftyp, header, Buffer.from('mdat'), filler]);
}

/** The bytes of sample `index` of a job (what the download routes return). */
export function simVideoBytes(jobId: string, index = 0, size = DEFAULT_BYTES): Buffer {
  return fakeMp4(`${jobId}#${index}`, size);
}

function state(job: SimVideoJob, now = Date.now()): { phase: 'queued' | 'running' | 'done'; progress: number } {
  const elapsed = now - job.createdAt;
  if (elapsed >= job.durationMs) return { phase: 'done', progress: 100 };
  if (elapsed < job.durationMs / 4) return { phase: 'queued', progress: 0 };
  return { phase: 'running', progress: Math.min(99, Math.floor((100 * elapsed) / job.durationMs)) };
}

function json(status: number, value: unknown): JsonReply {
  return { kind: 'json', status, body: JSON.stringify(value), headers: JSON_HEADERS };
}

function mp4(job: SimVideoJob, index: number): JsonReply {
  // Every byte is ASCII: the string body is written byte for byte.
  const bytes = simVideoBytes(job.id, index, job.bytes);
  return { kind: 'json', status: 200, body: bytes.toString('latin1'), headers: { 'content-type': 'video/mp4' } };
}

function originOf(ctx: EndpointContext): string {
  const host = typeof ctx.headers.host === 'string' ? ctx.headers.host : '127.0.0.1';
  return `http://${host}${ctx.provider === 'default' ? '' : `/${ctx.provider}`}`;
}

// ---------------------------------------------------------------- OpenAI Videos API

const openaiInvalid = (ctx: EndpointContext, message: string, param: string | null, code: string | null = 'invalid_value'): JsonReply =>
  openaiProtocol.error(400, ctx, { message, type: 'invalid_request_error', param, code });

function openaiVideoObject(job: SimVideoJob): Obj {
  const s = state(job);
  const done = s.phase === 'done';
  const status = done ? (job.fail !== undefined ? 'failed' : 'completed') : s.phase === 'queued' ? 'queued' : 'in_progress';
  const created = Math.floor(job.createdAt / 1000);
  const completed = done ? Math.floor((job.createdAt + job.durationMs) / 1000) : null;
  return {
    id: job.id,
    object: 'video',
    model: job.model,
    status,
    progress: status === 'failed' ? 0 : s.progress,
    created_at: created,
    completed_at: completed,
    expires_at: status === 'completed' ? (completed as number) + 3600 : null,
    prompt: job.prompt,
    size: job.size,
    seconds: job.seconds,
    remixed_from_video_id: null,
    error: status === 'failed' ? { code: 'video_generation_failed', message: job.fail } : null,
  };
}

function openaiCreate(ctx: EndpointContext): JsonReply {
  const b = ctx.body;
  if (!isObj(b)) return openaiInvalid(ctx, 'The request body must be a JSON object.', null, 'invalid_type');
  if (typeof b.prompt !== 'string' || b.prompt.trim() === '') return openaiInvalid(ctx, "Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter');
  if (b.model !== undefined && typeof b.model !== 'string') return openaiInvalid(ctx, "Invalid type for 'model': expected a string.", 'model', 'invalid_type');
  if (b.seconds !== undefined && !OPENAI_VIDEO_SECONDS.includes(b.seconds as string)) {
    return openaiInvalid(ctx, `Invalid value for 'seconds': expected one of ${OPENAI_VIDEO_SECONDS.map((s) => `'${s}'`).join(', ')}.`, 'seconds');
  }
  if (b.size !== undefined && !OPENAI_VIDEO_SIZES.includes(b.size as string)) {
    return openaiInvalid(ctx, `Invalid value for 'size': expected one of ${OPENAI_VIDEO_SIZES.map((s) => `'${s}'`).join(', ')}.`, 'size');
  }
  if (b.input_reference !== undefined) {
    const r = b.input_reference;
    if (!isObj(r) || (typeof r.image_url !== 'string' && typeof r.file_id !== 'string')) {
      return openaiInvalid(ctx, "Invalid 'input_reference': expected an object with image_url or file_id.", 'input_reference', 'invalid_type');
    }
  }
  const job: SimVideoJob = {
    id: `video_${ctx.rid}${createHash('sha256').update(`${ctx.rid}|${b.prompt}`).digest('hex').slice(0, 16)}`,
    protocol: 'openai',
    model: (b.model as string | undefined) ?? 'sora-2',
    prompt: b.prompt,
    seconds: (b.seconds as string | undefined) ?? '4',
    size: (b.size as string | undefined) ?? '720x1280',
    createdAt: Date.now(),
    durationMs: ctx.knobs.videoJobMs ?? 0,
    fail: ctx.knobs.videoFail,
    bytes: ctx.knobs.videoBytes ?? DEFAULT_BYTES,
    samples: 1,
    origin: originOf(ctx),
    owner: presentedKey(ctx),
  };
  remember(job);
  return json(200, { ...openaiVideoObject(job), status: 'queued', progress: 0, completed_at: null, expires_at: null, error: null });
}

const OPENAI_ONE = /^\/v1\/videos\/([^/]+)$/;
const OPENAI_CONTENT = /^\/v1\/videos\/([^/]+)\/content$/;

function openaiJob(ctx: EndpointContext, re: RegExp): SimVideoJob | JsonReply {
  const id = decodeURIComponent(re.exec(ctx.path)?.[1] ?? '');
  const job = ownJob(ctx, id, 'openai');
  if (!job) {
    return openaiProtocol.error(404, ctx, { message: `Video with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: 'video_not_found' });
  }
  return job;
}

function openaiRetrieve(ctx: EndpointContext): JsonReply {
  const job = openaiJob(ctx, OPENAI_ONE);
  return 'kind' in job ? job : json(200, openaiVideoObject(job));
}

function openaiContent(ctx: EndpointContext): JsonReply {
  const job = openaiJob(ctx, OPENAI_CONTENT);
  if ('kind' in job) return job;
  const variant = new URLSearchParams(ctx.query).get('variant') ?? 'video';
  if (variant !== 'video') return openaiInvalid(ctx, `The simulator only serves variant 'video' (got '${variant}').`, 'variant');
  const status = openaiVideoObject(job).status;
  if (status !== 'completed') return openaiInvalid(ctx, `Video ${job.id} is not ready: its status is ${status}.`, null, 'video_not_ready');
  return mp4(job, 0);
}

// ---------------------------------------------------------------- Google Veo (Gemini API)

const VEO_CREATE = /^\/v1beta\/models\/([^/:]+)(?::|%3A)predictLongRunning$/i;
const VEO_OPERATION = /^\/v1beta\/models\/([^/:]+)\/operations\/([^/]+)$/;
const VEO_DOWNLOAD = /^\/v1beta\/files\/([^/:]+)(?::|%3A)download$/i;

function veoError(ctx: EndpointContext, status: number, message: string, statusName: string): JsonReply {
  const body = JSON.stringify({ error: { code: status, message, status: statusName } });
  return { kind: 'json', status, body, headers: { 'content-type': 'application/json; charset=UTF-8' } };
}

const veoInvalid = (ctx: EndpointContext, message: string) => veoError(ctx, 400, message, 'INVALID_ARGUMENT');

function checkImage(v: unknown, where: string, ctx: EndpointContext): JsonReply | undefined {
  if (v === undefined) return undefined;
  if (!isObj(v)) return veoInvalid(ctx, `Invalid JSON payload received. Invalid value at '${where}'.`);
  const inline = typeof v.bytesBase64Encoded === 'string' && typeof v.mimeType === 'string';
  const byUri = typeof v.gcsUri === 'string' || typeof v.uri === 'string';
  if (!inline && !byUri) return veoInvalid(ctx, `${where}: an image needs bytesBase64Encoded and mimeType, or a gcsUri.`);
  return undefined;
}

function veoCreate(ctx: EndpointContext): JsonReply {
  const m = VEO_CREATE.exec(ctx.path);
  const model = decodeURIComponent(m?.[1] ?? 'veo-sim');
  const b = ctx.body;
  if (!isObj(b)) return veoInvalid(ctx, 'Invalid JSON payload received. Expected an object.');
  if (!Array.isArray(b.instances) || b.instances.length === 0 || !isObj(b.instances[0])) return veoInvalid(ctx, '* PredictLongRunningRequest.instances: instances is not specified\n');
  const inst = b.instances[0] as Obj;
  if (inst.prompt !== undefined && typeof inst.prompt !== 'string') return veoInvalid(ctx, "Invalid value at 'instances[0].prompt' (TYPE_STRING).");
  if ((typeof inst.prompt !== 'string' || inst.prompt.trim() === '') && inst.image === undefined) return veoInvalid(ctx, 'A prompt or an image is required.');
  for (const k of ['image', 'lastFrame'] as const) {
    const bad = checkImage(inst[k], `instances[0].${k}`, ctx);
    if (bad) return bad;
  }
  const p = b.parameters === undefined ? {} : b.parameters;
  if (!isObj(p)) return veoInvalid(ctx, "Invalid JSON payload received. Invalid value at 'parameters'.");
  const duration = p.durationSeconds === undefined ? 8 : Number(p.durationSeconds);
  if (!Number.isInteger(duration) || duration < 4 || duration > 8) return veoInvalid(ctx, `The duration ${JSON.stringify(p.durationSeconds)} is not supported: use 4 to 8 seconds.`);
  if (p.aspectRatio !== undefined && p.aspectRatio !== '16:9' && p.aspectRatio !== '9:16') return veoInvalid(ctx, `Aspect ratio ${JSON.stringify(p.aspectRatio)} is not supported: use 16:9 or 9:16.`);
  const resolution = p.resolution === undefined ? '720p' : String(p.resolution).toLowerCase();
  if (!['720p', '1080p', '4k'].includes(resolution)) return veoInvalid(ctx, `Resolution ${JSON.stringify(p.resolution)} is not supported: use 720p, 1080p or 4k.`);
  const samples = p.sampleCount ?? p.numberOfVideos ?? 1;
  if (!Number.isInteger(samples) || (samples as number) < 1 || (samples as number) > 4) return veoInvalid(ctx, 'sampleCount must be 1 to 4.');
  const landscape = p.aspectRatio !== '9:16';
  const h = resolution === '720p' ? 720 : resolution === '1080p' ? 1080 : 2160;
  const w = Math.round((h * 16) / 9);
  const job: SimVideoJob = {
    id: `op${ctx.rid}${createHash('sha256').update(`${ctx.rid}|${String(inst.prompt)}`).digest('hex').slice(0, 12)}`,
    protocol: 'veo',
    model,
    prompt: typeof inst.prompt === 'string' ? inst.prompt : null,
    seconds: String(duration),
    size: landscape ? `${w}x${h}` : `${h}x${w}`,
    createdAt: Date.now(),
    durationMs: ctx.knobs.videoJobMs ?? 0,
    fail: ctx.knobs.videoFail,
    bytes: ctx.knobs.videoBytes ?? DEFAULT_BYTES,
    samples: samples as number,
    origin: originOf(ctx),
    owner: presentedKey(ctx),
  };
  remember(job);
  return json(200, { name: `models/${model}/operations/${job.id}` });
}

function veoOperation(ctx: EndpointContext): JsonReply {
  const m = VEO_OPERATION.exec(ctx.path)!;
  const name = `models/${m[1]}/operations/${m[2]}`;
  const job = ownJob(ctx, decodeURIComponent(m[2]), 'veo');
  if (!job) return veoError(ctx, 404, `Operation ${name} not found.`, 'NOT_FOUND');
  const s = state(job);
  if (s.phase !== 'done') return json(200, { name, metadata: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningMetadata', progressPercent: s.progress } });
  if (job.fail !== undefined) return json(200, { name, done: true, error: { code: 3, message: job.fail } });
  const generatedSamples = Array.from({ length: job.samples }, (_, i) => ({ video: { uri: `${job.origin}/v1beta/files/${job.id}-${i}:download?alt=media` } }));
  return json(200, {
    name,
    done: true,
    response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse: { generatedSamples } },
  });
}

function veoDownload(ctx: EndpointContext): JsonReply {
  const file = decodeURIComponent(VEO_DOWNLOAD.exec(ctx.path)?.[1] ?? '');
  const dash = file.lastIndexOf('-');
  const job = dash > 0 ? ownJob(ctx, file.slice(0, dash), 'veo') : undefined;
  const index = Number(file.slice(dash + 1));
  if (!job || !Number.isInteger(index) || index < 0 || index >= job.samples || state(job).phase !== 'done' || job.fail !== undefined) {
    return veoError(ctx, 404, `File files/${file} not found.`, 'NOT_FOUND');
  }
  return mp4(job, index);
}

export const videoEndpoints: Endpoint[] = [
  { method: 'POST', path: '/v1/videos', protocol: openaiProtocol, modelCall: true, handle: openaiCreate },
  { method: 'GET', path: OPENAI_CONTENT, protocol: openaiProtocol, modelCall: false, handle: openaiContent },
  { method: 'GET', path: OPENAI_ONE, protocol: openaiProtocol, modelCall: false, handle: openaiRetrieve },
  { method: 'POST', path: VEO_CREATE, protocol: geminiProtocol, modelCall: true, handle: veoCreate },
  { method: 'GET', path: VEO_OPERATION, protocol: geminiProtocol, modelCall: false, handle: veoOperation },
  { method: 'GET', path: VEO_DOWNLOAD, protocol: geminiProtocol, modelCall: false, handle: veoDownload },
];
