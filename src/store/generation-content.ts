/**
 * Logged request content (I/O logging, docs/observability.md): one row per logged generation, its content as JSON
 * text, written with the generation records' batches and deleted past the retention period.
 */
import type { Kysely } from 'kysely';

export interface GenerationContentRow {
  generation_id: string;
  workspace_id: string;
  key_hash: string;
  created_at: string;
  /** JSON of core/io-log.ts GenerationContent. */
  content: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

export async function insertContent(db: Db, rows: GenerationContentRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 50) {
    await db
      .insertInto('generation_content')
      .values(rows.slice(i, i + 50).map((r) => ({ ...r })))
      .onConflict((oc) => oc.column('generation_id').doNothing())
      .execute();
  }
}

export async function selectContent(db: Db, id: string): Promise<GenerationContentRow | null> {
  const r = await db.selectFrom('generation_content').selectAll().where('generation_id', '=', id).executeTakeFirst();
  if (!r) return null;
  return { ...r, created_at: r.created_at instanceof Date ? r.created_at.toISOString() : r.created_at } as GenerationContentRow;
}

/** Which of these generations have logged content. */
export async function selectContentIds(db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('generation_content').select('generation_id').where('generation_id', 'in', ids).execute();
  return new Set(rows.map((r) => r.generation_id as string));
}

/** Deletes content created before `before` (ISO), at most `limit` rows per call; returns how many. */
export async function deleteContentBefore(db: Db, before: string, limit: number): Promise<number> {
  const ids = await db.selectFrom('generation_content').select('generation_id').where('created_at', '<', before).limit(limit).execute();
  if (ids.length === 0) return 0;
  const res = await db
    .deleteFrom('generation_content')
    .where(
      'generation_id',
      'in',
      ids.map((r) => r.generation_id as string),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
