/**
 * Video jobs' shapes and pure helpers (services/videos.ts): request and view types, sizes and aspect ratios,
 * callback URLs and webhook signatures, prices and reservations, the model listing.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { EndpointDef, ModelDef, VideoCapabilities } from '../core/catalog-types.js';
import { checkOutboundUrl } from '../core/addresses.js';
import { computeCost } from '../core/pricing.js';
import { modelIdentity } from '../core/model-view.js';
import type { ProviderPreferences } from '../core/provider-prefs.js';
import { type RoutePlan } from '../core/routing.js';
import { type VideoStatus } from '../core/video-states.js';
import { badRequest, HttpError } from '../core/errors.js';
import { type VideoAdapter } from '../providers/registry.js';
import type { KeyRow, Store, VideoJobRequest, VideoJobRow } from '../store/types.js';
import type { VideoConfig } from '../config.js';
import { type CatalogService } from './catalog.js';
import { type AttemptTarget } from './attempts/runner.js';
import type { ByokService } from './byok.js';
import type { GenerationRecorder } from './generations.js';
import type { GuardrailService } from './guardrails.js';
import type { HealthTracker } from './health.js';
import type { WorkspaceService } from './workspaces.js';

export const API_PREFIX = '/api/v1';
/** Jobs a worker takes per pass. */
export const BATCH = 16;
/** Submission rounds (every candidate endpoint) retried after transient failures before the job fails. */
export const SUBMIT_RETRIES = 2;
/** Longest wait between two polls of a job whose upstream keeps failing. */
export const MAX_POLL_BACKOFF_MS = 5 * 60_000;
export const MAX_WEBHOOK_BACKOFF_MS = 3_600_000;
export const WEBHOOK_TIMEOUT_MS = 10_000;

export type FrameType = 'first_frame' | 'last_frame';

/** The body of POST /videos, as validated by the route schema. */
export interface VideoCreateBody {
  model: string;
  prompt?: string;
  duration?: number;
  resolution?: string;
  aspect_ratio?: string;
  size?: string;
  frame_images?: Array<{ type: 'image_url'; image_url: { url: string }; frame_type: FrameType }>;
  input_references?: Array<{ type: string; image_url?: { url: string }; audio_url?: { url: string }; video_url?: { url: string } }>;
  generate_audio?: boolean;
  seed?: number;
  creativity?: number;
  upscale_factor?: number;
  callback_url?: string;
  provider?: (ProviderPreferences & { options?: Record<string, unknown> }) | null;
}

/** A job as the API shows it. */
export interface VideoJobView {
  id: string;
  polling_url: string;
  status: VideoStatus;
  generation_id?: string;
  unsigned_urls?: string[];
  usage?: { cost: number | null; is_byok: boolean };
  error?: string;
}

export interface VideoServiceDeps {
  store: Store;
  catalog: CatalogService;
  health: HealthTracker;
  recorder: GenerationRecorder;
  workspaces?: WorkspaceService;
  guardrails?: GuardrailService;
  /** BYOK credentials (docs/byok.md): jobs are routed, submitted, polled and downloaded on them; absent = the operator's keys only. */
  byok?: ByokService;
  log: Logger;
  options: VideoConfig;
  now?: () => number;
  rng?: () => number;
}

// ---- dimensions -------------------------------------------------------------------------------------------------

export const ASPECTS: Array<[string, number]> = [
  ['16:9', 16 / 9],
  ['9:16', 9 / 16],
  ['1:1', 1],
  ['4:3', 4 / 3],
  ['3:4', 3 / 4],
  ['3:2', 3 / 2],
  ['2:3', 2 / 3],
  ['21:9', 21 / 9],
  ['9:21', 9 / 21],
];
/** Short side in pixels of each resolution name. */
export const SHORT_SIDE: Record<string, number> = { '480p': 480, '720p': 720, '768p': 768, '1080p': 1080, '1k': 1024, '2k': 1440, '4k': 2160 };

export const lower = (s: string) => s.toLowerCase();
export const sameText = (a: string, b: string) => lower(a) === lower(b);

/** `1280x720` → the closest named aspect ratio (within 3%) and resolution (by the short side, within 5%). */
export function describeSize(size: string): { resolution: string | null; aspect_ratio: string | null } {
  const m = /^(\d+)x(\d+)$/.exec(size);
  if (!m) return { resolution: null, aspect_ratio: null };
  const w = Number(m[1]);
  const h = Number(m[2]);
  if (w <= 0 || h <= 0) return { resolution: null, aspect_ratio: null };
  const ratio = w / h;
  const aspect = ASPECTS.find(([, r]) => Math.abs(r - ratio) / r < 0.03)?.[0] ?? null;
  const short = Math.min(w, h);
  let resolution: string | null = null;
  for (const [name, px] of Object.entries(SHORT_SIDE)) if (Math.abs(px - short) / px < 0.05) resolution = name === '1k' || name === '2k' || name === '4k' ? name.toUpperCase() : name;
  return { resolution, aspect_ratio: aspect };
}

/** Resolution and aspect ratio → `WIDTHxHEIGHT` (short side from the resolution, even dimensions). */
export function sizeFor(resolution: string, aspect: string): string | null {
  const short = SHORT_SIDE[lower(resolution)];
  const ratio = ASPECTS.find(([a]) => a === aspect)?.[1];
  if (!short || !ratio) return null;
  const long = Math.round((short * Math.max(ratio, 1 / ratio)) / 2) * 2;
  return ratio >= 1 ? `${long}x${short}` : `${short}x${long}`;
}

/** The output dimensions a request asks for, each completed from the others when possible. */
export function effectiveDims(r: Pick<VideoJobRequest, 'size' | 'resolution' | 'aspect_ratio'>): { size: string | null; resolution: string | null; aspect_ratio: string | null } {
  const fromSize = r.size ? describeSize(r.size) : { resolution: null, aspect_ratio: null };
  const resolution = r.resolution ?? fromSize.resolution;
  const aspect_ratio = r.aspect_ratio ?? fromSize.aspect_ratio;
  const size = r.size ?? (resolution && aspect_ratio ? sizeFor(resolution, aspect_ratio) : null);
  return { size, resolution, aspect_ratio };
}

/** The first request value the endpoint refuses, as `[field, value, supported]`; null when it takes them all. */
export function unsupported(caps: VideoCapabilities, r: VideoJobRequest): [string, string, string] | null {
  const dims = effectiveDims(r);
  const list = (xs: ReadonlyArray<string | number>) => xs.join(', ');
  if (r.duration !== null && caps.durations && !caps.durations.includes(r.duration)) return ['duration', String(r.duration), list(caps.durations)];
  if (r.size && caps.sizes && !caps.sizes.includes(r.size)) return ['size', r.size, list(caps.sizes)];
  if (dims.resolution && caps.resolutions && !caps.resolutions.some((x) => sameText(x, dims.resolution!))) return ['resolution', dims.resolution, list(caps.resolutions)];
  if (dims.aspect_ratio && caps.aspect_ratios && !caps.aspect_ratios.includes(dims.aspect_ratio)) return ['aspect_ratio', dims.aspect_ratio, list(caps.aspect_ratios)];
  if (dims.size && caps.sizes && !caps.sizes.includes(dims.size)) return ['size', dims.size, list(caps.sizes)];
  for (const f of r.frame_images) if (caps.frame_images && !caps.frame_images.includes(f.frame_type)) return ['frame_images', f.frame_type, list(caps.frame_images) || 'none'];
  if (r.generate_audio === true && caps.generate_audio === false) return ['generate_audio', 'true', 'false'];
  if (r.seed !== null && caps.seed === false) return ['seed', String(r.seed), 'none'];
  return null;
}

// ---- callback URLs ----------------------------------------------------------------------------------------------

/** Checks a `callback_url`: https to a public host; a loopback host (http or https) only when the config allows it. */
export function checkCallbackUrl(raw: string, allowLoopback: boolean): string {
  return checkOutboundUrl(raw, allowLoopback, 'callback_url');
}

/** `X-Gateway-Signature` value: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>,<raw body>")>`. */
export function signWebhook(secret: string, t: number, rawBody: string): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t},${rawBody}`).digest('hex')}`;
}

// ---- the service ------------------------------------------------------------------------------------------------

export const iso = (ms: number) => new Date(ms).toISOString();

/** One candidate endpoint of a job's submission, its index among the job's candidates, and the key it goes with. */
export interface VideoTarget extends AttemptTarget {
  adapter: VideoAdapter;
  index: number;
  /** The operator's key for the provider, or the secret of the BYOK credential `byokId`. */
  apiKey: string | null;
  byokId?: string;
}

/** A new `pending` job of `key` (its id drawn here), accepted at `now` and expiring at `deadline` (epoch ms). */
export function newVideoJob(key: KeyRow, model: string, req: VideoJobRequest, callbackUrl: string | null, now: number, deadline: number): VideoJobRow {
  return {
    id: `job-${randomBytes(12).toString('hex')}`,
    workspace_id: key.workspace_id,
    key_hash: key.hash,
    model,
    provider: null,
    endpoint_tag: null,
    upstream_id: null,
    status: 'pending',
    request_body: req,
    error: null,
    generation_id: null,
    cost: null,
    reserved_cost: null,
    is_byok: false,
    byok_credential_id: null,
    content_refs: null,
    seconds: null,
    callback_url: callbackUrl,
    webhook_state: 'none',
    webhook_attempts: 0,
    webhook_next_at: null,
    webhook_last_error: null,
    lease_owner: null,
    lease_until: null,
    next_poll_at: null,
    poll_errors: 0,
    deadline_at: iso(deadline),
    submitted_at: null,
    finished_at: null,
    created_at: iso(now),
    updated_at: iso(now),
  };
}

// ---- helpers ----------------------------------------------------------------------------------------------------

export function checkImageUrl(url: string, field: string): void {
  if (/^data:image\/[a-z0-9.+-]+;base64,/i.test(url) || /^https:\/\//i.test(url)) return;
  throw badRequest(`${field} must be an https URL or a base64 data URL of an image`, { field });
}

/** USD per second used to order endpoints by price (per-video prices spread over the default duration). */
export function routePrice(e: EndpointDef): string | null {
  const p = e.pricing;
  if (!p) return null;
  if (p.video_second !== undefined) return p.video_second;
  if (p.video !== undefined) return String(Number(p.video) / (e.video?.default_duration ?? 8));
  return null;
}

/**
 * What a job holds against its key's spending limit while it runs: the most it can bill on any of its candidate
 * endpoints, for the requested duration (else the endpoint's default, else its longest) at the requested resolution
 * (else the default). 0 when no candidate has a known price.
 */
export function videoReserve(endpoints: EndpointDef[], r: VideoJobRequest): number {
  let most = 0;
  for (const e of endpoints) {
    const caps = e.video;
    if (!caps) continue;
    const seconds = r.duration ?? caps.default_duration ?? (caps.durations && caps.durations.length > 0 ? Math.max(...caps.durations) : null);
    const cost = videoCost(e, seconds, effectiveDims(r).resolution ?? caps.default_resolution ?? null);
    if (cost !== null && cost > most) most = cost;
  }
  return most;
}

/**
 * Cost of a completed job: `video_second` (or the resolution's price) × seconds, plus `video` per video, exactly (the
 * pricing module's decimal arithmetic), discount applied. Null when the endpoint's price is unknown.
 */
export function videoCost(e: EndpointDef, seconds: number | null, resolution: string | null): number | null {
  const p = e.pricing;
  if (!p) return null;
  const byRes = e.video?.second_price_by_resolution ?? {};
  const resKey = resolution ? Object.keys(byRes).find((k) => sameText(k, resolution)) : undefined;
  const perSecond = resKey ? byRes[resKey] : p.video_second;
  if (perSecond === undefined && p.video === undefined) return null;
  if (perSecond !== undefined && seconds === null) return null;
  const secs = Math.max(0, Math.ceil(seconds ?? 0));
  const pricing = { prompt: '0', completion: '0', request: perSecond ?? '0', image: p.video ?? '0', ...(p.discount !== undefined ? { discount: p.discount } : {}) };
  const c = computeCost(pricing, { promptTokens: 0, completionTokens: 0, cachedReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }, { requests: secs, images: 1 });
  return c.cost;
}

/** The routing error of an empty plan as an HttpError (as chat answers it). */
export function routeError(plan: RoutePlan): HttpError {
  const e = plan.error!;
  const metadata: Record<string, unknown> = { error_type: e.code === 'model_not_found' ? 'not_found' : e.code, excluded_by: e.excluded_by ?? [] };
  const unroutable = plan.considered.filter((c) => c.excluded === 'no_credentials').map((c) => c.provider);
  if (unroutable.length > 0) metadata.providers_without_credentials = [...new Set(unroutable)];
  const headers = e.retry_after_ms ? { 'retry-after': String(Math.ceil(e.retry_after_ms / 1000)) } : undefined;
  return new HttpError(e.status, e.message, metadata, headers);
}

export function unionList<T>(lists: Array<T[] | null>): T[] | null {
  if (lists.every((l) => l === null)) return null;
  const out: T[] = [];
  for (const l of lists) for (const x of l ?? []) if (!out.includes(x)) out.push(x);
  return out;
}

export function anyFlag(flags: Array<boolean | null>): boolean | null {
  if (flags.some((f) => f === true)) return true;
  if (flags.length > 0 && flags.every((f) => f === false)) return false;
  return null;
}

/** Pricing SKUs of an endpoint: `video_second`, `video_second_<resolution>`, `video` (decimal strings, USD). */
export function pricingSkus(e: EndpointDef | undefined): Record<string, string> | null {
  const p = e?.pricing;
  if (!p) return null;
  const out: Record<string, string> = {};
  if (p.video_second !== undefined) out.video_second = p.video_second;
  for (const [res, price] of Object.entries(e?.video?.second_price_by_resolution ?? {})) out[`video_second_${res}`] = price;
  if (p.video !== undefined) out.video = p.video;
  return Object.keys(out).length > 0 ? out : null;
}

/** One entry of GET /videos/models. */
export function videoModelView(m: ModelDef, endpoints: EndpointDef[]) {
  const caps = endpoints.map((e) => e.video).filter((v): v is VideoCapabilities => v !== undefined);
  const priced = endpoints.filter((e) => e.pricing);
  const cheapest = priced.sort((a, b) => Number(routePrice(a) ?? Infinity) - Number(routePrice(b) ?? Infinity))[0];
  return {
    ...modelIdentity(m),
    supported_resolutions: unionList(caps.map((c) => c.resolutions)),
    supported_aspect_ratios: unionList(caps.map((c) => c.aspect_ratios)),
    supported_sizes: unionList(caps.map((c) => c.sizes)),
    supported_durations: unionList(caps.map((c) => c.durations)),
    supported_frame_images: unionList(caps.map((c) => c.frame_images)),
    generate_audio: anyFlag(caps.map((c) => c.generate_audio)),
    seed: anyFlag(caps.map((c) => c.seed)),
    pricing_skus: pricingSkus(cheapest),
    allowed_passthrough_parameters: unionList(caps.map((c) => c.allowed_passthrough_parameters)) ?? [],
    creativity: null,
    upscale_factor: null,
  };
}
