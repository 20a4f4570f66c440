/**
 * Guardrails and organization settings.
 *
 * Management: guardrail CRUD, assignments to keys and members (a key or member holds at most one; a new assignment
 * replaces the old), the workspace default guardrail (id derived from the workspace id, materialized by its first
 * PATCH), and the organization's routing preferences and privacy rules (org-settings.ts: seeded from the config
 * file's `organization` section, then managed through `/organization/settings`).
 *
 * Enforcement: the effective policy of a key (src/core/policy.ts) is cached in memory per key hash and dropped on any
 * guardrail, assignment or settings change (published on the invalidation bus, so every instance drops it; a TTL is
 * the safety net). The request path therefore does no database round trip unless a budget needs fresh spend figures.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { EndpointDef, ModelDef, ProviderDef } from '../core/catalog-types.js';
import { combinePolicies, endpointVerdict, modelAccess, type EffectivePolicy, type GuardrailPolicyInput, type GuardrailScope, type ModelAccess } from '../core/policy.js';
import { budgetRefusal, refusal } from '../core/policy-refusals.js';
import { workspaceGuardrailId, workspaceGuardrailName } from '../core/guardrail-ids.js';
import type { ProviderSortBy } from '../core/provider-prefs.js';
import { filtersOf } from './content-guardrails.js';
import type { CompiledFilter } from '../core/content-filters/index.js';
import type { ByokRouting, RouteCatalog } from '../core/routing.js';
import { badRequest, notFound } from '../core/errors.js';
import { ConflictError, type GuardrailRow, type KeyRow, type OrgSettingsRow, type Store, type WorkspaceRow } from '../store/types.js';
import type { CatalogService } from './catalog.js';
import type { GenerationRecorder } from './generations.js';
import type { InvalidationBus } from './invalidation.js';
import { mapConflict, type WorkspaceService } from './workspaces.js';
import { applyGuardrailInput, blankGuardrail, Lists, policyInput, toHttp, type GuardrailInput, type OrgSettingsPatch, type PolicyDecision } from './guardrail-input.js';
import { GuardrailSpend } from './guardrail-spend.js';
import { guardrailRateLimits } from '../core/rate-limits.js';
import { GuardrailRatePresence } from './guardrail-rates.js';
import { OrgSettings } from './org-settings.js';

export { guardrailView, MAX_ORG_ALIASES, orgSettingsFromConfig, orgSettingsView, type GuardrailInput, type OrgSettingsPatch, type PolicyDecision } from './guardrail-input.js';
export { keyLimitError } from './guardrail-spend.js';

export class GuardrailService extends GuardrailSpend {
  private readonly policies = new Map<string, { policy: EffectivePolicy; at: number }>();
  /** The organization settings (org-settings.ts), part of every key's policy. */
  private readonly org: OrgSettings;
  /** Bumped by every invalidation: a policy computed across one is not cached. */
  private generation = 0;
  private orgId: string | null = null;
  private readonly lists: Lists;
  private readonly rates: GuardrailRatePresence;

  constructor(
    protected override readonly deps: {
      store: Store;
      bus: InvalidationBus;
      catalog: CatalogService;
      workspaces: WorkspaceService;
      recorder: GenerationRecorder;
      ttlMs: number;
      now?: () => number;
      log?: Logger;
      /** The config file's `organization` section (validated), seeding the settings on first start. */
      seed?: OrgSettingsPatch | null;
    },
  ) {
    super(deps);
    this.lists = new Lists(deps.catalog);
    this.org = new OrgSettings({ store: deps.store, lists: this.lists, ttlMs: deps.ttlMs, now: () => this.now(), changed: () => this.changed(), log: deps.log, seed: deps.seed });
    this.rates = new GuardrailRatePresence(() => deps.store.anyGuardrailRateLimit(), deps.ttlMs, () => this.now(), deps.log);
    deps.bus.subscribe((kind, id) => {
      if (kind === 'policy' || kind === 'workspace') this.clear();
      else if (kind === 'key') {
        this.generation++;
        this.policies.delete(id);
      }
    });
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  private clear(): void {
    this.generation++;
    this.policies.clear();
    this.org.forget();
    this.spend.clear();
    this.rates.forget();
  }

  /**
   * False only when no guardrail of the organization has a rate limit (read from the store once per change, and at
   * least every cache TTL): requests then skip the guardrail rate check without looking at their policy.
   */
  mayRateLimit(): boolean {
    return this.rates.maybe();
  }

  /** Tells every instance that policies changed. */
  private changed(): void {
    this.deps.bus.publish('policy', '*');
  }

  /** Seeds the organization settings from the config file when the database has none yet. */
  init(): Promise<void> {
    return this.org.init();
  }

  // ---- organization settings (org-settings.ts) ---------------------------------------------------

  /** The organization settings (cached; defaults when never set). */
  settings(): Promise<OrgSettingsRow> {
    return this.org.get();
  }

  /** The organization settings when cached and fresh (no await); undefined: ask `settings`. */
  peekSettings(): OrgSettingsRow | undefined {
    return this.org.peek();
  }

  updateSettings(patch: OrgSettingsPatch): Promise<OrgSettingsRow> {
    return this.org.update(patch);
  }

  // ---- guardrails --------------------------------------------------------------------------------

  /** The organization's id (GET /key's `organization_id`, guardrail member assignments). */
  async organizationId(): Promise<string> {
    this.orgId ??= (await this.deps.store.getOrganization())?.id ?? 'org';
    return this.orgId;
  }

  async list(workspaceIdOrSlug: string | undefined, offset: number, limit: number) {
    const ws = await this.deps.workspaces.resolve(workspaceIdOrSlug);
    return this.deps.store.listGuardrails(ws.id, offset, limit);
  }

  /** The workspace whose default guardrail has this id, if any. */
  private async workspaceOfDefault(id: string): Promise<WorkspaceRow | null> {
    for (let offset = 0; ; offset += 100) {
      const page = await this.deps.workspaces.list(offset, 100);
      const ws = page.rows.find((w) => workspaceGuardrailId(w.id) === id);
      if (ws) return ws;
      if (page.rows.length < 100) return null;
    }
  }

  async get(id: string): Promise<GuardrailRow> {
    const row = await this.deps.store.getGuardrail(id);
    if (row) return row;
    if (await this.workspaceOfDefault(id)) throw notFound(`Guardrail ${id} is the default guardrail of a workspace and has not been configured yet; PATCH it to configure it`);
    throw notFound(`Guardrail ${id} not found`);
  }

  private apply(row: GuardrailRow, b: GuardrailInput, creating: boolean): GuardrailRow {
    return applyGuardrailInput(this.lists, row, b, creating);
  }

  private blank(id: string, name: string, workspaceId: string, isDefault: boolean): GuardrailRow {
    return blankGuardrail(id, name, workspaceId, isDefault, this.iso());
  }

  async create(b: GuardrailInput & { name: string }): Promise<GuardrailRow> {
    const ws = await this.deps.workspaces.resolve(b.workspace_id);
    const row = this.apply(this.blank(randomUUID(), b.name, ws.id, false), b, true);
    await mapConflict(this.deps.store.insertGuardrail(row));
    return row;
  }

  async update(id: string, b: GuardrailInput): Promise<GuardrailRow> {
    let current = await this.deps.store.getGuardrail(id);
    if (!current) {
      // The first PATCH of a workspace's default guardrail materializes it.
      const ws = await this.workspaceOfDefault(id);
      if (!ws) throw notFound(`Guardrail ${id} not found`);
      if (b.name !== undefined && b.name !== workspaceGuardrailName(ws.id)) throw badRequest('name: the name of a workspace default guardrail is derived from its workspace and cannot be changed', { field: 'name', rule: 'immutable' });
      const row = this.apply(this.blank(id, workspaceGuardrailName(ws.id), ws.id, true), b, true);
      try {
        await this.deps.store.insertGuardrail(row);
        this.changed();
        return row;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        current = await this.deps.store.getGuardrail(id); // materialized concurrently: update it instead
        if (!current) throw err;
      }
    }
    if (current.is_workspace_default && b.name !== undefined && b.name !== current.name) {
      throw badRequest('name: the name of a workspace default guardrail is derived from its workspace and cannot be changed', { field: 'name', rule: 'immutable' });
    }
    const next = this.apply(current, b, false);
    const row = await this.deps.store.updateGuardrail(id, { ...next, updated_at: this.iso() });
    this.changed();
    if (!row) throw notFound(`Guardrail ${id} not found`);
    return row;
  }

  async delete(id: string): Promise<void> {
    const deleted = await this.deps.store.deleteGuardrail(id);
    this.changed();
    if (!deleted) throw notFound(`Guardrail ${id} not found`);
  }

  private async assignable(id: string): Promise<GuardrailRow> {
    const g = await this.get(id);
    if (g.is_workspace_default) throw badRequest('A workspace default guardrail applies to all traffic of its workspace and cannot be assigned', { field: 'id', rule: 'workspace_default' });
    return g;
  }

  async assignKeys(id: string, hashes: string[], assignedBy: string | null): Promise<number> {
    const known = async (h: string, i: number) => {
      if (!(await this.deps.store.getKey(h))) throw badRequest(`key_hashes[${i}]: no API key has the hash ${h}`, { field: `key_hashes[${i}]`, rule: 'unknown_entry' });
    };
    return this.assign(id, 'key', hashes, assignedBy, known);
  }

  unassignKeys(id: string, hashes: string[]): Promise<number> {
    return this.unassign(id, 'key', hashes);
  }

  async assignMembers(id: string, userIds: string[], assignedBy: string | null): Promise<number> {
    const known = async (u: string, i: number) => {
      if (!(await this.deps.store.getMember(u))) throw badRequest(`member_user_ids[${i}]: ${u} is not a member of the organization`, { field: `member_user_ids[${i}]`, rule: 'unknown_entry' });
    };
    return this.assign(id, 'member', userIds, assignedBy, known);
  }

  unassignMembers(id: string, userIds: string[]): Promise<number> {
    return this.unassign(id, 'member', userIds);
  }

  /** Assigns keys or members (each checked by `known`, in order) to an assignable guardrail, replacing their earlier one. */
  private async assign(id: string, kind: 'key' | 'member', ids: string[], assignedBy: string | null, known: (x: string, i: number) => Promise<void>): Promise<number> {
    await this.assignable(id);
    for (const [i, x] of ids.entries()) await known(x, i);
    const n = await mapConflict(this.deps.store.assignGuardrail({ guardrail_id: id, kind, ids, assigned_by: assignedBy, now: this.iso() }));
    this.changed();
    return n;
  }

  private async unassign(id: string, kind: 'key' | 'member', ids: string[]): Promise<number> {
    await this.get(id);
    const n = await this.deps.store.unassignGuardrail(id, kind, ids);
    this.changed();
    return n;
  }

  async keyAssignments(id: string | null, offset: number, limit: number) {
    if (id !== null) await this.get(id);
    const page = await this.deps.store.listKeyAssignments(id, offset, limit);
    return {
      data: page.rows.map((a) => ({ id: a.id, key_hash: a.key_hash, guardrail_id: a.guardrail_id, key_name: a.key_name, key_label: a.key_label, assigned_by: a.assigned_by, created_at: a.created_at })),
      total_count: page.total,
    };
  }

  async memberAssignments(id: string | null, offset: number, limit: number) {
    if (id !== null) await this.get(id);
    const page = await this.deps.store.listMemberAssignments(id, offset, limit);
    const organization_id = await this.organizationId();
    return {
      data: page.rows.map((a) => ({ id: a.id, user_id: a.user_id as string, organization_id, guardrail_id: a.guardrail_id, assigned_by: a.assigned_by, created_at: a.created_at })),
      total_count: page.total,
    };
  }

  // ---- enforcement -------------------------------------------------------------------------------

  /** The content filters compiled with each cached policy (docs/guardrails.md). */
  private readonly filters = new WeakMap<EffectivePolicy, CompiledFilter[] | null>();

  /** The key's effective policy when it is cached and fresh (the hot path, no await); undefined: ask `policyFor`. */
  peekPolicy(key: KeyRow): EffectivePolicy | undefined {
    const hit = this.policies.get(key.hash);
    return hit && this.now() - hit.at < this.deps.ttlMs ? hit.policy : undefined;
  }

  /** The content filters compiled with a policy (null: none, nothing to screen). */
  contentFilters(policy: EffectivePolicy): CompiledFilter[] | null {
    return this.filters.get(policy) ?? null;
  }

  /**
   * Whether a request of the key under `policy` has nothing to admit: no spending limit of its own and no spend-control
   * scope known to apply (no budgets, no workspace budget, credits off). Synchronous: the hot path skips the admission.
   */
  nothingToAdmit(key: KeyRow, policy: EffectivePolicy): boolean {
    return key.limit === null && (this.gate === null || this.gate.nothingToReserve(key, policy));
  }

  /** The effective policy of a key: organization settings, then its key, member and workspace guardrails. */
  override async policyFor(key: KeyRow): Promise<EffectivePolicy> {
    const hit = this.policies.get(key.hash);
    if (hit && this.now() - hit.at < this.deps.ttlMs) return hit.policy;
    const gen = this.generation;
    const [settings, g] = await Promise.all([
      this.settings(),
      this.deps.store.guardrailsFor({ key_hash: key.hash, user_id: key.creator_user_id, workspace_id: key.workspace_id }),
    ]);
    const guardrails: GuardrailPolicyInput[] = [];
    if (g.key) guardrails.push(policyInput(g.key, 'key'));
    if (g.member) guardrails.push(policyInput(g.member, 'member'));
    if (g.workspace) guardrails.push(policyInput(g.workspace, 'workspace'));
    const policy = combinePolicies({ ...settings, default_provider_sort: settings.default_provider_sort as ProviderSortBy | null }, guardrails);
    const scoped = [{ row: g.key, scope: 'key' as const }, { row: g.member, scope: 'member' as const }, { row: g.workspace, scope: 'workspace' as const }];
    const applying = scoped.filter((x): x is { row: GuardrailRow; scope: GuardrailScope } => x.row !== null);
    this.filters.set(policy, filtersOf(applying));
    const rates = guardrailRateLimits(
      applying.map(({ row, scope }) => ({ id: row.id, name: row.name, scope, rate_limit_requests: row.rate_limit_requests, rate_limit_interval_s: row.rate_limit_interval_s, rate_limit_tokens_per_minute: row.rate_limit_tokens_per_minute })),
      { key: key.hash, member: key.creator_user_id, workspace: key.workspace_id },
    );
    policy.requestLimits = rates.requests;
    policy.tokenLimits = rates.tokens;
    if (gen === this.generation) {
      if (this.policies.size > 100_000) this.policies.clear();
      this.policies.set(key.hash, { policy, at: this.now() });
    }
    return policy;
  }

  private access(policy: EffectivePolicy, modelId: string, byok?: ByokRouting): ModelAccess {
    // An embeddings, transcription or rerank model's endpoints are those its own API routes.
    const cat = this.deps.catalog;
    const route = cat.otherApi.get(modelId)?.route ?? cat.route;
    // A provider without the operator's key is reachable through a BYOK credential of the key's that allows the model.
    const reachable = byok ? (p: ProviderDef) => cat.hasCredentials(p) || byok.credentials(p, modelId).length > 0 : cat.hasCredentials;
    return modelAccess(policy, route, reachable, modelId);
  }

  /**
   * One model of a non-chat API (speech, embeddings, transcriptions) over that API's route: a spent budget or a blocked
   * model is refused here (403/404, see `refusal`); otherwise planRoute's endpoint filter (none when nothing is
   * restricted) and the organization's default sort.
   */
  async admitModel(key: KeyRow, route: RouteCatalog, model: string): Promise<{ endpointPolicy?: PolicyDecision['endpointPolicy']; defaultSort: ProviderSortBy | null }> {
    const policy = await this.policyFor(key);
    if (policy.budgets.length > 0) {
      const spent = await this.exhaustedBudget(key, policy);
      if (spent) throw toHttp(budgetRefusal(spent.budget, spent.spent));
    }
    if (policy.rules.length === 0) return { defaultSort: policy.defaultSort };
    const access = modelAccess(policy, route, this.deps.catalog.hasCredentials, model);
    if (access.blocked) throw toHttp(refusal([{ model, access }]));
    return { endpointPolicy: (ep, provider) => endpointVerdict(policy, ep, provider)?.reason, defaultSort: policy.defaultSort };
  }

  /**
   * Chat: refuses a request whose budget is spent (403) or whose every requested model the policy blocks (403 for a
   * guardrail's model or provider list, else 404, see `refusal`); otherwise the models left and the routing filter.
   */
  async enforce(key: KeyRow, models: string[]): Promise<PolicyDecision> {
    return this.decide(key, await this.policyFor(key), models);
  }

  /** `enforce` with the key's policy in hand: synchronous unless the policy has budgets to read. */
  decide(key: KeyRow, policy: EffectivePolicy, models: string[]): PolicyDecision | Promise<PolicyDecision> {
    if (policy.budgets.length > 0) {
      return this.exhaustedBudget(key, policy).then((spent) => {
        if (spent) throw toHttp(budgetRefusal(spent.budget, spent.spent));
        return this.allowed(policy, models);
      });
    }
    return this.allowed(policy, models);
  }

  private allowed(policy: EffectivePolicy, models: string[]): PolicyDecision {
    if (policy.rules.length === 0) return { models, defaultSort: policy.defaultSort };
    const kept: string[] = [];
    const blocked: Array<{ model: string; access: ModelAccess }> = [];
    for (const id of models) {
      const access = this.access(policy, id);
      if (access.blocked) blocked.push({ model: id, access });
      else kept.push(id);
    }
    if (blocked.length > 0 && !kept.some((id) => this.deps.catalog.route.models.has(id))) throw toHttp(refusal(blocked));
    return { models: kept, defaultSort: policy.defaultSort, endpointPolicy: (ep, provider) => endpointVerdict(policy, ep, provider)?.reason };
  }

  /**
   * `GET /models/user`: every model the key can reach, with the endpoints left to it (none at all once a budget is
   * spent) — through the operator's keys or the key's BYOK credentials (`byok`, docs/byok.md).
   */
  async userModels(key: KeyRow, byok?: ByokRouting): Promise<Array<{ model: ModelDef; endpoints: EndpointDef[] }>> {
    const policy = await this.policyFor(key);
    if (policy.budgets.length > 0 && (await this.exhaustedBudget(key, policy))) return [];
    return this.deps.catalog.catalog.models.map((model) => ({ model, endpoints: this.access(policy, model.id, byok).endpoints })).filter((x) => x.endpoints.length > 0);
  }
}

export { workspaceGuardrailId };
