/** Migrations 0009-0014: Dead letters, model aliases, server secrets, feedback, content filters, token rate limits. Never edit an applied migration: add a new one. */
import type { Migration } from 'kysely';
import type { ColumnTypes, Db } from './types.js';

/**
 * Generation records the database refused (docs/chat.md, "Records the database refuses"): a batch that fails is
 * written row by row, and a row that still fails lands here with the database's reason, as JSON text (escaped, so
 * that a NUL or a lone surrogate that made the row fail is storable here), while its usage still counts.
 */
export function generationDeadLetters(t: ColumnTypes): Migration {
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

/** The organization's model alias map (docs/agents.md, "Model ids"): client model id → catalog id. */
export function modelAliases(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema.alterTable('organization_settings').addColumn('model_aliases', t.json).execute();
    },
  };
}

/** Secrets the server generates once and shares between instances (the reasoning-signature secret; docs/agents.md). */
export function serverSecrets(): Migration {
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
export function observeGenerationFeedback(t: ColumnTypes): Migration {
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
export function guardrailContentFilters(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await db.schema.alterTable('guardrails').addColumn('content_filters', t.json).execute();
      await db.schema.alterTable('guardrails').addColumn('content_filter_builtins', t.json).execute();
    },
  };
}

/** Token rate limits (docs/spend.md, "Token rate limits"): a key's tokens per minute (null: none). */
export function keyTokenRateLimits(): Migration {
  return {
    async up(db: Db) {
      await db.schema.alterTable('api_keys').addColumn('rate_limit_tokens_per_minute', 'integer').execute();
    },
  };
}
