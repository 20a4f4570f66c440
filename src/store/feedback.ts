/** Feedback on generations (POST /generation/feedback, docs/observability.md): one row per submission. */
import type { Kysely } from 'kysely';

export const FEEDBACK_CATEGORIES = ['latency', 'incoherence', 'incorrect_response', 'formatting', 'billing', 'api_error', 'other'] as const;
export type FeedbackCategory = (typeof FEEDBACK_CATEGORIES)[number];

export interface GenerationFeedbackRow {
  id: string;
  generation_id: string;
  category: FeedbackCategory;
  comment: string | null;
  /** The management key that submitted it. */
  key_hash: string;
  created_at: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

export async function insertFeedback(db: Db, row: GenerationFeedbackRow): Promise<void> {
  await db.insertInto('generation_feedback').values({ ...row }).execute();
}

export async function selectFeedback(db: Db, generationId: string): Promise<GenerationFeedbackRow[]> {
  const rows = await db.selectFrom('generation_feedback').selectAll().where('generation_id', '=', generationId).orderBy('created_at').orderBy('id').execute();
  return rows.map((r) => ({ ...r, created_at: r.created_at instanceof Date ? r.created_at.toISOString() : r.created_at }) as GenerationFeedbackRow);
}
