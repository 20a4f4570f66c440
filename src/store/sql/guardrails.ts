/** Organization settings, server secrets, guardrails and their assignments. */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { SqlBase } from './base.js';
import type { GuardrailAssignmentRow, GuardrailRow, GuardrailStore, KeyAssignmentRow, OrgSettingsRow, Page } from '../types.js';

export abstract class GuardrailSql extends SqlBase implements GuardrailStore {
  // ---- organization settings and guardrails --------------------------------------------------------

  async getOrgSettings(): Promise<OrgSettingsRow | null> {
    return this.dec<OrgSettingsRow>(await this.db.selectFrom('organization_settings').selectAll().limit(1).executeTakeFirst());
  }

  async serverSecret(name: string, candidate: string): Promise<string> {
    await this.db.insertInto('server_secrets').values({ name, value: candidate }).onConflict((oc) => oc.column('name').doNothing()).execute();
    const row = await this.db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
    return row.value as string;
  }

  async seedOrgSettings(row: OrgSettingsRow): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('organization_settings').select('id').limit(1).executeTakeFirst();
      if (existing) return false;
      const res = await trx
        .insertInto('organization_settings')
        .values(this.enc({ ...row }))
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
    });
  }

  async saveOrgSettings(row: OrgSettingsRow): Promise<void> {
    const values = this.enc({ ...row });
    const { id: _id, created_at: _created, ...update } = values;
    await this.db
      .insertInto('organization_settings')
      .values(values)
      .onConflict((oc) => oc.column('id').doUpdateSet(update))
      .execute();
  }

  async listGuardrails(workspace_id: string, offset: number, limit: number): Promise<Page<GuardrailRow>> {
    const rows = await this.db
      .selectFrom('guardrails')
      .selectAll()
      .where('workspace_id', '=', workspace_id)
      .orderBy('created_at')
      .orderBy('id')
      .offset(offset)
      .limit(limit)
      .execute();
    return { rows: this.decAll<GuardrailRow>(rows), total: await this.countWhere(this.db, 'guardrails', 'workspace_id', workspace_id) };
  }

  async getGuardrail(id: string): Promise<GuardrailRow | null> {
    return this.dec<GuardrailRow>(await this.db.selectFrom('guardrails').selectAll().where('id', '=', id).executeTakeFirst());
  }

  async insertGuardrail(row: GuardrailRow): Promise<void> {
    await this.guard(`guardrail ${row.id} already exists`, () => this.db.insertInto('guardrails').values(this.enc({ ...row })).execute());
  }

  async updateGuardrail(id: string, patch: Partial<GuardrailRow>): Promise<GuardrailRow | null> {
    const values = this.enc({ ...patch, id: undefined, created_at: undefined, workspace_id: undefined, is_workspace_default: undefined });
    if (Object.keys(values).length > 0) await this.db.updateTable('guardrails').set(values).where('id', '=', id).execute();
    return this.getGuardrail(id);
  }

  async deleteGuardrail(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('guardrail_assignments').where('guardrail_id', '=', id).execute();
      const res = await trx.deleteFrom('guardrails').where('id', '=', id).executeTakeFirst();
      return Number(res.numDeletedRows) > 0;
    });
  }

  async assignGuardrail(input: { guardrail_id: string; kind: 'key' | 'member'; ids: string[]; assigned_by: string | null; now: string }): Promise<number> {
    const col = input.kind === 'key' ? 'key_hash' : 'user_id';
    const ids = [...new Set(input.ids)];
    if (ids.length === 0) return 0;
    return this.guard('a concurrent assignment changed the same keys or members; retry', () =>
      this.db.transaction().execute(async (trx) => {
        const existing = await trx.selectFrom('guardrail_assignments').select([col, 'guardrail_id']).where(col, 'in', ids).execute();
        const already = new Set(existing.filter((r) => r.guardrail_id === input.guardrail_id).map((r) => r[col] as string));
        const fresh = ids.filter((i) => !already.has(i));
        if (fresh.length === 0) return 0;
        // A key or member holds at most one guardrail: the new assignment replaces the old one.
        await trx.deleteFrom('guardrail_assignments').where(col, 'in', fresh).execute();
        for (let i = 0; i < fresh.length; i += 100) {
          await trx
            .insertInto('guardrail_assignments')
            .values(
              fresh.slice(i, i + 100).map((id) => ({
                id: randomUUID(),
                guardrail_id: input.guardrail_id,
                key_hash: input.kind === 'key' ? id : null,
                user_id: input.kind === 'member' ? id : null,
                assigned_by: input.assigned_by,
                created_at: input.now,
              })),
            )
            .execute();
        }
        return fresh.length;
      }),
    );
  }

  async unassignGuardrail(guardrail_id: string, kind: 'key' | 'member', ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const res = await this.db
      .deleteFrom('guardrail_assignments')
      .where('guardrail_id', '=', guardrail_id)
      .where(kind === 'key' ? 'key_hash' : 'user_id', 'in', [...new Set(ids)])
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async listKeyAssignments(guardrail_id: string | null, offset: number, limit: number): Promise<Page<KeyAssignmentRow>> {
    let q = this.db.selectFrom('guardrail_assignments as a').innerJoin('api_keys as k', 'k.hash', 'a.key_hash');
    if (guardrail_id !== null) q = q.where('a.guardrail_id', '=', guardrail_id);
    const rows = await q
      .select(['a.id', 'a.guardrail_id', 'a.key_hash', 'a.user_id', 'a.assigned_by', 'a.created_at', 'k.name as key_name', 'k.label as key_label'])
      .orderBy('a.created_at')
      .orderBy('a.id')
      .offset(offset)
      .limit(limit)
      .execute();
    const total = await q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
    return { rows: this.decAll<KeyAssignmentRow>(rows), total: Number(total.n) };
  }

  async listMemberAssignments(guardrail_id: string | null, offset: number, limit: number): Promise<Page<GuardrailAssignmentRow>> {
    let q = this.db.selectFrom('guardrail_assignments').where('user_id', 'is not', null);
    if (guardrail_id !== null) q = q.where('guardrail_id', '=', guardrail_id);
    const rows = await q.selectAll().orderBy('created_at').orderBy('id').offset(offset).limit(limit).execute();
    const total = await q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
    return { rows: this.decAll<GuardrailAssignmentRow>(rows), total: Number(total.n) };
  }

  async guardrailsFor(q: { key_hash: string; user_id: string | null; workspace_id: string }) {
    const assigned = await this.db
      .selectFrom('guardrail_assignments')
      .select(['guardrail_id', 'key_hash', 'user_id'])
      .where((eb) => eb.or([eb('key_hash', '=', q.key_hash), ...(q.user_id ? [eb('user_id', '=', q.user_id)] : [])]))
      .execute();
    const ids = assigned.map((a) => a.guardrail_id as string);
    const rows = this.decAll<GuardrailRow>(
      await this.db
        .selectFrom('guardrails')
        .selectAll()
        .where((eb) =>
          eb.or([
            ...(ids.length > 0 ? [eb('id', 'in', ids)] : []),
            eb.and([eb('workspace_id', '=', q.workspace_id), eb('is_workspace_default', '=', this.bool(true))]),
          ]),
        )
        .execute(),
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const keyA = assigned.find((a) => a.key_hash === q.key_hash);
    const memberA = q.user_id ? assigned.find((a) => a.user_id === q.user_id) : undefined;
    return {
      key: (keyA && byId.get(keyA.guardrail_id as string)) || null,
      member: (memberA && byId.get(memberA.guardrail_id as string)) || null,
      workspace: rows.find((r) => r.is_workspace_default && r.workspace_id === q.workspace_id) ?? null,
    };
  }

  async anyGuardrailRateLimit(): Promise<boolean> {
    const row = await this.db
      .selectFrom('guardrails')
      .select('id')
      .where((eb) => eb.or([eb('rate_limit_requests', 'is not', null), eb('rate_limit_tokens_per_minute', 'is not', null)]))
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }
}
