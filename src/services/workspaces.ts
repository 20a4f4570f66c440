/** Workspaces: the unit that owns keys, presets and routing defaults. */
import { randomUUID } from 'node:crypto';
import { badRequest, conflict, forbidden, notFound } from '../core/errors.js';
import { nameUuid, workspaceGuardrailId } from '../core/guardrail-ids.js';
import { ConflictError, type MemberRow, type Page, type Store, type WorkspaceMemberRow, type WorkspaceRow } from '../store/types.js';
import type { InvalidationBus } from './invalidation.js';
import { FreshCache } from './fresh-cache.js';

export interface WorkspaceInput {
  name: string;
  slug: string;
  description?: string | null;
  default_text_model?: string | null;
  default_image_model?: string | null;
  default_provider_sort?: string | null;
  io_logging_api_key_ids?: number[] | null;
  io_logging_sampling_rate?: number;
  is_data_discount_logging_enabled?: boolean;
  is_observability_broadcast_enabled?: boolean;
  is_observability_io_logging_enabled?: boolean;
}

const WORKSPACE_FIELDS: Array<keyof WorkspaceInput> = [
  'name',
  'slug',
  'description',
  'default_text_model',
  'default_image_model',
  'default_provider_sort',
  'io_logging_api_key_ids',
  'io_logging_sampling_rate',
  'is_data_discount_logging_enabled',
  'is_observability_broadcast_enabled',
  'is_observability_io_logging_enabled',
];

/** A workspace row with the documented defaults for omitted fields. */
export function newWorkspace(input: WorkspaceInput, createdBy: string, now: string, isDefault = false): WorkspaceRow {
  return {
    id: randomUUID(),
    name: input.name,
    slug: input.slug,
    description: input.description ?? null,
    default_text_model: input.default_text_model ?? null,
    default_image_model: input.default_image_model ?? null,
    default_provider_sort: input.default_provider_sort ?? null,
    io_logging_api_key_ids: input.io_logging_api_key_ids ?? null,
    io_logging_sampling_rate: input.io_logging_sampling_rate ?? 1,
    is_data_discount_logging_enabled: input.is_data_discount_logging_enabled ?? true,
    is_observability_broadcast_enabled: input.is_observability_broadcast_enabled ?? false,
    is_observability_io_logging_enabled: input.is_observability_io_logging_enabled ?? false,
    is_default: isDefault,
    created_by: createdBy,
    created_at: now,
    updated_at: null,
  };
}

/** A member's membership of a workspace, with the role they hold in the organization unless `role` is given. */
function membership(workspaceId: string, m: MemberRow, now: string, role?: WorkspaceMemberRow['role']): WorkspaceMemberRow {
  return { id: randomUUID(), workspace_id: workspaceId, user_id: m.id, role: role ?? (m.role === 'org:admin' ? 'admin' : 'member'), created_at: now };
}

const IMPLICIT_MEMBERSHIP_NAMESPACE = Buffer.from('3b8e0d5a2c6f4a71b9e4d0c2a5f78e16', 'hex');

/** The stable id of a member's implicit membership of the default workspace (never stored: derived on every read). */
function implicitMembershipId(workspaceId: string, userId: string): string {
  return nameUuid(IMPLICIT_MEMBERSHIP_NAMESPACE, `${workspaceId}|${userId}`);
}

export function workspaceView(row: WorkspaceRow) {
  const { is_default: _hidden, ...rest } = row;
  // Every workspace has a default guardrail covering all its traffic; its id is derived from the workspace id.
  return { ...rest, default_guardrail_id: workspaceGuardrailId(row.id) };
}

/** A store conflict as a 409 (presets, members, guardrails). */
async function mapConflict<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof ConflictError) throw conflict(err.message);
    throw err;
  }
}

/**
 * A store conflict on a workspace operation as a 400 (naming `field` when given): the workspace operations of the
 * spec and its reference list no 409 (POST /workspaces: 400, 401, 403, 500), so SDK clients expect a 400 for a taken
 * slug or a workspace that still has active keys.
 */
async function mapWorkspaceConflict<T>(p: Promise<T>, field?: string): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof ConflictError) throw field ? badRequest(err.message.includes(field) ? err.message : `${field}: ${err.message}`, { field }) : badRequest(err.message);
    throw err;
  }
}

export class WorkspaceService {
  private readonly cache: FreshCache<WorkspaceRow | null>;

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
    private readonly bus?: InvalidationBus,
    ttlMs = 30_000,
  ) {
    this.cache = new FreshCache({ ttlMs, now, bus, kinds: ['workspace'] });
  }

  /** A workspace by id when cached and fresh (no await; undefined: ask `cached`). */
  peek(id: string): WorkspaceRow | null | undefined {
    return this.cache.peek(id);
  }

  /** A workspace by id from memory (hot path); read from the store at most once per TTL or after a change. */
  async cached(id: string): Promise<WorkspaceRow | null> {
    return this.cache.get(id, () => this.store.getWorkspace(id));
  }

  async create(input: WorkspaceInput, createdBy: string): Promise<WorkspaceRow> {
    const now = new Date(this.now()).toISOString();
    const row = newWorkspace(input, createdBy, now);
    // Its creator (a member of the organization, when a member's key made it) is its first member, as an admin (as
    // migration 0007 made the creators of earlier workspaces; docs/api.md).
    const creator = await this.store.getMember(createdBy);
    const members = creator ? [membership(row.id, creator, now, 'admin')] : [];
    await mapWorkspaceConflict(this.store.insertWorkspace(row, members), 'slug');
    return row;
  }

  // ---- members (docs/api.md, "Workspace members") ----------------------------------------------------------------

  /** A workspace's members: explicit ones; for the default workspace, every organization member (implicitly). */
  async members(idOrSlug: string, offset: number, limit: number): Promise<Page<WorkspaceMemberRow>> {
    const ws = await this.get(idOrSlug);
    if (!ws.is_default) return this.store.listWorkspaceMembers(ws.id, offset, limit);
    const page = await this.store.listMembers(offset, limit);
    return { rows: page.rows.map((m) => ({ ...membership(ws.id, m, m.created_at), id: implicitMembershipId(ws.id, m.id) })), total: page.total };
  }

  /** Adds organization members (each must exist: 400 naming it); those already in are skipped. Returns those added. */
  async addMembers(idOrSlug: string, userIds: string[]): Promise<WorkspaceMemberRow[]> {
    const ws = await this.get(idOrSlug);
    if (ws.is_default) throw badRequest('Every organization member belongs to the default workspace', { field: 'id' });
    const now = new Date(this.now()).toISOString();
    const rows: WorkspaceMemberRow[] = [];
    for (const [i, id] of userIds.entries()) {
      const m = await this.store.getMember(id);
      if (!m) throw badRequest(`user_ids[${i}]: ${id} is not a member of the organization`, { field: `user_ids[${i}]` });
      rows.push(membership(ws.id, m, now));
    }
    return this.store.addWorkspaceMembers(rows);
  }

  /** Removes members (refused, 400, for one who owns an active key in the workspace); returns how many were in it. */
  async removeMembers(idOrSlug: string, userIds: string[]): Promise<number> {
    const ws = await this.get(idOrSlug);
    if (ws.is_default) throw badRequest('Members cannot be removed from the default workspace: every organization member belongs to it', { field: 'id' });
    return mapWorkspaceConflict(this.store.removeWorkspaceMembers(ws.id, userIds), 'user_ids');
  }

  /**
   * Whether a member may own keys in the workspace: organization admins anywhere; other members in the default
   * workspace and in the workspaces they belong to.
   */
  async mayOwnKeysIn(ws: WorkspaceRow, member: MemberRow): Promise<boolean> {
    return ws.is_default || member.role === 'org:admin' || this.store.isWorkspaceMember(ws.id, member.id);
  }

  /**
   * The owner of a key created in `ws`: the member named by `creatorUserId` (a 400 naming `creator_user_id` when no
   * such member exists, or when they may not own keys there), else the caller's own member id, else null.
   */
  async keyOwner(ws: WorkspaceRow, creatorUserId: string | null | undefined, callerUserId: string | null | undefined): Promise<string | null> {
    const creator = creatorUserId ?? callerUserId ?? null;
    const owner = creator ? await this.store.getMember(creator) : null;
    if (creatorUserId && !owner) throw badRequest(`creator_user_id ${creatorUserId} is not a member of the organization`, { field: 'creator_user_id' });
    // A key belongs to its creator: a member who is not an admin may own keys only in the workspaces they belong to.
    if (owner && !(await this.mayOwnKeysIn(ws, owner))) {
      throw badRequest(`creator_user_id ${owner.id} is not a member of workspace ${ws.slug}; add them first (POST /workspaces/${ws.slug}/members/add)`, { field: 'creator_user_id' });
    }
    return creator;
  }

  async get(idOrSlug: string): Promise<WorkspaceRow> {
    const row = await this.store.getWorkspace(idOrSlug);
    if (!row) throw notFound(`Workspace ${idOrSlug} not found`);
    return row;
  }

  /** The workspace named by an optional id or slug, else the default one. */
  async resolve(idOrSlug: string | undefined): Promise<WorkspaceRow> {
    if (idOrSlug) return this.get(idOrSlug);
    const row = await this.store.getDefaultWorkspace();
    if (!row) throw notFound('The default workspace does not exist');
    return row;
  }

  list(offset: number, limit: number) {
    return this.store.listWorkspaces(offset, limit);
  }

  async update(idOrSlug: string, patch: Partial<WorkspaceInput>): Promise<WorkspaceRow> {
    const current = await this.get(idOrSlug);
    // Only the documented fields: unknown body fields must never reach the database (a 500, or a silent rewrite).
    const known: Partial<WorkspaceInput> = {};
    for (const k of WORKSPACE_FIELDS) if (patch[k] !== undefined) (known as Record<string, unknown>)[k] = patch[k];
    const row = await mapWorkspaceConflict(this.store.updateWorkspace(current.id, { ...known, updated_at: new Date(this.now()).toISOString() }), 'slug');
    this.bus?.publish('workspace', current.id);
    if (!row) throw notFound(`Workspace ${idOrSlug} not found`);
    return row;
  }

  /** Runs after a workspace was deleted (its files: services/files). */
  onDelete?: (id: string) => Promise<unknown>;

  async delete(idOrSlug: string): Promise<void> {
    const current = await this.get(idOrSlug);
    if (current.is_default) throw forbidden('The default workspace cannot be deleted');
    const deleted = await mapWorkspaceConflict(this.store.deleteWorkspace(current.id));
    this.bus?.publish('workspace', current.id);
    if (!deleted) throw notFound(`Workspace ${idOrSlug} not found`);
    await this.onDelete?.(current.id);
  }
}

export { mapConflict };
