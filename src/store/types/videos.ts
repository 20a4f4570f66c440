/** Video generation jobs (store/sql/videos.ts; docs/videos.md). */

import type { VideoStatus } from '../../core/video-states.js';

/** Delivery state of a job's terminal-state webhook. */
export type VideoWebhookState = 'none' | 'pending' | 'delivered' | 'failed';

/** Where the upstream keeps one generated video (never shown to callers: the gateway proxies the bytes). */
export type VideoContentRef = { kind: 'openai-video'; video_id: string } | { kind: 'google-veo'; uri: string };

/** The request as accepted (validated and normalized), kept with the job: the worker submits from it. */
export interface VideoJobRequest {
  /** Id of the HTTP request that created the job (for the generation record). */
  request_id: string;
  prompt: string | null;
  duration: number | null;
  resolution: string | null;
  aspect_ratio: string | null;
  size: string | null;
  frame_images: Array<{ url: string; frame_type: 'first_frame' | 'last_frame' }>;
  input_references: Array<{ type: string; url: string }>;
  generate_audio: boolean | null;
  seed: number | null;
  /** `provider.options` as sent (filtered per endpoint at submission). */
  provider_options: Record<string, Record<string, unknown>>;
  /**
   * Endpoints to try, in order (the routing plan made at creation, BYOK credentials first as for chat): `model`,
   * endpoint `tag`, and `byok`, the id of the BYOK credential the attempt runs on (absent: the operator's key).
   */
  candidates: Array<{ model: string; tag: string; byok?: string }>;
  /** Index into `candidates` of the endpoint the job was submitted to (null before submission). */
  attempt: number | null;
  /** Failed submissions so far: provider, model, status, message. */
  attempts: Array<{ provider: string; model: string; status: number; message?: string }>;
}

export interface VideoJobRow {
  id: string;
  workspace_id: string;
  key_hash: string;
  /** The model the caller asked for. */
  model: string;
  /** Provider slug and endpoint tag the job was submitted to (null before submission). */
  provider: string | null;
  endpoint_tag: string | null;
  /** The upstream job: OpenAI video id or Google operation name. */
  upstream_id: string | null;
  status: VideoStatus;
  request_body: VideoJobRequest;
  /** Failure reason (status `failed`, and `expired`). */
  error: string | null;
  generation_id: string | null;
  /** USD, once completed (null when the endpoint's price is unknown). */
  cost: number | null;
  /**
   * USD held against the key's spending limit and budgets while the job is unfinished: the most any of its endpoints
   * would bill for the requested duration (null: no known price).
   */
  reserved_cost: number | null;
  /** Submitted on a BYOK credential (then `byok_credential_id` names it). */
  is_byok: boolean;
  /**
   * The BYOK credential that submitted the job (null: the operator's key): its polls and downloads go on that same
   * credential; deleted or disabled while the job runs, the job fails. Never the secret.
   */
  byok_credential_id: string | null;
  /** Upstream references of the generated videos, once completed. */
  content_refs: VideoContentRef[] | null;
  /** Seconds of video billed. */
  seconds: number | null;
  callback_url: string | null;
  webhook_state: VideoWebhookState;
  webhook_attempts: number;
  webhook_next_at: string | null;
  webhook_last_error: string | null;
  /** The worker instance driving the job, until `lease_until`. */
  lease_owner: string | null;
  lease_until: string | null;
  /** When the worker next looks at the job (submission, upstream poll). */
  next_poll_at: string | null;
  /** Consecutive failed upstream polls (backoff). */
  poll_errors: number;
  /** A job not finished by then expires. */
  deadline_at: string;
  submitted_at: string | null;
  finished_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Fields a transition or an update may change (`status` only through `transitionVideoJob`). */
export type VideoJobPatch = Partial<Omit<VideoJobRow, 'id' | 'workspace_id' | 'key_hash' | 'model' | 'status' | 'created_at'>>;

/** Video generation jobs (docs/videos.md). */
export interface VideoStore {
  insertVideoJob(row: VideoJobRow): Promise<void>;
  getVideoJob(id: string): Promise<VideoJobRow | null>;
  /**
   * Moves a job along `path` (e.g. `['in_progress', 'completed']`, or `['pending', 'in_progress', 'cancelled']`): one
   * conditional UPDATE per step (`where id = ? and status = <step's from>`, plus `lease_owner = owner` when given), all
   * in one transaction, `patch` applied with the last step. Every step must be an allowed transition (else
   * IllegalTransitionError, before any SQL). False, with nothing changed, when the job is not in `path[0]` (or not held
   * by `owner`): another actor moved it first.
   */
  transitionVideoJob(id: string, path: VideoStatus[], patch: VideoJobPatch, opts?: { owner?: string; now?: string }): Promise<boolean>;
  /** Changes fields other than `status`, only while the job is in `when.status` (and held by `when.owner`). */
  updateVideoJob(id: string, patch: VideoJobPatch, when: { status?: VideoStatus | VideoStatus[]; owner?: string }): Promise<boolean>;
  /**
   * Claims up to `limit` jobs with work due at `now` (active jobs whose `next_poll_at` has come, terminal jobs with a
   * webhook due) that no other owner holds: each is a conditional UPDATE setting `lease_owner = owner` and
   * `lease_until`, winning only when the job is free, already the caller's, or its lease expired. Returns the claimed
   * rows.
   */
  claimVideoJobs(q: { owner: string; now: string; leaseUntil: string; limit: number }): Promise<VideoJobRow[]>;
  /** Extends the leases `owner` holds on jobs that still have work; returns how many. */
  renewVideoLeases(owner: string, leaseUntil: string): Promise<number>;
  /** Gives up the leases `owner` holds (all, or those of `ids`; never those of `except`). */
  releaseVideoLeases(owner: string, ids?: string[], except?: string[]): Promise<number>;
  /** USD the unfinished (`pending`, `in_progress`) video jobs of these keys hold (`reserved_cost`), per key. */
  videoReservations(hashes: string[]): Promise<Map<string, number>>;
}
