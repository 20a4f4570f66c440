/**
 * Polling a submitted video job (docs/videos.md, "Workers"): the upstream job's state moves the job on — still
 * running (next poll), failed, or completed with its content references and cost. Transient poll errors back off; an
 * upstream 404 fails the job.
 */
import { UpstreamError } from '../core/provider-errors.js';
import { networkError } from '../providers/http.js';
import type { VideoJobRow } from '../store/types.js';
import { MAX_POLL_BACKOFF_MS, effectiveDims, iso, videoCost } from './video-helpers.js';
import type { VideoJobContext } from './video-worker.js';

/** Polls the upstream job; moves the job on when it ended. */
export async function pollJob(w: VideoJobContext, job: VideoJobRow): Promise<void> {
  const target = w.endpointOf(job);
  if (!target) return w.finish(job, ['in_progress', 'failed'], { error: 'The endpoint the job was submitted to is no longer configured' }, 502);
  let result;
  try {
    result = await target.adapter.poll(w.callContext(target.endpoint, target.provider), job.upstream_id!);
  } catch (err) {
    const e = err instanceof UpstreamError ? err : networkError(err);
    if (e.providerCode === 404) return w.finish(job, ['in_progress', 'failed'], { error: `The provider no longer knows the job: ${e.message}` }, 502);
    const n = job.poll_errors + 1;
    w.deps.log.warn({ job: job.id, err: e.message, polls_failed: n }, 'polling a video job failed; retrying later');
    await w.deps.store.updateVideoJob(job.id, { poll_errors: n, next_poll_at: iso(w.now() + Math.min(w.opts.pollMs * 2 ** Math.min(n, 10), MAX_POLL_BACKOFF_MS)) }, { status: 'in_progress', owner: w.owner });
    return;
  }
  const now = w.now();
  if (result.state === 'running') {
    await w.deps.store.updateVideoJob(job.id, { poll_errors: 0, next_poll_at: iso(now + w.opts.pollMs) }, { status: 'in_progress', owner: w.owner });
    return;
  }
  if (result.state === 'failed') return w.finish(job, ['in_progress', 'failed'], { error: result.message }, 502);
  const caps = target.endpoint.video!;
  const r = job.request_body;
  const seconds = result.seconds ?? r.duration ?? caps.default_duration ?? null;
  const cost = videoCost(target.endpoint, seconds, effectiveDims(r).resolution ?? caps.default_resolution ?? null);
  await w.finish(job, ['in_progress', 'completed'], { content_refs: result.content, seconds, cost, is_byok: false }, 200);
}
