/** Migrations 0001: The first schema: organization, members, workspaces, API keys, key usage, presets. Never edit an applied migration: add a new one. */
import type { Migration } from 'kysely';
import type { ColumnTypes, Db } from './types.js';

export function m0001(t: ColumnTypes): Migration {
  return {
    async up(db: Db) {
      await createOrgTables(db, t);
      await createKeyTables(db, t);
      await createPresetTables(db, t);
    },
  };
}

/** The organization, its members and workspaces. */
async function createOrgTables(db: Db, t: ColumnTypes): Promise<void> {
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
}

/** API keys and their daily usage. */
async function createKeyTables(db: Db, t: ColumnTypes): Promise<void> {
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
}

/** Presets and their numbered versions. */
async function createPresetTables(db: Db, t: ColumnTypes): Promise<void> {
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
}
