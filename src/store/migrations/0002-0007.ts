/** Migrations 0002-0007: Generations, guardrails, video jobs, key rate limits, video reservations, workspace members. Never edit an applied migration: add a new one. */
import { randomUUID } from 'node:crypto';
import { sql, type Migration } from 'kysely';
import type { ColumnTypes, Db } from './types.js';

export function m0002(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('generations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('api_type', 'text', (c) => c.notNull())
        .addColumn('requested_model', 'text')
        .addColumn('model', 'text')
        .addColumn('provider_name', 'text')
        .addColumn('endpoint_tag', 'text')
        .addColumn('upstream_id', 'text')
        .addColumn('streamed', t.bool, (c) => c.notNull())
        .addColumn('cancelled', t.bool, (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('finish_reason', 'text')
        .addColumn('native_finish_reason', 'text')
        .addColumn('tokens_prompt', 'integer', (c) => c.notNull())
        .addColumn('tokens_completion', 'integer', (c) => c.notNull())
        .addColumn('native_tokens_reasoning', 'integer', (c) => c.notNull())
        .addColumn('native_tokens_cached', 'integer', (c) => c.notNull())
        .addColumn('native_tokens_cache_write', 'integer', (c) => c.notNull())
        .addColumn('total_cost', t.dbl)
        .addColumn('upstream_inference_cost', t.dbl)
        .addColumn('is_byok', t.bool, (c) => c.notNull())
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('ttft_ms', 'integer')
        .addColumn('generation_time_ms', 'integer')
        .addColumn('attempts', t.json, (c) => c.notNull())
        .addColumn('error', t.json)
        .addColumn('preset_id', 'text')
        .addColumn('session_id', 'text')
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('generations_key_idx').on('generations').columns(['key_hash', 'created_at']).execute();
      await db.schema.createIndex('generations_workspace_idx').on('generations').columns(['workspace_id', 'created_at']).execute();
    },
  };
}

export function m0003(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('organization_settings')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('allowed_providers', t.json)
        .addColumn('ignored_providers', t.json)
        .addColumn('allowed_models', t.json)
        .addColumn('ignored_models', t.json)
        .addColumn('default_provider_sort', 'text')
        .addColumn('data_collection', 'text', (c) => c.notNull())
        .addColumn('enforce_zdr', t.bool, (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts)
        .execute();

      await db.schema
        .createTable('guardrails')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('workspace_id', 'text', (c) => c.references('workspaces.id'))
        .addColumn('is_workspace_default', t.bool, (c) => c.notNull())
        .addColumn('limit_usd', t.dbl)
        .addColumn('reset_interval', 'text')
        .addColumn('include_byok_in_budgets', t.bool, (c) => c.notNull())
        .addColumn('allowed_models', t.json)
        .addColumn('ignored_models', t.json)
        .addColumn('allowed_providers', t.json)
        .addColumn('ignored_providers', t.json)
        .addColumn('enforce_zdr_anthropic', t.bool, (c) => c.notNull())
        .addColumn('enforce_zdr_openai', t.bool, (c) => c.notNull())
        .addColumn('enforce_zdr_google', t.bool, (c) => c.notNull())
        .addColumn('enforce_zdr_xai', t.bool, (c) => c.notNull())
        .addColumn('enforce_zdr_other', t.bool, (c) => c.notNull())
        .addColumn('enable_free_model_publication', t.bool)
        .addColumn('enable_free_model_training', t.bool)
        .addColumn('enable_paid_model_training', t.bool)
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts)
        .execute();
      await db.schema.createIndex('guardrails_workspace_idx').on('guardrails').columns(['workspace_id', 'created_at']).execute();

      // A key or a member holds at most one guardrail: the unique columns enforce it (NULLs do not collide).
      await db.schema
        .createTable('guardrail_assignments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('guardrail_id', 'text', (c) => c.notNull().references('guardrails.id').onDelete('cascade'))
        .addColumn('key_hash', 'text', (c) => c.unique())
        .addColumn('user_id', 'text', (c) => c.unique())
        .addColumn('assigned_by', 'text')
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('guardrail_assignments_guardrail_idx').on('guardrail_assignments').columns(['guardrail_id', 'created_at']).execute();
    },
  };
}

/**
 * Video generation jobs (docs/videos.md). Status changes are conditional UPDATEs (`where status = <from>`), guarded by
 * the transition table in src/core/video-states.ts; the check constraint keeps unknown statuses out. A worker holds a
 * job through `lease_owner`/`lease_until`.
 */
export function m0004(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('video_jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('provider', 'text')
        .addColumn('endpoint_tag', 'text')
        .addColumn('upstream_id', 'text')
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'in_progress', 'completed', 'failed', 'cancelled', 'expired')`))
        .addColumn('request_body', t.json, (c) => c.notNull())
        // A JSON-encoded string in a text column on both databases (the store encodes `error` as JSON everywhere).
        .addColumn('error', 'text')
        .addColumn('generation_id', 'text')
        .addColumn('cost', t.dbl)
        .addColumn('is_byok', t.bool, (c) => c.notNull())
        .addColumn('content_refs', t.json)
        .addColumn('seconds', t.dbl)
        .addColumn('callback_url', 'text')
        .addColumn('webhook_state', 'text', (c) => c.notNull())
        .addColumn('webhook_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('webhook_next_at', t.ts)
        .addColumn('webhook_last_error', 'text')
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', t.ts)
        .addColumn('next_poll_at', t.ts)
        .addColumn('poll_errors', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('deadline_at', t.ts, (c) => c.notNull())
        .addColumn('submitted_at', t.ts)
        .addColumn('finished_at', t.ts)
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts, (c) => c.notNull())
        .execute();
      // The worker's two scans: active jobs due for a look, terminal jobs with a webhook due.
      await db.schema.createIndex('video_jobs_due_idx').on('video_jobs').columns(['status', 'next_poll_at']).execute();
      await db.schema.createIndex('video_jobs_webhook_idx').on('video_jobs').columns(['webhook_state', 'webhook_next_at']).execute();
      await db.schema.createIndex('video_jobs_workspace_idx').on('video_jobs').columns(['workspace_id', 'created_at']).execute();
    },
  };
}

/** Per-key rate limits (docs/api.md, "Rate limits"): both null = none. */
export function m0005(): Migration {
  return {
    async up(db: Db) {
      await db.schema.alterTable('api_keys').addColumn('rate_limit_requests', 'integer').execute();
      await db.schema.alterTable('api_keys').addColumn('rate_limit_interval_s', 'integer').execute();
    },
  };
}

/**
 * Video jobs hold their largest possible cost against the key's spending limit while they run (docs/videos.md,
 * "Spending limits"): `reserved_cost` (USD; null: no known price), summed per key over unfinished jobs.
 */
export function m0006(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema.alterTable('video_jobs').addColumn('reserved_cost', t.dbl).execute();
      await db.schema.createIndex('video_jobs_key_status_idx').on('video_jobs').columns(['key_hash', 'status']).execute();
    },
  };
}

/**
 * Workspace membership (docs/api.md, "Workspace members"): which organization members belong to a workspace other
 * than the default one (every member belongs to that one). Existing workspaces get their creator as an admin member.
 */
export function m0007(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('workspace_members')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('members.id').onDelete('cascade'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addUniqueConstraint('workspace_members_uq', ['workspace_id', 'user_id'])
        .execute();
      await db.schema.createIndex('workspace_members_user_idx').on('workspace_members').column('user_id').execute();
      const rows = await db
        .selectFrom('workspaces')
        .innerJoin('members', 'members.id', 'workspaces.created_by')
        .select(['workspaces.id as workspace_id', 'members.id as user_id', 'workspaces.created_at as created_at'])
        .where('workspaces.is_default', '=', t.bool === 'boolean' ? (false as never) : (0 as never))
        .execute();
      for (const r of rows) {
        await db.insertInto('workspace_members').values({ id: randomUUID(), workspace_id: r.workspace_id, user_id: r.user_id, role: 'admin', created_at: r.created_at }).execute();
      }
    },
  };
}
