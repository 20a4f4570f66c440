/**
 * Versioned schema migrations, shared by SQLite and PostgreSQL. Column types differ per dialect
 * (timestamps, JSON, booleans); everything else is one definition. Never edit an applied migration: add a new one.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Migration } from 'kysely';
import type { RollupSource } from '../../core/rollups.js';
import { addRollups, HIST_COLUMNS, ROLLUP_KEY } from '../rollups.js';

export type Dialect = 'sqlite' | 'postgres';

export interface ColumnTypes {
  ts: 'timestamptz' | 'text';
  json: 'jsonb' | 'text';
  bool: 'boolean' | 'integer';
  dbl: 'double precision' | 'real';
}

export function columnTypes(dialect: Dialect): ColumnTypes {
  return dialect === 'postgres'
    ? { ts: 'timestamptz', json: 'jsonb', bool: 'boolean', dbl: 'double precision' }
    : { ts: 'text', json: 'text', bool: 'integer', dbl: 'real' };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

function m0001(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('organizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('members')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('first_name', 'text', (c) => c.notNull())
        .addColumn('last_name', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('workspaces')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('description', 'text')
        .addColumn('default_text_model', 'text')
        .addColumn('default_image_model', 'text')
        .addColumn('default_provider_sort', 'text')
        .addColumn('io_logging_api_key_ids', t.json)
        .addColumn('io_logging_sampling_rate', t.dbl, (c) => c.notNull())
        .addColumn('is_data_discount_logging_enabled', t.bool, (c) => c.notNull())
        .addColumn('is_observability_broadcast_enabled', t.bool, (c) => c.notNull())
        .addColumn('is_observability_io_logging_enabled', t.bool, (c) => c.notNull())
        .addColumn('is_default', t.bool, (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts)
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('hash', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('disabled', t.bool, (c) => c.notNull())
        .addColumn('limit', t.dbl)
        .addColumn('limit_reset', 'text')
        .addColumn('include_byok_in_limit', t.bool, (c) => c.notNull())
        .addColumn('expires_at', t.ts)
        .addColumn('creator_user_id', 'text', (c) => c.references('members.id'))
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts)
        .execute();
      await db.schema.createIndex('api_keys_workspace_idx').on('api_keys').columns(['workspace_id', 'created_at']).execute();

      await db.schema
        .createTable('key_usage_daily')
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('usage', t.dbl, (c) => c.notNull().defaultTo(0))
        .addColumn('byok_usage', t.dbl, (c) => c.notNull().defaultTo(0))
        .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('key_usage_daily_pk', ['key_hash', 'day'])
        .execute();

      await db.schema
        .createTable('presets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('status_updated_at', t.ts)
        .addColumn('designated_version_id', 'text', (c) => c.notNull())
        .addColumn('creator_user_id', 'text', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts, (c) => c.notNull())
        .addUniqueConstraint('presets_workspace_slug_uq', ['workspace_id', 'slug'])
        .execute();

      await db.schema
        .createTable('preset_versions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('preset_id', 'text', (c) => c.notNull().references('presets.id').onDelete('cascade'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('config', t.json, (c) => c.notNull())
        .addColumn('system_prompt', 'text')
        .addColumn('creator_id', 'text', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts, (c) => c.notNull())
        // The guard against two concurrent edits taking the same number.
        .addUniqueConstraint('preset_versions_number_uq', ['preset_id', 'version'])
        .execute();
    },
  };
}

function m0002(t: ColumnTypes): Migration {
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

function m0003(t: ColumnTypes): Migration {
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
function m0004(t: ColumnTypes): Migration {
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
function m0005(): Migration {
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
function m0006(t: ColumnTypes): Migration {
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
function m0007(t: ColumnTypes): Migration {
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

/**
 * Money columns given an exact twin by `spendMoney`: (table, USD float column, its nano-dollar column). Expand, then
 * contract (docs/operations.md): the float columns stay exactly as they were, for the previous release during a
 * rolling update; the current code writes both and reads the nano-dollar column, falling back to the float (converted)
 * where it is null (rows written by the previous release). A later contract migration drops the float columns.
 */
export const MONEY_COLUMNS: Array<[table: string, column: string, nano: string]> = [
  ['key_usage_daily', 'usage', 'usage_nano'],
  ['key_usage_daily', 'byok_usage', 'byok_usage_nano'],
  ['generations', 'total_cost', 'total_cost_nano'],
  ['generations', 'upstream_inference_cost', 'upstream_inference_cost_nano'],
  ['video_jobs', 'cost', 'cost_nano'],
  ['video_jobs', 'reserved_cost', 'reserved_cost_nano'],
];

/**
 * The previous release adds to `key_usage_daily.usage`/`byok_usage` in place (an upsert), not knowing the nano-dollar
 * columns: on a row the current code already wrote, its additions would be missing from them. A trigger adds what an
 * update adds to a float column to its nano-dollar twin when the update leaves the twin alone. The contract migration
 * that drops the float columns drops these triggers first.
 */
async function keyUsageNanoSync(dialect: Dialect, db: Db): Promise<void> {
  const pairs = MONEY_COLUMNS.filter(([table]) => table === 'key_usage_daily');
  if (dialect === 'postgres') {
    const steps = pairs.map(
      ([, c, n]) =>
        `if new.${c} is distinct from old.${c} and new.${n} is not distinct from old.${n} then ` +
        `new.${n} := coalesce(old.${n}, round(old.${c} * 1000000000)::bigint) + round((new.${c} - old.${c}) * 1000000000)::bigint; end if;`,
    );
    await sql
      .raw(`create function key_usage_daily_nano_sync() returns trigger language plpgsql as $$ begin ${steps.join(' ')} return new; end $$`)
      .execute(db);
    await sql`create trigger key_usage_daily_nano_sync before update on key_usage_daily for each row execute function key_usage_daily_nano_sync()`.execute(db);
    return;
  }
  for (const [, c, n] of pairs) {
    await sql
      .raw(
        `create trigger key_usage_daily_${n}_sync after update of ${c} on key_usage_daily for each row ` +
          `when new.${c} is not old.${c} and new.${n} is old.${n} begin ` +
          `update key_usage_daily set ${n} = coalesce(old.${n}, cast(round(old.${c} * 1000000000) as integer)) + cast(round((new.${c} - old.${c}) * 1000000000) as integer) ` +
          `where key_hash = new.key_hash and day = new.day; end`,
      )
      .execute(db);
  }
}

/**
 * Spend (docs/spend.md): money stored exactly, as integer nano-dollars (10⁻⁹ USD) in 64-bit integer columns, so that
 * sums never drift (`0.00047999999999999996`). Each USD float column gets a nullable nano-dollar column beside it,
 * filled from the existing floats (rounded to the nano-dollar); the float columns are left untouched (expand only).
 * Plus the organization's credit ledger (every top-up and adjustment, one row each) and workspace budgets (one row per
 * workspace and interval; `reset_interval` null = lifetime) with the workspace-wide `include_byok_in_budgets`.
 */
function spendMoney(dialect: Dialect, t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      const int = dialect === 'postgres' ? sql`bigint` : sql`integer`;
      for (const [table, column, nano] of MONEY_COLUMNS) {
        await db.schema.alterTable(table).addColumn(nano, dialect === 'postgres' ? 'bigint' : 'integer').execute();
        await sql`update ${sql.table(table)} set ${sql.ref(nano)} = cast(round(${sql.ref(column)} * 1000000000) as ${int}) where ${sql.ref(column)} is not null`.execute(db);
      }
      await keyUsageNanoSync(dialect, db);

      await db.schema
        .createTable('credit_ledger')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('amount_nano', 'bigint', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('top_up', 'adjustment')`))
        .addColumn('note', 'text')
        .addColumn('created_by', 'text')
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('credit_ledger_created_idx').on('credit_ledger').columns(['created_at', 'id']).execute();

      await db.schema
        .createTable('workspace_budgets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
        // 'daily' | 'weekly' | 'monthly' | 'lifetime' (the API shows lifetime as reset_interval null).
        .addColumn('budget_interval', 'text', (c) => c.notNull().check(sql`budget_interval in ('daily', 'weekly', 'monthly', 'lifetime')`))
        .addColumn('limit_nano', 'bigint', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts, (c) => c.notNull())
        .addUniqueConstraint('workspace_budgets_uq', ['workspace_id', 'budget_interval'])
        .execute();
      await db.schema
        .createTable('workspace_budget_settings')
        .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
        .addColumn('include_byok_in_budgets', t.bool, (c) => c.notNull())
        .addColumn('updated_at', t.ts, (c) => c.notNull())
        .execute();
    },
  };
}

/** The organization's model alias map (docs/agents.md, "Model ids"): client model id → catalog id. */
function modelAliases(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema.alterTable('organization_settings').addColumn('model_aliases', t.json).execute();
    },
  };
}

/**
 * Generation records the database refused (docs/chat.md, "Records the database refuses"): a batch that fails is
 * written row by row, and a row that still fails lands here with the database's reason, as JSON text (escaped, so
 * that a NUL or a lone surrogate that made the row fail is storable here), while its usage still counts.
 */
function generationDeadLetters(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('generation_dead_letters')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('generation_id', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('record', 'text', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .execute();
    },
  };
}

/** Secrets the server generates once and shares between instances (the reasoning-signature secret; docs/agents.md). */
function serverSecrets(): Migration {
  return {
    async up(db: Db) {
      await db.schema.createTable('server_secrets').addColumn('name', 'text', (c) => c.primaryKey()).addColumn('value', 'text', (c) => c.notNull()).execute();
    },
  };
}

/**
 * Feedback on generations (POST /generation/feedback, docs/observability.md): one row per submission. Also an index
 * on generations.created_at, for organization-wide time ranges (POST /analytics/query, GET /generations).
 */
function observeGenerationFeedback(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('generation_feedback')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('generation_id', 'text', (c) => c.notNull())
        .addColumn('category', 'text', (c) => c.notNull())
        .addColumn('comment', 'text')
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('generation_feedback_generation_idx').on('generation_feedback').columns(['generation_id', 'created_at']).execute();
      await db.schema.createIndex('generations_created_idx').on('generations').column('created_at').execute();
    },
  };
}

/** Content guardrails (docs/guardrails.md): a guardrail's custom regex filters and builtin filters (JSON, null = none). */
function guardrailContentFilters(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema.alterTable('guardrails').addColumn('content_filters', t.json).execute();
      await db.schema.alterTable('guardrails').addColumn('content_filter_builtins', t.json).execute();
    },
  };
}

/**
 * BYOK credentials (docs/byok.md): a workspace's (or, workspace_id null, every workspace's) own provider keys, sealed
 * with AES-256-GCM (`secret`, services/secrets-crypto.ts); `deleted_at` set and `secret` emptied on deletion.
 */
function byokCredentials(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('byok_credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('workspace_id', 'text')
        .addColumn('name', 'text')
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('disabled', t.bool, (c) => c.notNull())
        .addColumn('is_fallback', t.bool, (c) => c.notNull())
        .addColumn('always_use', t.bool, (c) => c.notNull())
        .addColumn('sort_order', 'integer', (c) => c.notNull())
        .addColumn('allowed_models', t.json)
        .addColumn('allowed_api_key_hashes', t.json)
        .addColumn('allowed_user_ids', t.json)
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts, (c) => c.notNull())
        .addColumn('deleted_at', t.ts)
        .execute();
      await db.schema.createIndex('byok_credentials_workspace_idx').on('byok_credentials').columns(['workspace_id', 'provider', 'sort_order']).execute();
    },
  };
}

/**
 * Files (docs/files.md): workspace-scoped uploads (bytes on local disk or in S3-compatible storage, named by
 * storage_key), and the file-parser plugin's cache of PDF text by content hash. Also generations.pipeline: the
 * content guardrails' and plugins' actions on a request (JSON, null = none).
 */
function files(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('files')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('mime_type', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('storage', 'text', (c) => c.notNull())
        .addColumn('storage_key', 'text', (c) => c.notNull())
        .addColumn('purpose', 'text')
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('files_workspace_idx').on('files').columns(['workspace_id', 'id']).execute();
      await db.schema
        .createTable('file_parses')
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('engine', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('pages', 'integer', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addPrimaryKeyConstraint('file_parses_pk', ['sha256', 'engine'])
        .execute();
      // What content guardrails and plugins did to a request (gateway_metadata.pipeline), kept on its generation.
      await db.schema.alterTable('generations').addColumn('pipeline', t.json).execute();
    },
  };
}

/** I/O logging (docs/observability.md): the logged content of generations, deleted past the retention period. */
function observeIoContent(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('generation_content')
        .addColumn('generation_id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('generation_content_created_idx').on('generation_content').column('created_at').execute();
    },
  };
}

/**
 * Analytics rollups (docs/observability.md): generation records summed per minute, hour and day and per dimension
 * values, with a latency histogram (h0…h47); filled from the existing records here, then as batches are written.
 * And the broadcast destinations (`/observability/destinations`).
 */
function observeRollups(dialect: Dialect, t: ColumnTypes): Migration {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Db) {
      let table = db.schema
        .createTable('generation_rollups')
        .addColumn('grain', 'text', (c) => c.notNull())
        .addColumn('bucket', t.ts, (c) => c.notNull());
      for (const c of ['workspace_id', 'key_hash', 'model', 'provider_name', 'endpoint_tag', 'api_type', 'finish_reason']) table = table.addColumn(c, 'text', (col) => col.notNull());
      table = table.addColumn('status', 'integer', (c) => c.notNull()).addColumn('is_byok', t.bool, (c) => c.notNull()).addColumn('billed', t.bool, (c) => c.notNull());
      for (const c of ['requests', 'tokens_prompt', 'tokens_completion', 'tokens_reasoning', 'cost_nano', 'upstream_cost_nano', 'latency_ms_sum']) table = table.addColumn(c, big, (col) => col.notNull());
      for (const c of HIST_COLUMNS) table = table.addColumn(c, big, (col) => col.notNull());
      await table.execute();
      await db.schema.createIndex('generation_rollups_key').on('generation_rollups').columns(ROLLUP_KEY).unique().execute();
      // Broadcast destinations: their credentials encrypted in `secrets`; soft-deleted; delivery counters.
      await db.schema
        .createTable('observability_destinations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('enabled', t.bool, (c) => c.notNull())
        .addColumn('privacy_mode', t.bool, (c) => c.notNull())
        .addColumn('sampling_rate', t.dbl, (c) => c.notNull())
        .addColumn('api_key_hashes', t.json)
        .addColumn('config', t.json, (c) => c.notNull())
        .addColumn('secrets', 'text')
        .addColumn('created_at', t.ts, (c) => c.notNull())
        .addColumn('updated_at', t.ts, (c) => c.notNull())
        .addColumn('deleted_at', t.ts)
        .addColumn('sent_count', big, (c) => c.notNull().defaultTo(0))
        .addColumn('failed_count', big, (c) => c.notNull().defaultTo(0))
        .addColumn('dropped_count', big, (c) => c.notNull().defaultTo(0))
        .addColumn('last_error', 'text')
        .addColumn('last_error_at', t.ts)
        .addColumn('last_success_at', t.ts)
        .execute();
      await db.schema.createIndex('observability_destinations_ws').on('observability_destinations').columns(['workspace_id', 'created_at']).execute();
      // Backfill from the records already written, in pages by id.
      for (let after = ''; ; ) {
        const rows = await db.selectFrom('generations').selectAll().where('id', '>', after).orderBy('id').limit(5000).execute();
        if (rows.length === 0) break;
        after = rows[rows.length - 1].id as string;
        await addRollups(
          db,
          dialect,
          rows.map((r) => ({
            ...r,
            created_at: r.created_at instanceof Date ? r.created_at.toISOString() : (r.created_at as string),
            is_byok: r.is_byok === true || r.is_byok === 1,
            total_cost: r.total_cost === null ? null : Number(r.total_cost),
            upstream_inference_cost: r.upstream_inference_cost === null ? null : Number(r.upstream_inference_cost),
          })) as RollupSource[],
        );
      }
    },
  };
}

/** Token rate limits (docs/spend.md, "Token rate limits"): a key's tokens per minute (null: none). */
function keyTokenRateLimits(): Migration {
  return {
    async up(db: Db) {
      await db.schema.alterTable('api_keys').addColumn('rate_limit_tokens_per_minute', 'integer').execute();
    },
  };
}

/** All migrations, in order. Names sort lexically in application order. */
export function migrations(dialect: Dialect): Record<string, Migration> {
  const t = columnTypes(dialect);
  return {
    '0001_init': m0001(t),
    '0002_generations': m0002(t),
    '0003_guardrails': m0003(t),
    '0004_videos': m0004(t),
    '0005_key_rate_limits': m0005(),
    '0006_video_reservations': m0006(t),
    '0007_workspace_members': m0007(t),
    '0008_spend_exact_money_credits_budgets': spendMoney(dialect, t),
    '0009_generation_dead_letters': generationDeadLetters(t),
    '0010_model_aliases': modelAliases(t),
    '0011_server_secrets': serverSecrets(),
    '0012_observe_generation_feedback': observeGenerationFeedback(t),
    '0013_guardrail_content_filters': guardrailContentFilters(t),
    '0014_key_token_rate_limits': keyTokenRateLimits(),
    '0015_observe_io_content': observeIoContent(t),
    '0016_observe_rollups_destinations': observeRollups(dialect, t),
    '0017_byok_credentials': byokCredentials(t),
    '0018_files_and_generation_pipeline': files(t),
  };
}
