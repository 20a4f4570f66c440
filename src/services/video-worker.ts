/**
 * The worker of video jobs (docs/videos.md; the states in src/core/video-states.ts, the leases and durability in
 * services/videos.ts): claims jobs, submits them upstream through the attempt runner, polls them, ends them and sends
 * their webhooks.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { EndpointDef, ProviderDef } from '../core/catalog-types.js';
import { type RouteCatalog } from '../core/routing.js';
import { type TerminalVideoStatus, type VideoStatus } from '../core/video-states.js';
import { UpstreamError } from '../core/provider-errors.js';
import { networkError } from '../providers/http.js';
import { videoAdapter, VideoHttp, type VideoAdapter, type VideoCallContext, type VideoSubmitRequest } from '../providers/registry.js';
import type { GenerationRow, VideoJobPatch, VideoJobRequest, VideoJobRow } from '../store/types.js';
import type { VideoConfig } from '../config.js';
import { videoProtocolOf } from './catalog.js';
import { newGenerationId } from './generation-id.js';
import { runAttempts, type UnavailableTarget } from './attempts/runner.js';
import { API_PREFIX, BATCH, MAX_POLL_BACKOFF_MS, MAX_WEBHOOK_BACKOFF_MS, SUBMIT_RETRIES, type VideoJobView, type VideoServiceDeps, type VideoTarget, WEBHOOK_TIMEOUT_MS, effectiveDims, iso, routePrice, signWebhook, videoCost } from './video-helpers.js';

/**
 * The worker side of video jobs: the loop that claims jobs, submits, polls and ends them, and sends their webhooks
 * (VideoService adds the API on top).
 */
export abstract class VideoWorker {
  /** This instance's identity in `lease_owner`. */
  readonly owner = `${hostname().slice(0, 40)}/${process.pid}/${randomBytes(6).toString('hex')}`;
  readonly http = new VideoHttp();
  /** The video route with prices projected for planRoute (USD per second in `prompt`), and the real endpoints. */
  protected readonly route: RouteCatalog;
  protected readonly real = new Map<string, EndpointDef>();
  protected timer: NodeJS.Timeout | null = null;
  protected renewTimer: NodeJS.Timeout | null = null;
  protected ticking: Promise<void> | null = null;
  protected again = false;
  protected stopped: Promise<void> | null = null;
  protected lastTickAt = 0;
  /** Jobs a step is working on right now (their leases are not released at a stop that cannot wait for them). */
  protected readonly inFlight = new Set<string>();

  constructor(protected readonly deps: VideoServiceDeps) {
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

  protected now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  protected get opts(): VideoConfig {
    return this.deps.options;
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

  protected async step(job: VideoJobRow): Promise<void> {
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

  protected expiredMessage(): string {
    return `The job did not finish within ${Math.round(this.opts.jobTimeoutMs / 1000)} s`;
  }

  protected endpointOf(job: VideoJobRow, index = job.request_body.attempt ?? 0): { endpoint: EndpointDef; provider: ProviderDef; adapter: VideoAdapter } | null {
    const cand = job.request_body.candidates[index];
    if (!cand) return null;
    const endpoint = this.real.get(`${cand.model}|${job.endpoint_tag ?? cand.tag}`);
    const provider = endpoint ? this.deps.catalog.videoRoute.providers.get(endpoint.provider) : undefined;
    if (!endpoint || !provider) return null;
    const protocol = videoProtocolOf(endpoint, provider);
    const adapter = protocol ? videoAdapter(protocol) : undefined;
    return adapter ? { endpoint, provider, adapter } : null;
  }

  protected callContext(endpoint: EndpointDef, provider: ProviderDef, signal?: AbortSignal): VideoCallContext {
    return { provider, endpoint, apiKey: this.deps.catalog.apiKey(provider), http: this.http, timeouts: this.deps.catalog.timeouts(provider), signal };
  }

  /** The request for one endpoint: dimensions as its API takes them, passthrough options it allows. */
  protected submitRequest(r: VideoJobRequest, endpoint: EndpointDef, provider: ProviderDef): VideoSubmitRequest {
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
  protected async submit(job: VideoJobRow): Promise<void> {
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
  protected async poll(job: VideoJobRow): Promise<void> {
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
  protected async finish(job: VideoJobRow, path: VideoStatus[], patch: VideoJobPatch, httpStatus: number): Promise<void> {
    const status = path[path.length - 1] as TerminalVideoStatus;
    const now = this.now();
    const full: VideoJobPatch = { ...patch, finished_at: iso(now), next_poll_at: null, ...this.webhookStart(job, now) };
    const done = { ...job, ...full, status } as VideoJobRow;
    const ok = await this.endJob(job, async () => {
      const moved = await this.deps.store.transitionVideoJob(job.id, path, full, { owner: this.owner, now: iso(now) });
      if (moved) this.record(done, status, httpStatus, done.error ?? undefined);
      return moved;
    }, done.cost ?? null);
    if (!ok) return;
    this.deps.log.info({ job: job.id, status, cost: done.cost }, 'video job ended');
    if (done.webhook_state === 'pending') await this.deliverWebhook(done);
    else await this.deps.store.releaseVideoLeases(this.owner, [job.id]);
  }

  /**
   * Runs `end` — the job's terminal transition, then (when it won) its generation record — and, when it won and the
   * job held a reserve, replaces what its admission charged against the key's limits by its real cost (`cost`).
   */
  protected async endJob(job: VideoJobRow, end: () => Promise<boolean>, cost: number | null): Promise<boolean> {
    const ok = await end();
    const g = this.deps.guardrails;
    if (ok && job.reserved_cost && g) await g.videoEnded(job.key_hash, job.reserved_cost, cost).catch((err: unknown) => this.deps.log.warn({ err, job: job.id }, 'video spend settlement failed'));
    return ok;
  }

  protected webhookStart(job: VideoJobRow, now: number): VideoJobPatch {
    return job.callback_url ? { webhook_state: 'pending', webhook_next_at: iso(now), webhook_attempts: 0 } : { webhook_state: 'none' };
  }

  /** The generation record of a job that ended (its usage counts toward the key's limits and budgets). */
  protected record(job: VideoJobRow, status: TerminalVideoStatus, httpStatus: number, message?: string): void {
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
  protected async deliverWebhook(job: VideoJobRow): Promise<void> {
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
