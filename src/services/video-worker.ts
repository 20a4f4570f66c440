/**
 * The worker of video jobs (docs/videos.md; the states in src/core/video-states.ts, the leases and durability in
 * services/videos.ts): the loop that claims jobs and takes each one step further. The steps live one per file —
 * video-submit.ts (through the attempt runner), video-poll.ts, video-settle.ts (the end of a job: transition, record,
 * spend), video-webhooks.ts — and use the worker through `VideoJobContext`.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { EndpointDef, ProviderDef } from '../core/catalog-types.js';
import { type RouteCatalog } from '../core/routing.js';
import { type TerminalVideoStatus, type VideoStatus } from '../core/video-states.js';
import { videoAdapter, VideoHttp, type VideoAdapter, type VideoCallContext } from '../providers/registry.js';
import type { VideoJobPatch, VideoJobRow } from '../store/types.js';
import type { VideoConfig } from '../config.js';
import { videoProtocolOf } from './catalog.js';
import { newGenerationId } from './generation-id.js';
import { API_PREFIX, BATCH, type VideoJobView, type VideoServiceDeps, iso, routePrice } from './video-helpers.js';
import { pollJob } from './video-poll.js';
import { endJob, finishJob, videoGenerationRow, webhookStart } from './video-settle.js';
import { submitJob } from './video-submit.js';
import { deliverWebhook, webhookPayload } from './video-webhooks.js';

/** One endpoint of a job: its catalog entry, provider and protocol adapter. */
export interface VideoEndpoint {
  endpoint: EndpointDef;
  provider: ProviderDef;
  adapter: VideoAdapter;
}

/** What the steps of a job (video-submit, video-poll, video-settle, video-webhooks) use of the worker. */
export interface VideoJobContext {
  readonly deps: VideoServiceDeps;
  readonly owner: string;
  readonly opts: VideoConfig;
  now(): number;
  view(job: VideoJobRow): VideoJobView;
  endpointOf(job: VideoJobRow, index?: number): VideoEndpoint | null;
  callContext(endpoint: EndpointDef, provider: ProviderDef, signal?: AbortSignal): VideoCallContext;
  finish(job: VideoJobRow, path: VideoStatus[], patch: VideoJobPatch, httpStatus: number): Promise<void>;
  record(job: VideoJobRow, status: TerminalVideoStatus, httpStatus: number, message?: string): void;
  deliverWebhook(job: VideoJobRow): Promise<void>;
}

/**
 * The worker side of video jobs: the loop that claims jobs, submits, polls and ends them, and sends their webhooks
 * (VideoService adds the API on top).
 */
export abstract class VideoWorker implements VideoJobContext {
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

  constructor(readonly deps: VideoServiceDeps) {
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

  now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  get opts(): VideoConfig {
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

  endpointOf(job: VideoJobRow, index = job.request_body.attempt ?? 0): VideoEndpoint | null {
    const cand = job.request_body.candidates[index];
    if (!cand) return null;
    const endpoint = this.real.get(`${cand.model}|${job.endpoint_tag ?? cand.tag}`);
    const provider = endpoint ? this.deps.catalog.videoRoute.providers.get(endpoint.provider) : undefined;
    if (!endpoint || !provider) return null;
    const protocol = videoProtocolOf(endpoint, provider);
    const adapter = protocol ? videoAdapter(protocol) : undefined;
    return adapter ? { endpoint, provider, adapter } : null;
  }

  callContext(endpoint: EndpointDef, provider: ProviderDef, signal?: AbortSignal): VideoCallContext {
    return { provider, endpoint, apiKey: this.deps.catalog.apiKey(provider), http: this.http, timeouts: this.deps.catalog.timeouts(provider), signal };
  }

  // ---- the steps of a job (one file each) ---------------------------------------------------------------------

  /** Submits the job to its candidate endpoints in order until one accepts it (video-submit.ts). */
  protected submit(job: VideoJobRow): Promise<void> {
    return submitJob(this, job);
  }

  /** Polls the upstream job; moves the job on when it ended (video-poll.ts). */
  protected poll(job: VideoJobRow): Promise<void> {
    return pollJob(this, job);
  }

  /** Ends a job: the terminal transition (held by this worker), the generation record, then the webhook (video-settle.ts). */
  finish(job: VideoJobRow, path: VideoStatus[], patch: VideoJobPatch, httpStatus: number): Promise<void> {
    return finishJob(this, job, path, patch, httpStatus);
  }

  /** The terminal transition `end`, then the spend settlement of the job's reserve (video-settle.ts). */
  protected endJob(job: VideoJobRow, end: () => Promise<boolean>, cost: number | null): Promise<boolean> {
    return endJob(this, job, end, cost);
  }

  protected webhookStart(job: VideoJobRow, now: number): VideoJobPatch {
    return webhookStart(job, now);
  }

  /** The generation record of a job that ended (its usage counts toward the key's limits and budgets). */
  record(job: VideoJobRow, status: TerminalVideoStatus, httpStatus: number, message?: string): void {
    this.deps.recorder.record(videoGenerationRow(job, status, httpStatus, this.now(), message));
  }

  /** The webhook body of a job in a terminal state. */
  webhookPayload(job: VideoJobRow): Record<string, unknown> {
    return webhookPayload(job, this.view(job));
  }

  /** One delivery attempt of the job's webhook (video-webhooks.ts). */
  deliverWebhook(job: VideoJobRow): Promise<void> {
    return deliverWebhook(this, job);
  }
}
