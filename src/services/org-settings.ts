/**
 * The organization settings (routing preferences, privacy rules, model aliases: docs/guardrails.md): seeded from the
 * config file's `organization` section on first start, then managed through `/organization/settings`. Cached in
 * memory (dropped on any policy change published on the invalidation bus, and at least every cache TTL): the request
 * path reads them without a database round trip.
 */
import type { Logger } from 'pino';
import type { OrgSettingsRow, Store } from '../store/types.js';
import { defaultOrgSettings, patchOrgSettings, type Lists, type OrgSettingsPatch } from './guardrail-input.js';

export class OrgSettings {
  private cache: { row: OrgSettingsRow; at: number } | null = null;
  /** Bumped by every `forget`: settings read across one are not cached. */
  private generation = 0;

  constructor(
    private readonly deps: {
      store: Store;
      lists: Lists;
      ttlMs: number;
      now: () => number;
      /** Tells every instance that policies changed (the settings are part of every key's policy). */
      changed: () => void;
      log?: Logger;
      /** The config file's `organization` section (validated), seeding the settings on first start. */
      seed?: OrgSettingsPatch | null;
    },
  ) {}

  private iso(): string {
    return new Date(this.deps.now()).toISOString();
  }

  private defaults(): OrgSettingsRow {
    return defaultOrgSettings(this.iso());
  }

  /** Drops the cached settings (a policy changed, here or on another instance). */
  forget(): void {
    this.generation++;
    this.cache = null;
  }

  /** Seeds the organization settings from the config file when the database has none yet. */
  async init(): Promise<void> {
    const seed = this.deps.seed;
    if (!seed) return;
    const row: OrgSettingsRow = { ...this.defaults(), ...seed, created_at: this.iso() };
    const inserted = await this.deps.store.seedOrgSettings(row);
    if (!inserted) {
      const current = await this.deps.store.getOrgSettings();
      const differs = current && (Object.keys(seed) as Array<keyof OrgSettingsPatch>).some((k) => JSON.stringify(current[k]) !== JSON.stringify(seed[k]));
      if (differs) this.deps.log?.info('the organization settings in the database differ from the config file; the database wins (PATCH /organization/settings changes them)');
    }
  }

  /** The organization settings (cached; defaults when never set). */
  async get(): Promise<OrgSettingsRow> {
    const hit = this.peek();
    if (hit) return hit;
    const gen = this.generation;
    const row = (await this.deps.store.getOrgSettings()) ?? this.defaults();
    if (gen === this.generation) this.cache = { row, at: this.deps.now() };
    return row;
  }

  /** The settings when cached and fresh (no await); undefined: ask `get`. */
  peek(): OrgSettingsRow | undefined {
    const hit = this.cache;
    return hit && this.deps.now() - hit.at < this.deps.ttlMs ? hit.row : undefined;
  }

  async update(patch: OrgSettingsPatch): Promise<OrgSettingsRow> {
    const current = (await this.deps.store.getOrgSettings()) ?? this.defaults();
    const next = patchOrgSettings(this.deps.lists, current, patch, this.iso());
    await this.deps.store.saveOrgSettings(next);
    this.deps.changed();
    return next;
  }
}
