/** The organization, its members, workspaces and API keys. */
import { sql } from 'kysely';
import { SqlBase, isUniqueViolation } from './base.js';
import {
  ConflictError,
  type BootstrapInput,
  type KeyRow,
  type MemberRow,
  type OrganizationRow,
  type OrgStore,
  type Page,
  type WorkspaceMemberRow,
  type WorkspaceRow,
} from '../types.js';

export abstract class OrgSql extends SqlBase implements OrgStore {
  // ---- organization and members ------------------------------------------------------------------

  async getOrganization(): Promise<OrganizationRow | null> {
    const row = await this.db.selectFrom('organizations').selectAll().limit(1).executeTakeFirst();
    return this.dec<OrganizationRow>(row);
  }

  async bootstrap(input: BootstrapInput): Promise<boolean> {
    try {
      await this.db.transaction().execute(async (trx) => {
        const existing = await trx.selectFrom('organizations').select('id').limit(1).executeTakeFirst();
        if (existing) throw new ConflictError('already bootstrapped');
        await trx.insertInto('organizations').values(this.enc({ ...input.organization })).execute();
        await trx.insertInto('members').values(this.enc({ ...input.member })).execute();
        await trx.insertInto('workspaces').values(this.enc({ ...input.workspace })).execute();
        await trx.insertInto('api_keys').values(this.enc({ ...input.key })).execute();
      });
      return true;
    } catch (err) {
      // Another instance won the race, or the database was already set up.
      if (err instanceof ConflictError || isUniqueViolation(err)) return false;
      throw err;
    }
  }

  async listMembers(offset: number, limit: number): Promise<Page<MemberRow>> {
    const rows = await this.db.selectFrom('members').selectAll().orderBy('created_at').orderBy('id').offset(offset).limit(limit).execute();
    const total = await this.count('members');
    return { rows: this.decAll<MemberRow>(rows), total };
  }

  async getMember(id: string): Promise<MemberRow | null> {
    return this.dec<MemberRow>(await this.db.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirst());
  }

  async insertMember(row: MemberRow): Promise<void> {
    await this.guard(`a member with email ${row.email} already exists`, () => this.db.insertInto('members').values(this.enc({ ...row })).execute());
  }

  async deleteMember(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const member = await trx.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirst();
      if (!member) return false;
      if (member.role === 'org:admin') {
        const admins = await this.countWhere(trx, 'members', 'role', 'org:admin');
        if (admins <= 1) throw new ConflictError('cannot remove the last admin of the organization');
      }
      const keys = await trx
        .selectFrom('api_keys')
        .select(sql<number>`count(*)`.as('n'))
        .where('creator_user_id', '=', id)
        .where('disabled', '=', this.bool(false))
        .executeTakeFirstOrThrow();
      if (Number(keys.n) > 0) throw new ConflictError(`member ${id} still owns ${keys.n} active key(s); disable or delete them first`);
      // Disabled keys keep a dangling creator otherwise; detach them.
      await trx.updateTable('api_keys').set({ creator_user_id: null }).where('creator_user_id', '=', id).execute();
      await trx.deleteFrom('guardrail_assignments').where('user_id', '=', id).execute();
      await trx.deleteFrom('workspace_members').where('user_id', '=', id).execute();
      await trx.deleteFrom('members').where('id', '=', id).execute();
      return true;
    });
  }

  async listWorkspaceMembers(workspace_id: string, offset: number, limit: number): Promise<Page<WorkspaceMemberRow>> {
    const rows = await this.db.selectFrom('workspace_members').selectAll().where('workspace_id', '=', workspace_id).orderBy('created_at').orderBy('id').offset(offset).limit(limit).execute();
    return { rows: this.decAll<WorkspaceMemberRow>(rows), total: await this.countWhere(this.db, 'workspace_members', 'workspace_id', workspace_id) };
  }

  async isWorkspaceMember(workspace_id: string, user_id: string): Promise<boolean> {
    const row = await this.db.selectFrom('workspace_members').select('id').where('workspace_id', '=', workspace_id).where('user_id', '=', user_id).executeTakeFirst();
    return row !== undefined;
  }

  async addWorkspaceMembers(rows: WorkspaceMemberRow[]): Promise<WorkspaceMemberRow[]> {
    if (rows.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      const present = await trx
        .selectFrom('workspace_members')
        .select('user_id')
        .where('workspace_id', '=', rows[0].workspace_id)
        .where('user_id', 'in', rows.map((r) => r.user_id))
        .execute();
      const have = new Set(present.map((r) => r.user_id as string));
      const added = rows.filter((r) => !have.has(r.user_id) && have.add(r.user_id));
      for (const r of added) await trx.insertInto('workspace_members').values(this.enc({ ...r })).execute();
      return added;
    });
  }

  async removeWorkspaceMembers(workspace_id: string, user_ids: string[]): Promise<number> {
    if (user_ids.length === 0) return 0;
    return this.db.transaction().execute(async (trx) => {
      const owners = await trx
        .selectFrom('api_keys')
        .select('creator_user_id')
        .distinct()
        .where('workspace_id', '=', workspace_id)
        .where('creator_user_id', 'in', user_ids)
        .where('disabled', '=', this.bool(false))
        .execute();
      if (owners.length > 0) {
        throw new ConflictError(`member(s) ${owners.map((o) => o.creator_user_id).join(', ')} still own active keys in the workspace; disable or delete them first`);
      }
      const res = await trx.deleteFrom('workspace_members').where('workspace_id', '=', workspace_id).where('user_id', 'in', user_ids).executeTakeFirst();
      return Number(res.numDeletedRows);
    });
  }

  // ---- workspaces -------------------------------------------------------------------------------

  async insertWorkspace(row: WorkspaceRow, members: WorkspaceMemberRow[] = []): Promise<void> {
    await this.guard(`a workspace with slug "${row.slug}" already exists`, () =>
      this.db.transaction().execute(async (trx) => {
        await trx.insertInto('workspaces').values(this.enc({ ...row })).execute();
        for (const m of members) await trx.insertInto('workspace_members').values(this.enc({ ...m })).execute();
      }),
    );
  }

  async getWorkspace(idOrSlug: string): Promise<WorkspaceRow | null> {
    const row = await this.db
      .selectFrom('workspaces')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', idOrSlug), eb('slug', '=', idOrSlug)]))
      .executeTakeFirst();
    return this.dec<WorkspaceRow>(row);
  }

  async getDefaultWorkspace(): Promise<WorkspaceRow | null> {
    return this.dec<WorkspaceRow>(await this.db.selectFrom('workspaces').selectAll().where('is_default', '=', this.bool(true)).executeTakeFirst());
  }

  async listWorkspaces(offset: number, limit: number): Promise<Page<WorkspaceRow>> {
    const rows = await this.db.selectFrom('workspaces').selectAll().orderBy('created_at').orderBy('id').offset(offset).limit(limit).execute();
    return { rows: this.decAll<WorkspaceRow>(rows), total: await this.count('workspaces') };
  }

  async updateWorkspace(id: string, patch: Partial<WorkspaceRow>): Promise<WorkspaceRow | null> {
    const values = this.enc({ ...patch, id: undefined, created_at: undefined, created_by: undefined, is_default: undefined });
    if (Object.keys(values).length > 0) {
      await this.guard(`a workspace with slug "${patch.slug}" already exists`, () =>
        this.db.updateTable('workspaces').set(values).where('id', '=', id).execute(),
      );
    }
    return this.getWorkspace(id);
  }

  async deleteWorkspace(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const ws = await trx.selectFrom('workspaces').select('id').where('id', '=', id).executeTakeFirst();
      if (!ws) return false;
      const active = await trx
        .selectFrom('api_keys')
        .select(sql<number>`count(*)`.as('n'))
        .where('workspace_id', '=', id)
        .where('disabled', '=', this.bool(false))
        .executeTakeFirstOrThrow();
      if (Number(active.n) > 0) throw new ConflictError(`workspace still has ${active.n} active key(s); disable or delete them first`);
      const presetIds = trx.selectFrom('presets').select('id').where('workspace_id', '=', id);
      await trx.deleteFrom('preset_versions').where('preset_id', 'in', presetIds).execute();
      await trx.deleteFrom('presets').where('workspace_id', '=', id).execute();
      const keyHashes = trx.selectFrom('api_keys').select('hash').where('workspace_id', '=', id);
      await trx.deleteFrom('key_usage_daily').where('key_hash', 'in', keyHashes).execute();
      // The workspace's guardrails (its default one included) and every assignment of them or of its keys.
      const guardrailIds = trx.selectFrom('guardrails').select('id').where('workspace_id', '=', id);
      await trx.deleteFrom('guardrail_assignments').where((eb) => eb.or([eb('guardrail_id', 'in', guardrailIds), eb('key_hash', 'in', keyHashes)])).execute();
      await trx.deleteFrom('guardrails').where('workspace_id', '=', id).execute();
      await trx.deleteFrom('api_keys').where('workspace_id', '=', id).execute();
      await trx.deleteFrom('workspace_members').where('workspace_id', '=', id).execute();
      await trx.deleteFrom('workspaces').where('id', '=', id).execute();
      return true;
    });
  }

  // ---- keys -------------------------------------------------------------------------------------

  async insertKey(row: KeyRow): Promise<void> {
    await this.guard('key already exists', () => this.db.insertInto('api_keys').values(this.enc({ ...row })).execute());
  }

  async getKey(hash: string): Promise<KeyRow | null> {
    return this.dec<KeyRow>(await this.db.selectFrom('api_keys').selectAll().where('hash', '=', hash).executeTakeFirst());
  }

  async listKeys(q: { workspace_id: string; include_disabled: boolean; offset: number; limit: number }): Promise<KeyRow[]> {
    let query = this.db.selectFrom('api_keys').selectAll().where('workspace_id', '=', q.workspace_id);
    if (!q.include_disabled) query = query.where('disabled', '=', this.bool(false));
    const rows = await query.orderBy('created_at', 'desc').orderBy('hash').offset(q.offset).limit(q.limit).execute();
    return this.decAll<KeyRow>(rows);
  }

  async updateKey(hash: string, patch: Partial<KeyRow>): Promise<KeyRow | null> {
    const values = this.enc({ ...patch, hash: undefined, kind: undefined, created_at: undefined, label: undefined });
    if (Object.keys(values).length > 0) await this.db.updateTable('api_keys').set(values).where('hash', '=', hash).execute();
    return this.getKey(hash);
  }

  async deleteKey(hash: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const res = await trx.deleteFrom('api_keys').where('hash', '=', hash).executeTakeFirst();
      await trx.deleteFrom('key_usage_daily').where('key_hash', '=', hash).execute();
      await trx.deleteFrom('guardrail_assignments').where('key_hash', '=', hash).execute();
      return Number(res.numDeletedRows) > 0;
    });
  }

  async countActiveManagementKeys(): Promise<number> {
    const row = await this.db
      .selectFrom('api_keys')
      .select(sql<number>`count(*)`.as('n'))
      .where('kind', '=', 'management')
      .where('disabled', '=', this.bool(false))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async listKeyHashes(q: { creator_user_id?: string; workspace_id?: string }): Promise<string[]> {
    let query = this.db.selectFrom('api_keys').select('hash');
    if (q.creator_user_id !== undefined) query = query.where('creator_user_id', '=', q.creator_user_id);
    if (q.workspace_id !== undefined) query = query.where('workspace_id', '=', q.workspace_id);
    return (await query.execute()).map((r) => r.hash as string);
  }
}
