/** Presets and their versions. */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { SqlBase } from './base.js';
import type { Page, PresetRow, PresetStore, PresetVersionRow, SavePresetInput } from '../types.js';

export abstract class PresetSql extends SqlBase implements PresetStore {
  // ---- presets ----------------------------------------------------------------------------------

  async getPreset(workspace_id: string, slug: string): Promise<PresetRow | null> {
    const row = await this.db.selectFrom('presets').selectAll().where('workspace_id', '=', workspace_id).where('slug', '=', slug).executeTakeFirst();
    return this.dec<PresetRow>(row);
  }

  async listPresets(workspace_id: string, offset: number, limit: number): Promise<Page<PresetRow>> {
    const rows = await this.db
      .selectFrom('presets')
      .selectAll()
      .where('workspace_id', '=', workspace_id)
      .orderBy('updated_at', 'desc')
      .orderBy('id')
      .offset(offset)
      .limit(limit)
      .execute();
    const total = await this.countWhere(this.db, 'presets', 'workspace_id', workspace_id);
    return { rows: this.decAll<PresetRow>(rows), total };
  }

  async getPresetVersion(preset_id: string, version: number): Promise<PresetVersionRow | null> {
    const row = await this.db.selectFrom('preset_versions').selectAll().where('preset_id', '=', preset_id).where('version', '=', version).executeTakeFirst();
    return this.dec<PresetVersionRow>(row);
  }

  async getPresetVersionById(id: string): Promise<PresetVersionRow | null> {
    return this.dec<PresetVersionRow>(await this.db.selectFrom('preset_versions').selectAll().where('id', '=', id).executeTakeFirst());
  }

  async listPresetVersions(preset_id: string, offset: number, limit: number): Promise<Page<PresetVersionRow>> {
    const rows = await this.db
      .selectFrom('preset_versions')
      .selectAll()
      .where('preset_id', '=', preset_id)
      .orderBy('version', 'asc')
      .offset(offset)
      .limit(limit)
      .execute();
    const total = await this.countWhere(this.db, 'preset_versions', 'preset_id', preset_id);
    return { rows: this.decAll<PresetVersionRow>(rows), total };
  }

  async savePresetVersion(input: SavePresetInput): Promise<{ preset: PresetRow; version: PresetVersionRow; created: boolean }> {
    return this.guard(`preset "${input.slug}" was modified concurrently; retry`, () =>
      this.db.transaction().execute(async (trx) => {
        const existing = this.dec<PresetRow>(
          await trx.selectFrom('presets').selectAll().where('workspace_id', '=', input.workspace_id).where('slug', '=', input.slug).executeTakeFirst(),
        );
        const versionId = randomUUID();
        if (!existing) {
          const preset: PresetRow = {
            id: randomUUID(),
            workspace_id: input.workspace_id,
            slug: input.slug,
            name: input.slug,
            description: null,
            status: 'active',
            status_updated_at: null,
            designated_version_id: versionId,
            creator_user_id: input.creator_id,
            created_at: input.now,
            updated_at: input.now,
          };
          const version = this.versionRow(versionId, preset.id, 1, input);
          await trx.insertInto('presets').values(this.enc({ ...preset })).execute();
          await trx.insertInto('preset_versions').values(this.enc({ ...version })).execute();
          return { preset, version, created: true };
        }
        const max = await trx
          .selectFrom('preset_versions')
          .select(sql<number>`max(version)`.as('v'))
          .where('preset_id', '=', existing.id)
          .executeTakeFirstOrThrow();
        const version = this.versionRow(versionId, existing.id, Number(max.v ?? 0) + 1, input);
        // The unique (preset_id, version) constraint turns a concurrent edit into a ConflictError.
        await trx.insertInto('preset_versions').values(this.enc({ ...version })).execute();
        await trx.updateTable('presets').set({ designated_version_id: versionId, updated_at: input.now }).where('id', '=', existing.id).execute();
        return { preset: { ...existing, designated_version_id: versionId, updated_at: input.now }, version, created: false };
      }),
    );
  }

  private versionRow(id: string, preset_id: string, version: number, input: SavePresetInput): PresetVersionRow {
    return { id, preset_id, version, config: input.config, system_prompt: input.system_prompt, creator_id: input.creator_id, created_at: input.now, updated_at: input.now };
  }
}
