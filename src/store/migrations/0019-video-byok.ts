/** Migration 0019: the BYOK credential a video job was submitted with. Never edit an applied migration: add a new one. */
import type { Migration } from 'kysely';
import type { Db } from './types.js';

/**
 * Video jobs on BYOK credentials (docs/videos.md, docs/byok.md): `byok_credential_id` is the id of the credential that
 * submitted the job (null: the operator's key), so that its polls and downloads go on that same credential. Only the
 * id: the secret stays sealed in `byok_credentials`.
 */
export function videoByok(): Migration {
  return {
    async up(db: Db) {
      await db.schema.alterTable('video_jobs').addColumn('byok_credential_id', 'text').execute();
    },
  };
}
