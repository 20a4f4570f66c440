/** Migrations 0015-0018: Logged content, analytics rollups and destinations, BYOK credentials, files. Never edit an applied migration: add a new one. */
import type { Migration } from 'kysely';
import type { RollupSource } from '../../core/rollups.js';
import { addRollups, HIST_COLUMNS, ROLLUP_KEY } from '../rollups.js';
import type { ColumnTypes, Db, Dialect } from './types.js';

/** I/O logging (docs/observability.md): the logged content of generations, deleted past the retention period. */
export function observeIoContent(t: ColumnTypes): Migration {
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
export function observeRollups(dialect: Dialect, t: ColumnTypes): Migration {
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

/**
 * BYOK credentials (docs/byok.md): a workspace's (or, workspace_id null, every workspace's) own provider keys, sealed
 * with AES-256-GCM (`secret`, services/secrets-crypto.ts); `deleted_at` set and `secret` emptied on deletion.
 */
export function byokCredentials(t: ColumnTypes): Migration {
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
export function files(t: ColumnTypes): Migration {
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
