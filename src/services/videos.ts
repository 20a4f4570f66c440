/**
 * Video generation jobs (docs/videos.md): POST /videos stores a `pending` job and answers 202; a background worker
 * drives every job through the states of src/core/video-states.ts — submits it upstream (OpenAI Videos API or Google
 * Veo), polls the upstream job, and ends it `completed`, `failed`, `cancelled` or `expired`, then sends the optional
 * webhook (HMAC-signed, retried with backoff).
 *
 * Durability and single driver: jobs live in the database; every status change is a conditional UPDATE along an
 * allowed transition (`transitionVideoJob`); a worker works only on jobs it holds a lease on (`claimVideoJobs`), renews
 * its leases while it runs and releases them at a graceful stop. Another instance (or this one after a restart) takes
 * over a job once its lease is free or expired, and resumes from what is stored: a submitted job is polled, never
 * submitted again. (A crash between the provider accepting a job and the database recording it — milliseconds — can
 * submit it twice.)
 */
import { checkOutboundUrl } from '../core/addresses.js';
import { createHmac, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { EndpointDef, ModelDef, ProviderDef, VideoCapabilities } from '../core/catalog-types.js';
import { computeCost } from '../core/pricing.js';
import { budgetRefusal, endpointVerdict, modelAccess, refusal } from '../core/policy.js';
import type { ProviderPreferences, ProviderSortBy } from '../core/provider-prefs.js';
import { planRoute, type ExclusionReason, type RouteCatalog, type RoutePlan } from '../core/routing.js';
import { isTerminal, pathTo, type TerminalVideoStatus, type VideoStatus } from '../core/video-states.js';
import { VIDEO_PARAMETERS } from '../core/catalog-types.js';
import { badRequest, conflict, HttpError, notFound } from '../core/errors.js';
import { UpstreamError } from '../core/provider-errors.js';
import { networkError } from '../providers/http.js';
import { videoAdapter, VideoHttp, type VideoAdapter, type VideoCallContext, type VideoSubmitRequest } from '../providers/registry.js';
import type { GenerationRow, KeyRow, Store, VideoJobPatch, VideoJobRequest, VideoJobRow } from '../store/types.js';
import type { VideoConfig } from '../config.js';
import { videoProtocolOf, type CatalogService } from './catalog.js';
import { newGenerationId } from './generation-id.js';
import { runAttempts, type AttemptTarget, type UnavailableTarget } from './attempts/runner.js';
import type { GenerationRecorder } from './generations.js';
import type { GuardrailService } from './guardrails.js';
import type { HealthTracker } from './health.js';
import type { WorkspaceService } from './workspaces.js';

export const API_PREFIX = '/api/v1';
/** Jobs a worker takes per pass. */
const BATCH = 16;
/** Submission rounds (every candidate endpoint) retried after transient failures before the job fails. */
const SUBMIT_RETRIES = 2;
/** Longest wait between two polls of a job whose upstream keeps failing. */
const MAX_POLL_BACKOFF_MS = 5 * 60_000;
const MAX_WEBHOOK_BACKOFF_MS = 3_600_000;
const WEBHOOK_TIMEOUT_MS = 10_000;

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
  log: Logger;
  options: VideoConfig;
  now?: () => number;
  rng?: () => number;
}

// ---- dimensions -------------------------------------------------------------------------------------------------

const ASPECTS: Array<[string, number]> = [
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
const SHORT_SIDE: Record<string, number> = { '480p': 480, '720p': 720, '768p': 768, '1080p': 1080, '1k': 1024, '2k': 1440, '4k': 2160 };

const lower = (s: string) => s.toLowerCase();
const sameText = (a: string, b: string) => lower(a) === lower(b);

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

const iso = (ms: number) => new Date(ms).toISOString();

/** One candidate endpoint of a job's submission, and its index among the job's candidates. */
interface VideoTarget extends AttemptTarget {
  adapter: VideoAdapter;
  index: number;
}

export class VideoService {
  /** This instance's identity in `lease_owner`. */
  readonly owner = `${hostname().slice(0, 40)}/${process.pid}/${randomBytes(6).toString('hex')}`;
  readonly http = new VideoHttp();
  /** The video route with prices projected for planRoute (USD per second in `prompt`), and the real endpoints. */
  private readonly route: RouteCatalog;
  private readonly real = new Map<string, EndpointDef>();
  private timer: NodeJS.Timeout | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private stopped: Promise<void> | null = null;
  private lastTickAt = 0;
  /** Jobs a step is working on right now (their leases are not released at a stop that cannot wait for them). */
  private readonly inFlight = new Set<string>();

  constructor(private readonly deps: VideoServiceDeps) {
    const byModel = new Map<string, EndpointDef[]>();
    for (const [model, eps] of deps.catalog.videoRoute.endpointsByModel) {
      byModel.set(
        model,
        eps.map((e) => {
          this.real.set(`${e.model}|${e.tag}`, e);
          return { ...e, pricing: e.pricing ? { prompt: routePrice(e) ?? '0', completion: '0' } : null };
        }),
      );
    }
    this.route = { models: deps.catalog.videoRoute.models, endpointsByModel: byModel, providers: deps.catalog.videoRoute.providers };
  }

  private now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  private get opts(): VideoConfig {
    return this.deps.options;
  }

  // ---- API ----------------------------------------------------------------------------------------------------

  /** Validates and routes a request, stores the `pending` job and returns its view (the route answers 202). */
  async create(key: KeyRow, body: VideoCreateBody, requestId: string): Promise<VideoJobView> {
    const req = this.normalize(body, requestId);
    const model = this.deps.catalog.route.models.get(body.model) ?? this.deps.catalog.catalog.models.find((m) => m.canonical_slug === body.model);
    if (!model) throw new HttpError(404, `${body.model} is not a valid model ID`, { error_type: 'not_found', excluded_by: ['model_not_found'] });
    const all = this.route.endpointsByModel.get(model.id) ?? [];
    if (all.length === 0) throw badRequest(`${model.id} is not a video generation model; GET /api/v1/videos/models lists them`, { field: 'model' });
    this.checkCapabilities(model, all, req);

    const { prefs, defaultSort, endpointPolicy } = await this.enforcePolicy(key, model, body.provider);
    const routeInput = {
      now: this.now(),
      rng: this.deps.rng ?? Math.random,
      models: [model.id],
      endpointPolicy,
      catalog: this.route,
      hasCredentials: this.deps.catalog.hasCredentials,
      health: this.deps.health.health,
      params: VIDEO_PARAMETERS.filter((p) => body[p] !== undefined),
      provider: prefs,
      defaultSort,
    };
    let plan = planRoute(routeInput);
    // Endpoints that failed recently are tried last; when all did, a job (submitted later, retried) still takes them
    // rather than a 503 as chat answers.
    if (plan.error?.code === 'all_unhealthy') plan = planRoute({ ...routeInput, unhealthyWindowMs: 0 });
    if (plan.error) throw routeError(plan);
    const candidates = plan.attempts.filter((a) => a.endpoint.video && !unsupported(a.endpoint.video, req));
    if (candidates.length === 0) {
      const bad = plan.attempts.map((a) => unsupported(a.endpoint.video!, req)).find(Boolean);
      throw badRequest(`No available endpoint of ${model.id} accepts ${bad ? `${bad[0]} ${bad[1]} (supported: ${bad[2]})` : 'this request'}`, { field: bad?.[0] ?? 'model' });
    }
    req.candidates = candidates.map((a) => ({ model: a.model, tag: a.endpoint.tag }));

    const now = this.now();
    const row: VideoJobRow = {
      id: `job-${randomBytes(12).toString('hex')}`,
      workspace_id: key.workspace_id,
      key_hash: key.hash,
      model: model.id,
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
      content_refs: null,
      seconds: null,
      callback_url: body.callback_url ? checkCallbackUrl(body.callback_url, this.opts.allowLoopbackCallbacks) : null,
      webhook_state: 'none',
      webhook_attempts: 0,
      webhook_next_at: null,
      webhook_last_error: null,
      lease_owner: null,
      lease_until: null,
      next_poll_at: null,
      poll_errors: 0,
      deadline_at: iso(now + this.opts.jobTimeoutMs),
      submitted_at: null,
      finished_at: null,
      created_at: iso(now),
      updated_at: iso(now),
    };
    // Held against the key's spending limit and budgets until the job ends (then its real cost, if any, counts).
    const reserve = videoReserve(candidates.map((a) => this.real.get(`${a.endpoint.model}|${a.endpoint.tag}`) ?? a.endpoint), req);
    if (reserve > 0) row.reserved_cost = reserve;
    // Stored before the answer: a job the caller was told about exists, whatever happens next. With a spending limit,
    // the admission and the insert are one step per key (a burst of jobs cannot all pass the check).
    const insert = () => this.deps.store.insertVideoJob(row);
    if (this.deps.guardrails) await this.deps.guardrails.admitVideo(key, reserve, insert);
    else await insert();
    this.deps.log.info({ job: row.id, model: row.model, candidates: req.candidates.length }, 'video job created');
    this.kick();
    return this.view(row);
  }

  /** A job of the caller's workspace (404 for any other, as for an unknown id). */
  async get(key: KeyRow, id: string): Promise<VideoJobView> {
    return this.view(await this.owned(key, id));
  }

  /** Cancels a job that has not ended (extension; the upstream job, if any, is left to finish unbilled). */
  async cancel(key: KeyRow, id: string): Promise<VideoJobView> {
    for (let i = 0; i < 5; i++) {
      const job = await this.owned(key, id);
      if (isTerminal(job.status)) throw conflict(`Video job ${id} is already ${job.status}`);
      const now = this.now();
      const generationId = job.generation_id ?? newGenerationId();
      const patch: VideoJobPatch = {
        generation_id: generationId,
        finished_at: iso(now),
        error: null,
        next_poll_at: null,
        lease_owner: null,
        lease_until: null,
        ...this.webhookStart(job, now),
      };
      const done: VideoJobRow = { ...job, ...patch, status: 'cancelled' } as VideoJobRow;
      // No owner condition: the caller wins over a worker, whose next conditional update then finds the job moved.
      const cancelled = await this.endJob(job, async () => {
        const ok = await this.deps.store.transitionVideoJob(id, pathTo(job.status, 'cancelled')!, patch, { now: iso(now) });
        if (ok) this.record(done, 'cancelled', 499, 'Cancelled by the caller');
        return ok;
      });
      if (cancelled) {
        this.deps.log.info({ job: id }, 'video job cancelled');
        if (done.webhook_state === 'pending') this.kick();
        return this.view(done);
      }
    }
    throw conflict(`Video job ${id} changed concurrently; retry`);
  }

  /** The bytes of a completed job's video `index`, streamed from the upstream (never its URL or key). */
  async content(key: KeyRow, id: string, index: number, signal?: AbortSignal): Promise<{ body: Readable; length: number | null }> {
    const job = await this.owned(key, id);
    if (job.status !== 'completed') throw badRequest(`Video job ${id} is ${job.status}: its content is available once it is completed`, { field: 'jobId' });
    const refs = job.content_refs ?? [];
    if (index >= refs.length) throw notFound(`Video job ${id} has no video at index ${index} (it has ${refs.length})`);
    const target = this.endpointOf(job);
    if (!target) throw new HttpError(502, 'The provider that generated this video is no longer configured', { error_type: 'provider_unavailable' });
    try {
      const res = await target.adapter.download(this.callContext(target.endpoint, target.provider, signal), refs[index]);
      const len = Number(res.headers['content-length']);
      return { body: res.body, length: Number.isFinite(len) && len >= 0 ? len : null };
    } catch (err) {
      const e = err instanceof UpstreamError ? err : networkError(err, signal);
      throw new HttpError(502, `Provider returned error: ${e.message}`, { error_type: e.type, provider_name: target.provider.name, provider_code: e.providerCode });
    }
  }

  /** GET /videos/models: every model with a video endpoint, its capabilities merged over its endpoints. */
  models(): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const [id, eps] of this.deps.catalog.videoRoute.endpointsByModel) {
      const m = this.deps.catalog.route.models.get(id);
      if (!m || eps.length === 0) continue;
      out.push(videoModelView(m, eps));
    }
    return out.sort((a, b) => (b.created as number) - (a.created as number) || String(a.id).localeCompare(String(b.id)));
  }

  view(job: VideoJobRow): VideoJobView {
    const v: VideoJobView = { id: job.id, polling_url: `${API_PREFIX}/videos/${job.id}`, status: job.status };
    if (job.generation_id) v.generation_id = job.generation_id;
    if (job.status === 'completed') {
      v.unsigned_urls = (job.content_refs ?? []).map((_, i) => `${API_PREFIX}/videos/${job.id}/content?index=${i}`);
      v.usage = { cost: job.cost, is_byok: job.is_byok };
    }
    if (job.status === 'failed' && job.error) v.error = job.error;
    return v;
  }

  private async owned(key: KeyRow, id: string): Promise<VideoJobRow> {
    const job = await this.deps.store.getVideoJob(id);
    if (!job || job.workspace_id !== key.workspace_id) throw notFound(`Video job ${id} not found`);
    return job;
  }

  // ---- creation helpers ---------------------------------------------------------------------------------------

  private normalize(body: VideoCreateBody, requestId: string): VideoJobRequest {
    const prompt = typeof body.prompt === 'string' && body.prompt.trim() !== '' ? body.prompt : null;
    const frames = body.frame_images ?? [];
    const seen = new Set<string>();
    for (const [i, f] of frames.entries()) {
      if (seen.has(f.frame_type)) throw badRequest(`frame_images has two ${f.frame_type} images`, { field: `frame_images[${i}].frame_type` });
      seen.add(f.frame_type);
      checkImageUrl(f.image_url.url, `frame_images[${i}].image_url.url`);
    }
    if (seen.has('last_frame') && !seen.has('first_frame')) throw badRequest('a last_frame image needs a first_frame image', { field: 'frame_images' });
    if (prompt === null && !seen.has('first_frame')) throw badRequest('prompt is required (it may be left out only with a first_frame image)', { field: 'prompt' });
    if (body.creativity !== undefined) throw badRequest('creativity is only supported by video upscaling models', { field: 'creativity' });
    if (body.upscale_factor !== undefined) throw badRequest('upscale_factor is only supported by video upscaling models', { field: 'upscale_factor' });
    const refs: VideoJobRequest['input_references'] = [];
    for (const [i, r] of (body.input_references ?? []).entries()) {
      const url = r.type === 'image_url' ? r.image_url?.url : r.type === 'audio_url' ? r.audio_url?.url : r.type === 'video_url' ? r.video_url?.url : undefined;
      if (typeof url !== 'string') throw badRequest(`input_references[${i}] needs ${r.type}.url`, { field: `input_references[${i}]` });
      if (r.type === 'image_url') checkImageUrl(url, `input_references[${i}].image_url.url`);
      refs.push({ type: r.type, url });
    }
    const options: Record<string, Record<string, unknown>> = {};
    for (const [slug, o] of Object.entries(body.provider?.options ?? {})) {
      if (o !== null && typeof o === 'object' && !Array.isArray(o)) options[slug] = o as Record<string, unknown>;
    }
    if (body.size !== undefined && !describeSize(body.size).resolution && !/^\d+x\d+$/.test(body.size)) throw badRequest('size must look like WIDTHxHEIGHT', { field: 'size' });
    return {
      request_id: requestId,
      prompt,
      duration: body.duration ?? null,
      resolution: body.resolution ?? null,
      aspect_ratio: body.aspect_ratio ?? null,
      size: body.size ?? null,
      frame_images: frames.map((f) => ({ url: f.image_url.url, frame_type: f.frame_type })),
      input_references: refs,
      generate_audio: body.generate_audio ?? null,
      seed: body.seed ?? null,
      provider_options: options,
      candidates: [],
      attempt: null,
      attempts: [],
    };
  }

  /** 400 naming the first requested value no endpoint of the model accepts (capabilities are known without credentials). */
  private checkCapabilities(model: ModelDef, endpoints: EndpointDef[], req: VideoJobRequest): void {
    if (endpoints.some((e) => e.video && !unsupported(e.video, req))) return;
    const merged = videoModelView(model, endpoints.map((e) => this.real.get(`${e.model}|${e.tag}`) ?? e));
    const first = unsupported(endpoints[0].video!, req)!;
    const supported: Record<string, unknown> = {
      duration: merged.supported_durations,
      resolution: merged.supported_resolutions,
      aspect_ratio: merged.supported_aspect_ratios,
      size: merged.supported_sizes,
      frame_images: merged.supported_frame_images,
    };
    const union = supported[first[0]];
    const list = Array.isArray(union) ? union.join(', ') : first[2];
    throw badRequest(`${first[0]} ${first[1]} is not supported by ${model.id} (supported: ${list || 'none'})`, { field: first[0] });
  }

  /** Budgets, the key's limit, the model and provider rules: refuses like chat; returns what routing needs. */
  private async enforcePolicy(key: KeyRow, model: ModelDef, provider: VideoCreateBody['provider']) {
    // `provider.options` are passthrough fields for the upstream, not routing preferences.
    const { options: _options, ...prefs } = provider ?? {};
    let endpointPolicy: ((ep: EndpointDef, p: ProviderDef) => ExclusionReason | undefined) | undefined;
    let defaultSort: ProviderSortBy | null = null;
    const g = this.deps.guardrails;
    if (g) {
      const policy = await g.policyFor(key);
      if (policy.budgets.length > 0) {
        const spent = await g.exhaustedBudget(key, policy);
        if (spent) {
          const r = budgetRefusal(spent.budget, spent.spent);
          throw new HttpError(r.status, r.message, r.metadata);
        }
      }
      if (policy.rules.length > 0) {
        const access = modelAccess(policy, this.route, this.deps.catalog.hasCredentials, model.id);
        if (access.blocked) {
          const r = refusal([{ model: model.id, access }]);
          throw new HttpError(r.status, r.message, r.metadata);
        }
        endpointPolicy = (ep, provider) => endpointVerdict(policy, ep, provider)?.reason;
      }
      defaultSort = (policy.defaultSort as ProviderSortBy | null | undefined) ?? null;
      // The key's own spending limit is checked last, when the job is stored (`admitVideo`).
    }
    const workspace = this.deps.workspaces ? await this.deps.workspaces.cached(key.workspace_id) : null;
    const sort = (workspace?.default_provider_sort as ProviderSortBy | null | undefined) ?? defaultSort;
    return { prefs: Object.keys(prefs).length > 0 ? (prefs as ProviderPreferences) : undefined, defaultSort: sort, endpointPolicy };
  }

  // ---- the worker -----------------------------------------------------------------------------------------------

  /** Starts the worker loop (when this instance drives jobs). */
  start(): void {
    if (!this.opts.worker || this.timer || this.stopped) return;
    this.lastTickAt = this.now();
    this.timer = setInterval(() => this.kick(), this.opts.pollMs);
    this.timer.unref();
    this.renewTimer = setInterval(() => {
      this.deps.store.renewVideoLeases(this.owner, iso(this.now() + this.opts.leaseMs)).catch((err: unknown) => this.deps.log.warn({ err }, 'renewing video job leases failed'));
    }, Math.max(50, Math.floor(this.opts.leaseMs / 3)));
    this.renewTimer.unref();
    this.kick();
  }

  /** Readiness: the loop is alive (a pass started recently) or this instance drives no jobs. */
  healthy(): boolean {
    if (!this.opts.worker || this.stopped) return true;
    return this.now() - this.lastTickAt < Math.max(60_000, 10 * this.opts.pollMs);
  }

  /** Runs a worker pass soon (coalesced with a running one). */
  kick(): void {
    if (!this.opts.worker || this.stopped || !this.timer) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick()
      .catch((err: unknown) => this.deps.log.error({ err }, 'video worker pass failed'))
      .finally(() => {
        this.ticking = null;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  /**
   * Stops the worker: no new pass; the running one gets up to `waitMs` to finish; then (unless `release: false`, which
   * simulates a crash in tests) this instance's leases are released so that another instance takes the jobs over at
   * once — except those of steps still running, which move on when their lease expires. Idempotent.
   */
  stop(opts: { release?: boolean; waitMs?: number } = {}): Promise<void> {
    this.stopped ??= (async () => {
      if (this.timer) clearInterval(this.timer);
      if (this.renewTimer) clearInterval(this.renewTimer);
      this.timer = null;
      this.renewTimer = null;
      if (this.ticking) {
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, opts.waitMs ?? 30_000)));
        await Promise.race([this.ticking, bound]);
        clearTimeout(timer);
      }
      if (opts.release === false) return;
      try {
        if (this.inFlight.size > 0) this.deps.log.warn({ jobs: [...this.inFlight] }, 'stopping while video jobs are being worked on; they resume when their lease expires');
        await this.deps.store.releaseVideoLeases(this.owner, undefined, [...this.inFlight]);
      } catch (err) {
        this.deps.log.warn({ err }, 'releasing video job leases failed');
      }
    })();
    return this.stopped;
  }

  /** One worker pass: claim the jobs with work due and take each one step further. */
  async tick(): Promise<void> {
    const now = this.now();
    this.lastTickAt = now;
    const jobs = await this.deps.store.claimVideoJobs({ owner: this.owner, now: iso(now), leaseUntil: iso(now + this.opts.leaseMs), limit: BATCH });
    await Promise.all(
      jobs.map(async (job) => {
        this.inFlight.add(job.id);
        try {
          await this.step(job);
        } catch (err) {
          this.deps.log.error({ err, job: job.id }, 'video job step failed');
        } finally {
          this.inFlight.delete(job.id);
        }
      }),
    );
    // A full batch: there may be more work due; the next pass starts right away.
    if (jobs.length === BATCH) this.again = true;
  }

  private async step(job: VideoJobRow): Promise<void> {
    const now = this.now();
    const expired = now >= Date.parse(job.deadline_at);
    if (job.status === 'pending') {
      if (expired) return this.finish(job, ['pending', 'in_progress', 'expired'], { generation_id: newGenerationId(), error: this.expiredMessage() }, 524);
      const generationId = newGenerationId();
      const ok = await this.deps.store.transitionVideoJob(job.id, ['pending', 'in_progress'], { generation_id: generationId, next_poll_at: iso(now) }, { owner: this.owner, now: iso(now) });
      if (!ok) return;
      job = { ...job, status: 'in_progress', generation_id: generationId };
    }
    if (job.status === 'in_progress') {
      if (expired) return this.finish(job, ['in_progress', 'expired'], { error: this.expiredMessage() }, 524);
      if (!job.upstream_id) return this.submit(job);
      return this.poll(job);
    }
    if (job.webhook_state === 'pending') return this.deliverWebhook(job);
    await this.deps.store.releaseVideoLeases(this.owner, [job.id]);
  }

  private expiredMessage(): string {
    return `The job did not finish within ${Math.round(this.opts.jobTimeoutMs / 1000)} s`;
  }

  private endpointOf(job: VideoJobRow, index = job.request_body.attempt ?? 0): { endpoint: EndpointDef; provider: ProviderDef; adapter: VideoAdapter } | null {
    const cand = job.request_body.candidates[index];
    if (!cand) return null;
    const endpoint = this.real.get(`${cand.model}|${job.endpoint_tag ?? cand.tag}`);
    const provider = endpoint ? this.deps.catalog.videoRoute.providers.get(endpoint.provider) : undefined;
    if (!endpoint || !provider) return null;
    const protocol = videoProtocolOf(endpoint, provider);
    const adapter = protocol ? videoAdapter(protocol) : undefined;
    return adapter ? { endpoint, provider, adapter } : null;
  }

  private callContext(endpoint: EndpointDef, provider: ProviderDef, signal?: AbortSignal): VideoCallContext {
    return { provider, endpoint, apiKey: this.deps.catalog.apiKey(provider), http: this.http, timeouts: this.deps.catalog.timeouts(provider), signal };
  }

  /** The request for one endpoint: dimensions as its API takes them, passthrough options it allows. */
  private submitRequest(r: VideoJobRequest, endpoint: EndpointDef, provider: ProviderDef): VideoSubmitRequest {
    const caps = endpoint.video!;
    const dims = effectiveDims(r);
    const sizeBased = videoProtocolOf(endpoint, provider) === 'openai-video';
    const allowed = new Set(caps.allowed_passthrough_parameters);
    const options: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r.provider_options[provider.slug] ?? {})) if (allowed.has(k) && v !== null) options[k] = v;
    return {
      prompt: r.prompt,
      duration: r.duration ?? caps.default_duration ?? null,
      resolution: sizeBased ? null : dims.resolution,
      aspect_ratio: sizeBased ? null : dims.aspect_ratio,
      size: sizeBased ? dims.size : null,
      first_frame: r.frame_images.find((f) => f.frame_type === 'first_frame')?.url ?? null,
      last_frame: r.frame_images.find((f) => f.frame_type === 'last_frame')?.url ?? null,
      references: r.input_references.filter((x) => x.type === 'image_url').map((x) => x.url),
      generate_audio: r.generate_audio,
      seed: r.seed,
      options,
    };
  }

  /** Submits the job to its candidate endpoints in order until one accepts it (services/attempts/runner.ts). */
  private async submit(job: VideoJobRow): Promise<void> {
    const r = job.request_body;
    const attempts = [...r.attempts];
    let retryable = true;
    const targets: Array<VideoTarget | UnavailableTarget> = [];
    for (let i = r.attempt ?? 0; i < r.candidates.length; i++) {
      const cand = r.candidates[i];
      const target = this.endpointOf({ ...job, endpoint_tag: null }, i);
      if (!target || !this.deps.catalog.hasCredentials(target.provider)) {
        targets.push({ unavailable: { provider: cand.tag, model: cand.model, status: 503, message: 'Endpoint no longer configured or without credentials' } });
      } else targets.push({ ...target, model: cand.model, index: i });
    }
    const out = await runAttempts<VideoTarget, string, { target: VideoTarget; upstreamId: string }>(
      {
        targets,
        health: this.deps.health,
        now: () => this.now(),
        logSuccess: false,
        attempt: (t) => t.adapter.submit(this.callContext(t.endpoint, t.provider), this.submitRequest(r, t.endpoint, t.provider)),
        served: (target, upstreamId) => ({ result: { target, upstreamId }, cost: null }),
        failed: (e) => {
          // A refused request or refused credentials: another round would be refused alike.
          if (e.status === 400 || e.type === 'authentication') retryable = false;
          return undefined;
        },
      },
      attempts,
    );
    if (out.ok) {
      const { target, upstreamId } = out.result;
      const now = this.now();
      const ok = await this.deps.store.updateVideoJob(
        job.id,
        {
          upstream_id: upstreamId,
          provider: target.provider.slug,
          endpoint_tag: target.endpoint.tag,
          submitted_at: iso(now),
          next_poll_at: iso(now + this.opts.pollMs),
          poll_errors: 0,
          request_body: { ...r, attempt: target.index, attempts },
        },
        { status: 'in_progress', owner: this.owner },
      );
      if (!ok) this.deps.log.warn({ job: job.id, upstream: upstreamId }, 'video job changed while it was submitted (cancelled?); the upstream job is left to finish');
      else this.deps.log.info({ job: job.id, provider: target.provider.slug, upstream: upstreamId }, 'video job submitted');
      return;
    }
    // Every candidate failed. Transient failures: another round later (within the deadline), a couple of times.
    const last = attempts[attempts.length - 1];
    if (retryable && job.poll_errors < SUBMIT_RETRIES) {
      const n = job.poll_errors + 1;
      await this.deps.store.updateVideoJob(
        job.id,
        { poll_errors: n, next_poll_at: iso(this.now() + Math.min(this.opts.pollMs * 2 ** n, MAX_POLL_BACKOFF_MS)), request_body: { ...r, attempt: null, attempts } },
        { status: 'in_progress', owner: this.owner },
      );
      return;
    }
    const message = last?.message ? `Provider returned error: ${last.message}` : 'No endpoint could take the job';
    await this.finish({ ...job, request_body: { ...r, attempts } }, ['in_progress', 'failed'], { error: message, request_body: { ...r, attempts } }, last?.status ?? 502);
  }

  /** Polls the upstream job; moves the job on when it ended. */
  private async poll(job: VideoJobRow): Promise<void> {
    const target = this.endpointOf(job);
    if (!target) return this.finish(job, ['in_progress', 'failed'], { error: 'The endpoint the job was submitted to is no longer configured' }, 502);
    let result;
    try {
      result = await target.adapter.poll(this.callContext(target.endpoint, target.provider), job.upstream_id!);
    } catch (err) {
      const e = err instanceof UpstreamError ? err : networkError(err);
      if (e.providerCode === 404) return this.finish(job, ['in_progress', 'failed'], { error: `The provider no longer knows the job: ${e.message}` }, 502);
      const n = job.poll_errors + 1;
      this.deps.log.warn({ job: job.id, err: e.message, polls_failed: n }, 'polling a video job failed; retrying later');
      await this.deps.store.updateVideoJob(job.id, { poll_errors: n, next_poll_at: iso(this.now() + Math.min(this.opts.pollMs * 2 ** Math.min(n, 10), MAX_POLL_BACKOFF_MS)) }, { status: 'in_progress', owner: this.owner });
      return;
    }
    const now = this.now();
    if (result.state === 'running') {
      await this.deps.store.updateVideoJob(job.id, { poll_errors: 0, next_poll_at: iso(now + this.opts.pollMs) }, { status: 'in_progress', owner: this.owner });
      return;
    }
    if (result.state === 'failed') return this.finish(job, ['in_progress', 'failed'], { error: result.message }, 502);
    const caps = target.endpoint.video!;
    const r = job.request_body;
    const seconds = result.seconds ?? r.duration ?? caps.default_duration ?? null;
    const cost = videoCost(target.endpoint, seconds, effectiveDims(r).resolution ?? caps.default_resolution ?? null);
    await this.finish(job, ['in_progress', 'completed'], { content_refs: result.content, seconds, cost, is_byok: false }, 200);
  }

  /** Ends a job: the terminal transition (held by this worker), the generation record, then the webhook. */
  private async finish(job: VideoJobRow, path: VideoStatus[], patch: VideoJobPatch, httpStatus: number): Promise<void> {
    const status = path[path.length - 1] as TerminalVideoStatus;
    const now = this.now();
    const full: VideoJobPatch = { ...patch, finished_at: iso(now), next_poll_at: null, ...this.webhookStart(job, now) };
    const done = { ...job, ...full, status } as VideoJobRow;
    const ok = await this.endJob(job, async () => {
      const moved = await this.deps.store.transitionVideoJob(job.id, path, full, { owner: this.owner, now: iso(now) });
      if (moved) this.record(done, status, httpStatus, done.error ?? undefined);
      return moved;
    });
    if (!ok) return;
    this.deps.log.info({ job: job.id, status, cost: done.cost }, 'video job ended');
    if (done.webhook_state === 'pending') await this.deliverWebhook(done);
    else await this.deps.store.releaseVideoLeases(this.owner, [job.id]);
  }

  /**
   * Runs `end` — the job's terminal transition, then (when it won) its generation record — as one step against the
   * key's spending-limit admissions when the job holds a reserve: its reservation stops counting exactly as its cost
   * (if any) starts counting as spend not yet written.
   */
  private endJob(job: VideoJobRow, end: () => Promise<boolean>): Promise<boolean> {
    const g = this.deps.guardrails;
    return job.reserved_cost && g ? g.endVideoHold(job.key_hash, end) : end();
  }

  private webhookStart(job: VideoJobRow, now: number): VideoJobPatch {
    return job.callback_url ? { webhook_state: 'pending', webhook_next_at: iso(now), webhook_attempts: 0 } : { webhook_state: 'none' };
  }

  /** The generation record of a job that ended (its usage counts toward the key's limits and budgets). */
  private record(job: VideoJobRow, status: TerminalVideoStatus, httpStatus: number, message?: string): void {
    const now = this.now();
    const r = job.request_body;
    const cand = r.candidates[r.attempt ?? 0];
    const attempts = [...r.attempts];
    if (job.provider && job.upstream_id) attempts.push({ provider: job.provider, model: cand?.model ?? job.model, status: httpStatus, ...(status === 'completed' ? {} : { message }) });
    const row: GenerationRow = {
      id: job.generation_id ?? newGenerationId(),
      request_id: r.request_id,
      key_hash: job.key_hash,
      workspace_id: job.workspace_id,
      api_type: 'video',
      requested_model: job.model,
      model: job.provider ? (cand?.model ?? job.model) : null,
      provider_name: job.provider,
      endpoint_tag: job.endpoint_tag,
      upstream_id: job.upstream_id,
      streamed: false,
      cancelled: status === 'cancelled',
      status: httpStatus,
      finish_reason: status,
      native_finish_reason: null,
      tokens_prompt: 0,
      tokens_completion: 0,
      native_tokens_reasoning: 0,
      native_tokens_cached: 0,
      native_tokens_cache_write: 0,
      total_cost: status === 'completed' ? job.cost : null,
      upstream_inference_cost: status === 'completed' ? job.cost : null,
      is_byok: job.is_byok,
      latency_ms: Math.max(0, Math.round(now - Date.parse(job.created_at))),
      ttft_ms: null,
      generation_time_ms: job.submitted_at ? Math.max(0, Math.round(now - Date.parse(job.submitted_at))) : null,
      attempts,
      error: status === 'completed' ? null : { status: httpStatus, message: message ?? status },
      preset_id: null,
      session_id: null,
      created_at: iso(now),
    };
    this.deps.recorder.record(row);
  }

  // ---- webhooks -------------------------------------------------------------------------------------------------

  /** The webhook body of a job in a terminal state. */
  webhookPayload(job: VideoJobRow): Record<string, unknown> {
    const v = this.view(job);
    const data: Record<string, unknown> = { id: job.id, status: job.status, generation_id: job.generation_id, model: job.model };
    if (v.unsigned_urls) data.unsigned_urls = v.unsigned_urls;
    if (v.usage) data.usage = v.usage;
    if (job.status !== 'completed' && job.error) data.error = job.error;
    return { type: `video.generation.${job.status}`, created_at: job.finished_at ?? job.updated_at, data };
  }

  /** One delivery attempt; on failure the next one is scheduled in the database (exponential backoff). */
  private async deliverWebhook(job: VideoJobRow): Promise<void> {
    const url = job.callback_url;
    if (!url) {
      await this.deps.store.updateVideoJob(job.id, { webhook_state: 'none', lease_owner: null, lease_until: null }, { owner: this.owner });
      return;
    }
    const raw = JSON.stringify(this.webhookPayload(job));
    const t = Math.floor(this.now() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'model-gateway-webhooks/0.1',
      'x-gateway-idempotency-key': `${job.id}-${job.status}`,
    };
    if (this.opts.webhookSecret) headers['x-gateway-signature'] = signWebhook(this.opts.webhookSecret, t, raw);
    let error: string | null = null;
    try {
      const res = await fetch(url, { method: 'POST', headers, body: raw, redirect: 'manual', signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS) });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
    } catch (err) {
      error = (err as Error).message || 'network error';
    }
    const attempts = job.webhook_attempts + 1;
    const release = { lease_owner: null, lease_until: null };
    if (error === null) {
      await this.deps.store.updateVideoJob(job.id, { webhook_state: 'delivered', webhook_attempts: attempts, webhook_next_at: null, webhook_last_error: null, ...release }, { owner: this.owner });
      this.deps.log.info({ job: job.id, attempts }, 'video webhook delivered');
      return;
    }
    const giveUp = attempts >= this.opts.webhookMaxAttempts;
    const delay = Math.min(this.opts.webhookRetryMs * 2 ** (attempts - 1), MAX_WEBHOOK_BACKOFF_MS);
    await this.deps.store.updateVideoJob(
      job.id,
      { webhook_state: giveUp ? 'failed' : 'pending', webhook_attempts: attempts, webhook_next_at: giveUp ? null : iso(this.now() + delay), webhook_last_error: error.slice(0, 500), ...release },
      { owner: this.owner },
    );
    this.deps.log.warn({ job: job.id, attempts, error, retry_in_ms: giveUp ? null : delay }, giveUp ? 'video webhook given up' : 'video webhook failed; will retry');
  }
}

// ---- helpers ----------------------------------------------------------------------------------------------------

function checkImageUrl(url: string, field: string): void {
  if (/^data:image\/[a-z0-9.+-]+;base64,/i.test(url) || /^https:\/\//i.test(url)) return;
  throw badRequest(`${field} must be an https URL or a base64 data URL of an image`, { field });
}

/** USD per second used to order endpoints by price (per-video prices spread over the default duration). */
function routePrice(e: EndpointDef): string | null {
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
function routeError(plan: RoutePlan): HttpError {
  const e = plan.error!;
  const metadata: Record<string, unknown> = { error_type: e.code === 'model_not_found' ? 'not_found' : e.code, excluded_by: e.excluded_by ?? [] };
  const unroutable = plan.considered.filter((c) => c.excluded === 'no_credentials').map((c) => c.provider);
  if (unroutable.length > 0) metadata.providers_without_credentials = [...new Set(unroutable)];
  const headers = e.retry_after_ms ? { 'retry-after': String(Math.ceil(e.retry_after_ms / 1000)) } : undefined;
  return new HttpError(e.status, e.message, metadata, headers);
}

function unionList<T>(lists: Array<T[] | null>): T[] | null {
  if (lists.every((l) => l === null)) return null;
  const out: T[] = [];
  for (const l of lists) for (const x of l ?? []) if (!out.includes(x)) out.push(x);
  return out;
}

function anyFlag(flags: Array<boolean | null>): boolean | null {
  if (flags.some((f) => f === true)) return true;
  if (flags.length > 0 && flags.every((f) => f === false)) return false;
  return null;
}

/** Pricing SKUs of an endpoint: `video_second`, `video_second_<resolution>`, `video` (decimal strings, USD). */
function pricingSkus(e: EndpointDef | undefined): Record<string, string> | null {
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
    id: m.id,
    canonical_slug: m.canonical_slug,
    hugging_face_id: m.hugging_face_id,
    name: m.name,
    created: m.created,
    description: m.description,
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
