/**
 * The organization's activity (GET /activity): served generations of the last 30 completed UTC days, summed per day,
 * model and endpoint (and workspace), narrowed to one day, key, member's keys or workspace.
 */
import { badRequest } from '../core/errors.js';
import type { RouteCatalog } from '../core/routing.js';
import type { ActivityRow, Store } from '../store/types.js';
import type { WorkspaceService } from './workspaces.js';

const DAY_MS = 24 * 3600_000;
export const ACTIVITY_WINDOW_DAYS = 30;

export interface ActivityQuery {
  /** One UTC day (YYYY-MM-DD) of the window. */
  date?: string;
  api_key_hash?: string;
  /** The keys this member created. */
  user_id?: string;
  /** Workspace id or slug. */
  workspace_id?: string;
  group_by?: 'workspace';
}

/** A row as the hosted API reports it: the model's permaslug, the endpoint tag as `endpoint_id`, the provider's name. */
export type ActivityItem = Omit<ActivityRow, 'endpoint_tag'> & { model_permaslug: string; endpoint_id: string };

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The UTC days [from, to) of the query: the whole window, or the one `date` in it (a 400 naming `date` otherwise). */
export function activityWindow(date: string | undefined, now: number): { from: number; to: number } {
  const to = Math.floor(now / DAY_MS) * DAY_MS;
  const from = to - ACTIVITY_WINDOW_DAYS * DAY_MS;
  if (date === undefined) return { from, to };
  const day = Date.parse(`${date}T00:00:00.000Z`);
  if (!Number.isFinite(day) || new Date(day).toISOString().slice(0, 10) !== date || day < from || day >= to) {
    throw badRequest(`date must be one of the last ${ACTIVITY_WINDOW_DAYS} completed UTC days (YYYY-MM-DD), from ${iso(from)} to ${iso(to - DAY_MS)}`, { field: 'date' });
  }
  return { from: day, to: day + DAY_MS };
}

export class ActivityService {
  constructor(
    private readonly deps: { store: Store; workspaces: WorkspaceService; catalog: () => RouteCatalog; now: () => number },
  ) {}

  /** The key hashes the query narrows to (null = every key); a 400 naming `user_id` for an unknown member. */
  private async keyHashes(q: ActivityQuery): Promise<string[] | null> {
    const given = q.api_key_hash ? [q.api_key_hash] : null;
    if (q.user_id === undefined) return given;
    const { store } = this.deps;
    if (!(await store.getMember(q.user_id))) throw badRequest(`user_id ${q.user_id} is not a member of the organization`, { field: 'user_id' });
    const theirs = await store.listKeyHashes({ creator_user_id: q.user_id });
    return given ? given.filter((h) => theirs.includes(h)) : theirs;
  }

  async report(q: ActivityQuery): Promise<ActivityItem[]> {
    const { from, to } = activityWindow(q.date, this.deps.now());
    const keyHashes = await this.keyHashes(q);
    const workspaceId = q.workspace_id !== undefined ? (await this.deps.workspaces.get(q.workspace_id)).id : null;
    const rows = await this.deps.store.activity({
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      keyHashes,
      workspaceId,
      byWorkspace: q.group_by === 'workspace',
    });
    const { models, providers } = this.deps.catalog();
    return rows.map(({ endpoint_tag, provider_name, ...r }) => ({
      ...r,
      model_permaslug: models.get(r.model)?.canonical_slug ?? r.model,
      endpoint_id: endpoint_tag,
      provider_name: providers.get(provider_name)?.name ?? provider_name,
    }));
  }
}
