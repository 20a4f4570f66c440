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
import type { Readable } from 'node:stream';
import type { EndpointDef, ModelDef, ProviderDef } from '../core/catalog-types.js';
import { endpointVerdict, modelAccess } from '../core/policy.js';
import { budgetRefusal, refusal } from '../core/policy-refusals.js';
import type { ProviderPreferences, ProviderSortBy } from '../core/provider-prefs.js';
import { planRoute, type ByokRouting, type ExclusionReason } from '../core/routing.js';
import { isTerminal, pathTo } from '../core/video-states.js';
import { VIDEO_PARAMETERS } from '../core/catalog-types.js';
import { badRequest, conflict, HttpError, notFound } from '../core/errors.js';
import { UpstreamError } from '../core/provider-errors.js';
import { networkError } from '../providers/http.js';
import type { KeyRow, VideoJobPatch, VideoJobRequest, VideoJobRow } from '../store/types.js';
import { newGenerationId } from './generation-id.js';
import { VideoWorker } from './video-worker.js';
import { type VideoCreateBody, type VideoJobView, checkCallbackUrl, checkImageUrl, describeSize, iso, newVideoJob, routeError, unsupported, videoModelView, videoReserve } from './video-helpers.js';

export * from './video-helpers.js';

export class VideoService extends VideoWorker {
  // ---- API ----------------------------------------------------------------------------------------------------

  /** Validates and routes a request, stores the `pending` job and returns its view (the route answers 202). */
  async create(key: KeyRow, body: VideoCreateBody, requestId: string): Promise<VideoJobView> {
    const req = this.normalize(body, requestId);
    const model = this.deps.catalog.route.models.get(body.model) ?? this.deps.catalog.catalog.models.find((m) => m.canonical_slug === body.model);
    if (!model) throw new HttpError(404, `${body.model} is not a valid model ID`, { error_type: 'not_found', excluded_by: ['model_not_found'] });
    const all = this.route.endpointsByModel.get(model.id) ?? [];
    if (all.length === 0) throw badRequest(`${model.id} is not a video generation model; GET /api/v1/videos/models lists them`, { field: 'model' });
    this.checkCapabilities(model, all, req);

    const byok = this.deps.byok?.routing(key);
    const { prefs, defaultSort, endpointPolicy } = await this.enforcePolicy(key, model, body.provider, byok);
    const routeInput = {
      now: this.now(),
      rng: this.deps.rng ?? Math.random,
      models: [model.id],
      endpointPolicy,
      catalog: this.route,
      hasCredentials: this.deps.catalog.hasCredentials,
      // The key's BYOK credentials, in chat's order: prioritized ones → the operator's key → fallback ones (docs/byok.md).
      byok,
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
    req.candidates = candidates.map((a) => ({ model: a.model, tag: a.endpoint.tag, ...(a.byok ? { byok: a.byok.id } : {}) }));

    const now = this.now();
    const callbackUrl = body.callback_url ? checkCallbackUrl(body.callback_url, this.opts.allowLoopbackCallbacks) : null;
    const row = newVideoJob(key, model.id, req, callbackUrl, now, now + this.opts.jobTimeoutMs);
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
      }, done.cost ?? null);
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
    // On the credential that generated the video (docs/byok.md): deleted or disabled since, nothing can fetch it.
    const upstreamKey = await this.keyFor(target.provider, job.byok_credential_id);
    if ('problem' in upstreamKey) throw new HttpError(502, `${upstreamKey.problem}: the videos of job ${id} can no longer be downloaded`, { error_type: 'provider_unavailable', provider_name: target.provider.name, is_byok: true });
    try {
      const res = await target.adapter.download(this.callContext(target, upstreamKey.apiKey, signal), refs[index]);
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
  private async enforcePolicy(key: KeyRow, model: ModelDef, provider: VideoCreateBody['provider'], byok: ByokRouting | undefined) {
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
        const shared = this.deps.catalog.hasCredentials;
        const reachable = byok ? (p: ProviderDef) => shared(p) || byok.credentials(p, model.id).length > 0 : shared;
        const access = modelAccess(policy, this.route, reachable, model.id);
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

}
