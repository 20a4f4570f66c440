/** Presets and their versions (store/sql/presets.ts). */

import type { Page } from './common.js';

export interface PresetRow {
  id: string;
  workspace_id: string;
  slug: string;
  name: string;
  description: string | null;
  status: 'active' | 'disabled' | 'archived';
  status_updated_at: string | null;
  designated_version_id: string;
  creator_user_id: string;
  created_at: string;
  updated_at: string;
}

export interface PresetVersionRow {
  id: string;
  preset_id: string;
  version: number;
  config: Record<string, unknown>;
  system_prompt: string | null;
  creator_id: string;
  created_at: string;
  updated_at: string;
}

/** Spend of one key on one UTC day, in USD. */

export interface SavePresetInput {
  workspace_id: string;
  slug: string;
  creator_id: string;
  config: Record<string, unknown>;
  system_prompt: string | null;
  now: string;
}

/** Presets and their versions. */
export interface PresetStore {
  getPreset(workspace_id: string, slug: string): Promise<PresetRow | null>;
  listPresets(workspace_id: string, offset: number, limit: number): Promise<Page<PresetRow>>;
  getPresetVersion(preset_id: string, version: number): Promise<PresetVersionRow | null>;
  getPresetVersionById(id: string): Promise<PresetVersionRow | null>;
  listPresetVersions(preset_id: string, offset: number, limit: number): Promise<Page<PresetVersionRow>>;
  /**
   * Creates the preset (version 1) or adds the next version and designates it, in one transaction.
   * Two concurrent saves of one preset never produce the same version number: the loser gets ConflictError.
   */
  savePresetVersion(input: SavePresetInput): Promise<{ preset: PresetRow; version: PresetVersionRow; created: boolean }>;
}
