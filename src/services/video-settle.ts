/**
 * Ending a video job (docs/videos.md): the terminal transition (held by the worker, or the caller's cancel), its
 * generation record, the correction of what its admission charged against the key's limits to its real cost, then
 * its webhook.
 */
import { type TerminalVideoStatus, type VideoStatus } from '../core/video-states.js';
import type { GenerationRow, VideoJobPatch, VideoJobRow } from '../store/types.js';
import { newGenerationId } from './generation-id.js';
import { iso } from './video-helpers.js';
import type { VideoJobContext } from './video-worker.js';

/** Ends a job: the terminal transition (held by this worker), the generation record, then the webhook. */
export async function finishJob(w: VideoJobContext, job: VideoJobRow, path: VideoStatus[], patch: VideoJobPatch, httpStatus: number): Promise<void> {
  const status = path[path.length - 1] as TerminalVideoStatus;
  const now = w.now();
  const full: VideoJobPatch = { ...patch, finished_at: iso(now), next_poll_at: null, ...webhookStart(job, now) };
  const done = { ...job, ...full, status } as VideoJobRow;
  const ok = await endJob(w, job, async () => {
    const moved = await w.deps.store.transitionVideoJob(job.id, path, full, { owner: w.owner, now: iso(now) });
    if (moved) w.record(done, status, httpStatus, done.error ?? undefined);
    return moved;
  }, done.cost ?? null);
  if (!ok) return;
  w.deps.log.info({ job: job.id, status, cost: done.cost }, 'video job ended');
  if (done.webhook_state === 'pending') await w.deliverWebhook(done);
  else await w.deps.store.releaseVideoLeases(w.owner, [job.id]);
}

/**
 * Runs `end` — the job's terminal transition, then (when it won) its generation record — and, when it won and the
 * job held a reserve, replaces what its admission charged against the key's limits by its real cost (`cost`).
 */
export async function endJob(w: Pick<VideoJobContext, 'deps'>, job: VideoJobRow, end: () => Promise<boolean>, cost: number | null): Promise<boolean> {
  const ok = await end();
  const g = w.deps.guardrails;
  if (ok && job.reserved_cost && g) await g.videoEnded(job.key_hash, job.reserved_cost, cost).catch((err: unknown) => w.deps.log.warn({ err, job: job.id }, 'video spend settlement failed'));
  return ok;
}

/** The webhook fields of a job entering a terminal state: pending delivery when it has a callback URL. */
export function webhookStart(job: VideoJobRow, now: number): VideoJobPatch {
  return job.callback_url ? { webhook_state: 'pending', webhook_attempts: 0, webhook_next_at: iso(now) } : { webhook_state: 'none' };
}

/** The generation record of a job that ended at `now` (its usage counts toward the key's limits and budgets). */
export function videoGenerationRow(job: VideoJobRow, status: TerminalVideoStatus, httpStatus: number, now: number, message?: string): GenerationRow {
  const r = job.request_body;
  const cand = r.candidates[r.attempt ?? 0];
  const attempts = [...r.attempts];
  if (job.provider && job.upstream_id) attempts.push({ provider: job.provider, model: cand?.model ?? job.model, status: httpStatus, ...(status === 'completed' ? {} : { message }) });
  return {
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
}
