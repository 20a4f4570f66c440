/**
 * Webhooks of video jobs (docs/videos.md, "Webhooks"): one POST per terminal state, HMAC-signed when a secret is
 * configured, retried with exponential backoff scheduled in the database (any instance may send the next attempt).
 */
import type { VideoJobRow } from '../store/types.js';
import { MAX_WEBHOOK_BACKOFF_MS, WEBHOOK_TIMEOUT_MS, type VideoJobView, iso, signWebhook } from './video-helpers.js';
import type { VideoJobContext } from './video-worker.js';

/** The webhook body of a job in a terminal state (`view`: the job as the API shows it). */
export function webhookPayload(job: VideoJobRow, view: VideoJobView): Record<string, unknown> {
  const data: Record<string, unknown> = { id: job.id, status: job.status, generation_id: job.generation_id, model: job.model };
  if (view.unsigned_urls) data.unsigned_urls = view.unsigned_urls;
  if (view.usage) data.usage = view.usage;
  if (job.status !== 'completed' && job.error) data.error = job.error;
  return { type: `video.generation.${job.status}`, created_at: job.finished_at ?? job.updated_at, data };
}

/** Sends the webhook once: null when delivered (2xx), else what went wrong. Redirects are not followed. */
async function post(url: string, headers: Record<string, string>, raw: string): Promise<string | null> {
  try {
    const res = await fetch(url, { method: 'POST', headers, body: raw, redirect: 'manual', signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS) });
    await res.arrayBuffer().catch(() => undefined);
    return res.status < 200 || res.status >= 300 ? `HTTP ${res.status}` : null;
  } catch (err) {
    return (err as Error).message || 'network error';
  }
}

/** One delivery attempt; on failure the next one is scheduled in the database (exponential backoff). */
export async function deliverWebhook(w: VideoJobContext, job: VideoJobRow): Promise<void> {
  const url = job.callback_url;
  if (!url) {
    await w.deps.store.updateVideoJob(job.id, { webhook_state: 'none', lease_owner: null, lease_until: null }, { owner: w.owner });
    return;
  }
  const raw = JSON.stringify(webhookPayload(job, w.view(job)));
  const t = Math.floor(w.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'model-gateway-webhooks/0.1',
    'x-gateway-idempotency-key': `${job.id}-${job.status}`,
  };
  if (w.opts.webhookSecret) headers['x-gateway-signature'] = signWebhook(w.opts.webhookSecret, t, raw);
  const error = await post(url, headers, raw);
  const attempts = job.webhook_attempts + 1;
  const release = { lease_owner: null, lease_until: null };
  if (error === null) {
    await w.deps.store.updateVideoJob(job.id, { webhook_state: 'delivered', webhook_attempts: attempts, webhook_next_at: null, webhook_last_error: null, ...release }, { owner: w.owner });
    w.deps.log.info({ job: job.id, attempts }, 'video webhook delivered');
    return;
  }
  const giveUp = attempts >= w.opts.webhookMaxAttempts;
  const delay = Math.min(w.opts.webhookRetryMs * 2 ** (attempts - 1), MAX_WEBHOOK_BACKOFF_MS);
  await w.deps.store.updateVideoJob(
    job.id,
    { webhook_state: giveUp ? 'failed' : 'pending', webhook_attempts: attempts, webhook_next_at: giveUp ? null : iso(w.now() + delay), webhook_last_error: error.slice(0, 500), ...release },
    { owner: w.owner },
  );
  w.deps.log.warn({ job: job.id, attempts, error, retry_in_ms: giveUp ? null : delay }, giveUp ? 'video webhook given up' : 'video webhook failed; will retry');
}
