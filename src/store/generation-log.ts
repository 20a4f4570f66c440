/**
 * The request log (GET /generations, docs/observability.md): generation records filtered and paged newest first by a
 * keyset cursor on (created_at, id), served by the (key_hash, created_at) and (workspace_id, created_at) indexes.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';

/** Cost as the API shows it: a record without a price (failed, cancelled or unpriced) counts as 0. */
const COST = sql<number>`coalesce(total_cost, 0)`;

/** Filters of one page of the request log; every field optional except the page size. */
export interface GenerationLogQuery {
  /** Only these keys' records (null: any key). An empty list matches nothing. */
  keyHashes: string[] | null;
  workspaceId?: string;
  /** ISO timestamps: created_at in [from, to). */
  from?: string;
  to?: string;
  model?: string;
  provider?: string;
  apiType?: string;
  status?: number;
  finishReason?: string;
  sessionId?: string;
  minCost?: number;
  maxCost?: number;
  minLatencyMs?: number;
  maxLatencyMs?: number;
  /** Records strictly older than this position (the previous page's last record). */
  after?: { created_at: string; id: string };
  limit: number;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Q = SelectQueryBuilder<any, 'generations', any>;

function filtered(q: Q, f: GenerationLogQuery): Q {
  if (f.keyHashes) q = q.where('key_hash', 'in', f.keyHashes);
  if (f.workspaceId !== undefined) q = q.where('workspace_id', '=', f.workspaceId);
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('created_at', '<', f.to);
  if (f.model !== undefined) q = q.where((eb) => eb.or([eb('model', '=', f.model!), eb('requested_model', '=', f.model!)]));
  if (f.provider !== undefined) q = q.where('provider_name', '=', f.provider);
  if (f.apiType !== undefined) q = q.where('api_type', '=', f.apiType);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.finishReason !== undefined) q = q.where('finish_reason', '=', f.finishReason);
  if (f.sessionId !== undefined) q = q.where('session_id', '=', f.sessionId);
  if (f.minCost !== undefined) q = q.where(COST, '>=', f.minCost);
  if (f.maxCost !== undefined) q = q.where(COST, '<=', f.maxCost);
  if (f.minLatencyMs !== undefined) q = q.where('latency_ms', '>=', f.minLatencyMs);
  if (f.maxLatencyMs !== undefined) q = q.where('latency_ms', '<=', f.maxLatencyMs);
  if (f.after) {
    const a = f.after;
    q = q.where((eb) => eb.or([eb('created_at', '<', a.created_at), eb.and([eb('created_at', '=', a.created_at), eb('id', '<', a.id)])]));
  }
  return q;
}

/** Raw rows of one page, newest first (the caller decodes them). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function selectGenerationPage(db: Kysely<any>, f: GenerationLogQuery): Promise<Record<string, unknown>[]> {
  if (f.keyHashes && f.keyHashes.length === 0) return [];
  return filtered(db.selectFrom('generations').selectAll(), f).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
}
