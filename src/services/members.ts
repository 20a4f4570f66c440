/** Organization members. A self-hosted organization has no sign-up flow: members are added by admins (API or CLI). */
import { randomBytes } from 'node:crypto';
import { notFound } from '../core/errors.js';
import { mapConflict } from './workspaces.js';
import type { MemberRole, MemberRow, Store } from '../store/types.js';

export function newMemberId(): string {
  return `user_${randomBytes(12).toString('hex')}`;
}

export class MemberService {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  list(offset: number, limit: number) {
    return this.store.listMembers(offset, limit);
  }

  async get(id: string): Promise<MemberRow> {
    const row = await this.store.getMember(id);
    if (!row) throw notFound(`Member ${id} not found`);
    return row;
  }

  async add(input: { email: string; first_name?: string; last_name?: string; role?: MemberRole }): Promise<MemberRow> {
    const row: MemberRow = {
      id: newMemberId(),
      email: input.email.toLowerCase(),
      first_name: input.first_name ?? '',
      last_name: input.last_name ?? '',
      role: input.role ?? 'org:member',
      created_at: new Date(this.now()).toISOString(),
    };
    await mapConflict(this.store.insertMember(row));
    return row;
  }

  async remove(id: string): Promise<void> {
    const deleted = await mapConflict(this.store.deleteMember(id));
    if (!deleted) throw notFound(`Member ${id} not found`);
  }
}

export function memberView(row: MemberRow) {
  return { id: row.id, email: row.email, first_name: row.first_name, last_name: row.last_name, role: row.role };
}
