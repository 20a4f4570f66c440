/** Presets: saving inference bodies as versioned configurations of a workspace. */
import { presetFromBody, type PresetSource } from '../core/presets.js';
import { badRequest, notFound } from '../core/errors.js';
import { mapConflict } from './workspaces.js';
import type { PresetRow, PresetVersionRow, Store } from '../store/types.js';
import type { InvalidationBus } from './invalidation.js';
import { FreshCache } from './fresh-cache.js';

export function presetView(preset: PresetRow, version: PresetVersionRow | null) {
  return {
    id: preset.id,
    name: preset.name,
    slug: preset.slug,
    description: preset.description,
    status: preset.status,
    status_updated_at: preset.status_updated_at,
    designated_version_id: preset.designated_version_id,
    designated_version: version ? versionView(version) : null,
    creator_user_id: preset.creator_user_id,
    workspace_id: preset.workspace_id,
    created_at: preset.created_at,
    updated_at: preset.updated_at,
  };
}

export function versionView(v: PresetVersionRow) {
  return {
    id: v.id,
    preset_id: v.preset_id,
    version: v.version,
    config: v.config,
    system_prompt: v.system_prompt,
    creator_id: v.creator_id,
    created_at: v.created_at,
    updated_at: v.updated_at,
  };
}

export class PresetService {
  private readonly cache: FreshCache<{ preset: PresetRow; version: PresetVersionRow }>;

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
    private readonly bus?: InvalidationBus,
    ttlMs = 30_000,
  ) {
    this.cache = new FreshCache({ ttlMs, now, bus, kinds: ['preset'] });
  }

  /** The designated version for inference, from memory; a new version invalidates it on every instance. */
  async designatedCached(workspaceId: string, slug: string): Promise<{ preset: PresetRow; version: PresetVersionRow }> {
    return this.cache.get(`${workspaceId}|${slug}`, () => this.designated(workspaceId, slug));
  }

  async save(workspaceId: string, slug: string, source: PresetSource, body: Record<string, unknown>, creatorId: string) {
    if (source === 'responses' && body.store === true) {
      throw badRequest('store must be false: the gateway is stateless', { field: 'store' });
    }
    const { system_prompt, config } = presetFromBody(source, body);
    const { preset, version } = await mapConflict(
      this.store.savePresetVersion({ workspace_id: workspaceId, slug, creator_id: creatorId, config, system_prompt, now: new Date(this.now()).toISOString() }),
    );
    this.bus?.publish('preset', `${workspaceId}|${slug}`);
    return presetView(preset, version);
  }

  async get(workspaceId: string, slug: string): Promise<PresetRow> {
    const preset = await this.store.getPreset(workspaceId, slug);
    if (!preset) throw notFound(`Preset ${slug} not found`);
    return preset;
  }

  async getWithVersion(workspaceId: string, slug: string) {
    const preset = await this.get(workspaceId, slug);
    return presetView(preset, await this.store.getPresetVersionById(preset.designated_version_id));
  }

  /** The designated version of a preset, for inference. */
  async designated(workspaceId: string, slug: string): Promise<{ preset: PresetRow; version: PresetVersionRow }> {
    const preset = await this.get(workspaceId, slug);
    if (preset.status !== 'active') throw badRequest(`Preset ${slug} is ${preset.status}`);
    const version = await this.store.getPresetVersionById(preset.designated_version_id);
    if (!version) throw notFound(`Preset ${slug} has no designated version`);
    return { preset, version };
  }

  async list(workspaceId: string, offset: number, limit: number) {
    const page = await this.store.listPresets(workspaceId, offset, limit);
    const data = await Promise.all(page.rows.map(async (p) => presetView(p, await this.store.getPresetVersionById(p.designated_version_id))));
    return { data, total_count: page.total };
  }

  async versions(workspaceId: string, slug: string, offset: number, limit: number) {
    const preset = await this.get(workspaceId, slug);
    const page = await this.store.listPresetVersions(preset.id, offset, limit);
    return { data: page.rows.map(versionView), total_count: page.total };
  }

  async version(workspaceId: string, slug: string, n: number) {
    const preset = await this.get(workspaceId, slug);
    const v = await this.store.getPresetVersion(preset.id, n);
    if (!v) throw notFound(`Preset ${slug} has no version ${n}`);
    return versionView(v);
  }
}
