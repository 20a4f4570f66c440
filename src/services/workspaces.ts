/** Workspaces: the unit that owns keys, presets and routing defaults. */
import { randomUUID } from 'node:crypto';
import { conflict, forbidden, notFound } from '../http/errors.js';
import { workspaceGuardrailId } from '../core/policy.js';
import { ConflictError, type Store, type WorkspaceRow } from '../store/types.js';
import type { InvalidationBus } from './invalidation.js';

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

export function workspaceView(row: WorkspaceRow) {
  const { is_default: _hidden, ...rest } = row;
  // Every workspace has a default guardrail covering all its traffic; its id is derived from the workspace id.
  return { ...rest, default_guardrail_id: workspaceGuardrailId(row.id) };
}

async function mapConflict<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof ConflictError) throw conflict(err.message);
    throw err;
  }
}

export class WorkspaceService {
  private readonly cache = new Map<string, { row: WorkspaceRow | null; at: number }>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
    private readonly bus?: InvalidationBus,
    private readonly ttlMs = 30_000,
  ) {
    bus?.subscribe((kind, id) => {
      if (kind === 'workspace') this.cache.delete(id);
    });
  }

  /** A workspace by id from memory (hot path); read from the store at most once per TTL or after a change. */
  async cached(id: string): Promise<WorkspaceRow | null> {
    const hit = this.cache.get(id);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.row;
    const row = await this.store.getWorkspace(id);
    this.cache.set(id, { row, at: this.now() });
    return row;
  }

  async create(input: WorkspaceInput, createdBy: string): Promise<WorkspaceRow> {
    const row = newWorkspace(input, createdBy, new Date(this.now()).toISOString());
    await mapConflict(this.store.insertWorkspace(row));
    return row;
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
    const row = await mapConflict(this.store.updateWorkspace(current.id, { ...known, updated_at: new Date(this.now()).toISOString() }));
    this.bus?.publish('workspace', current.id);
    if (!row) throw notFound(`Workspace ${idOrSlug} not found`);
    return row;
  }

  async delete(idOrSlug: string): Promise<void> {
    const current = await this.get(idOrSlug);
    if (current.is_default) throw forbidden('The default workspace cannot be deleted');
    const deleted = await mapConflict(this.store.deleteWorkspace(current.id));
    this.bus?.publish('workspace', current.id);
    if (!deleted) throw notFound(`Workspace ${idOrSlug} not found`);
  }
}

export { mapConflict };
