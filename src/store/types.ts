/**
 * The store interface: everything the gateway persists, behind one contract with two backends
 * (SQLite by default, PostgreSQL for production). Rows use API-facing types: booleans, ISO timestamps, parsed JSON.
 * The rows and the parts of the contract live per table group in store/types/; this module gathers them.
 */

import type { GenerationStore } from './types/generations.js';
import type { GuardrailStore } from './types/guardrails.js';
import type { OrgStore } from './types/org.js';
import type { PresetStore } from './types/presets.js';
import type { RecordStore } from './types/records.js';
import type { SpendStore } from './types/spend.js';
import type { VideoStore } from './types/videos.js';

export * from './types/common.js';
export * from './types/org.js';
export * from './types/generations.js';
export * from './types/records.js';
export * from './types/presets.js';
export * from './types/guardrails.js';
export * from './types/videos.js';
export * from './types/spend.js';

export interface Store extends OrgStore, GenerationStore, RecordStore, PresetStore, GuardrailStore, VideoStore, SpendStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Applies pending migrations (`check`: only verifies none is pending, else throws); returns the names applied. */
  migrate(mode?: 'apply' | 'check'): Promise<string[]>;
  close(): Promise<void>;
  /** True when the database answers. */
  ping(): Promise<boolean>;
}
