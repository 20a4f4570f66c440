/**
 * Submission of a video job (docs/videos.md, "Workers"): the job's candidate endpoints are tried in order through the
 * attempt runner (services/attempts/runner.ts) until one accepts it; transient failures leave the job for another
 * round later, a refusal fails it.
 */
import type { EndpointDef, ProviderDef } from '../core/catalog-types.js';
import type { VideoSubmitRequest } from '../providers/registry.js';
import type { VideoJobRequest, VideoJobRow } from '../store/types.js';
import { videoProtocolOf } from './catalog.js';
import { runAttempts, type UnavailableTarget } from './attempts/runner.js';
import { MAX_POLL_BACKOFF_MS, SUBMIT_RETRIES, type VideoTarget, effectiveDims, iso } from './video-helpers.js';
import type { VideoJobContext } from './video-worker.js';

/** The request for one endpoint: dimensions as its API takes them, passthrough options it allows. */
export function submitRequest(r: VideoJobRequest, endpoint: EndpointDef, provider: ProviderDef): VideoSubmitRequest {
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

/**
 * The job's remaining candidates as attempt targets. Endpoints no longer configured, and those without a key, are
 * unavailable. The key each goes with is looked up only when its attempt starts (`withKey`).
 */
function submitTargets(w: VideoJobContext, job: VideoJobRow): Array<VideoTarget | UnavailableTarget> {
  const r = job.request_body;
  const targets: Array<VideoTarget | UnavailableTarget> = [];
  for (let i = r.attempt ?? 0; i < r.candidates.length; i++) {
    const cand = r.candidates[i];
    const target = w.endpointOf({ ...job, endpoint_tag: null }, i);
    if (!target || (!cand.byok && !w.deps.catalog.hasCredentials(target.provider))) {
      targets.push(unavailable(cand, 'Endpoint no longer configured or without credentials'));
      continue;
    }
    targets.push({ ...target, model: cand.model, index: i, apiKey: null, ...(cand.byok ? { byokId: cand.byok } : {}) });
  }
  return targets;
}

const unavailable = (cand: VideoJobRequest['candidates'][number], message: string): UnavailableTarget => ({ unavailable: { provider: cand.tag, model: cand.model, status: 503, message } });

/**
 * A target with the key it goes with, read when its attempt starts: its BYOK credential's secret (one deleted, disabled
 * or unreadable since the job was created makes it unavailable), else the operator's key.
 */
async function withKey(w: VideoJobContext, job: VideoJobRow, t: VideoTarget): Promise<VideoTarget | UnavailableTarget> {
  const key = await w.keyFor(t.provider, t.byokId);
  if ('problem' in key) return unavailable(job.request_body.candidates[t.index], key.problem);
  return { ...t, apiKey: key.apiKey };
}

/** Submits the job to its candidate endpoints in order until one accepts it (services/attempts/runner.ts). */
export async function submitJob(w: VideoJobContext, job: VideoJobRow): Promise<void> {
  const r = job.request_body;
  const attempts = [...r.attempts];
  let retryable = true;
  const out = await runAttempts<VideoTarget, string, { target: VideoTarget; upstreamId: string }>(
    {
      targets: submitTargets(w, job),
      resolve: (t) => withKey(w, job, t),
      health: w.deps.health,
      now: () => w.now(),
      logSuccess: false,
      attempt: (t) => t.adapter.submit(w.callContext(t, t.apiKey), submitRequest(r, t.endpoint, t.provider)),
      served: (target, upstreamId) => ({ result: { target, upstreamId }, cost: null }),
      failed: (e) => {
        // A refused request or refused credentials: another round would be refused alike.
        if (e.status === 400 || e.type === 'authentication') retryable = false;
        return undefined;
      },
    },
    attempts,
  );
  if (out.ok) return submitted(w, job, out.result.target, out.result.upstreamId, attempts);
  // Every candidate failed. Transient failures: another round later (within the deadline), a couple of times.
  const last = attempts[attempts.length - 1];
  if (retryable && job.poll_errors < SUBMIT_RETRIES) {
    const n = job.poll_errors + 1;
    await w.deps.store.updateVideoJob(
      job.id,
      { poll_errors: n, next_poll_at: iso(w.now() + Math.min(w.opts.pollMs * 2 ** n, MAX_POLL_BACKOFF_MS)), request_body: { ...r, attempt: null, attempts } },
      { status: 'in_progress', owner: w.owner },
    );
    return;
  }
  const message = last?.message ? `Provider returned error: ${last.message}` : 'No endpoint could take the job';
  await w.finish({ ...job, request_body: { ...r, attempts } }, ['in_progress', 'failed'], { error: message, request_body: { ...r, attempts } }, last?.status ?? 502);
}

/** Records the upstream job an endpoint accepted (unless the job moved meanwhile: cancelled). */
async function submitted(w: VideoJobContext, job: VideoJobRow, target: VideoTarget, upstreamId: string, attempts: VideoJobRequest['attempts']): Promise<void> {
  const now = w.now();
  const ok = await w.deps.store.updateVideoJob(
    job.id,
    {
      upstream_id: upstreamId,
      provider: target.provider.slug,
      endpoint_tag: target.endpoint.tag,
      // The credential that submitted it: the job's polls and downloads go on it too (never its secret).
      byok_credential_id: target.byokId ?? null,
      is_byok: target.byokId !== undefined,
      submitted_at: iso(now),
      next_poll_at: iso(now + w.opts.pollMs),
      poll_errors: 0,
      request_body: { ...job.request_body, attempt: target.index, attempts },
    },
    { status: 'in_progress', owner: w.owner },
  );
  if (!ok) w.deps.log.warn({ job: job.id, upstream: upstreamId }, 'video job changed while it was submitted (cancelled?); the upstream job is left to finish');
  else w.deps.log.info({ job: job.id, provider: target.provider.slug, upstream: upstreamId, byok: target.byokId ?? null }, 'video job submitted');
}
