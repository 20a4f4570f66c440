/** The organization, its members, workspaces and API keys (store/sql/org.ts). */

import type { Page } from './common.js';

export type KeyKind = 'management' | 'inference';
export type LimitReset = 'daily' | 'weekly' | 'monthly';
export type MemberRole = 'org:admin' | 'org:member';

export interface OrganizationRow {
  id: string;
  name: string;
  created_at: string;
}

export interface MemberRow {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  role: MemberRole;
  created_at: string;
}

/** An organization member's membership of a (non-default) workspace; `role` is the member's organization role. */
export interface WorkspaceMemberRow {
  id: string;
  workspace_id: string;
  user_id: string;
  role: 'admin' | 'member';
  created_at: string;
}

export interface WorkspaceRow {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  default_text_model: string | null;
  default_image_model: string | null;
  default_provider_sort: string | null;
  io_logging_api_key_ids: number[] | null;
  io_logging_sampling_rate: number;
  is_data_discount_logging_enabled: boolean;
  is_observability_broadcast_enabled: boolean;
  is_observability_io_logging_enabled: boolean;
  is_default: boolean;
  created_by: string;
  created_at: string;
  updated_at: string | null;
}

export interface KeyRow {
  hash: string;
  name: string;
  label: string;
  kind: KeyKind;
  disabled: boolean;
  limit: number | null;
  limit_reset: LimitReset | null;
  include_byok_in_limit: boolean;
  expires_at: string | null;
  creator_user_id: string | null;
  workspace_id: string;
  created_at: string;
  updated_at: string | null;
  /** Rate limit: at most this many requests per window (null: none). */
  rate_limit_requests: number | null;
  /** Its window in seconds (set together with `rate_limit_requests`). */
  rate_limit_interval_s: number | null;
  /** Token rate limit: at most this many tokens (prompt + completion) per clock minute (null or absent: none). */
  rate_limit_tokens_per_minute?: number | null;
}

export interface BootstrapInput {
  organization: OrganizationRow;
  member: MemberRow;
  workspace: WorkspaceRow;
  key: KeyRow;
}

/** The organization, members, workspaces and keys. */
export interface OrgStore {
  getOrganization(): Promise<OrganizationRow | null>;
  /** Creates organization, owner, default workspace and first management key in one transaction. False when already bootstrapped. */
  bootstrap(input: BootstrapInput): Promise<boolean>;

  listMembers(offset: number, limit: number): Promise<Page<MemberRow>>;
  getMember(id: string): Promise<MemberRow | null>;
  insertMember(row: MemberRow): Promise<void>;
  /** Refuses (ConflictError) to remove the last admin or a member who still owns active keys. */
  deleteMember(id: string): Promise<boolean>;
  /** Members of a workspace (explicit memberships), oldest first. */
  listWorkspaceMembers(workspace_id: string, offset: number, limit: number): Promise<Page<WorkspaceMemberRow>>;
  isWorkspaceMember(workspace_id: string, user_id: string): Promise<boolean>;
  /** Adds the rows whose member is not in the workspace yet, in one transaction; returns those added. */
  addWorkspaceMembers(rows: WorkspaceMemberRow[]): Promise<WorkspaceMemberRow[]>;
  /**
   * Removes these members from the workspace in one transaction; refuses (ConflictError, nothing removed) when any of
   * them owns an active key in it. Returns how many were members.
   */
  removeWorkspaceMembers(workspace_id: string, user_ids: string[]): Promise<number>;

  /** Stores a workspace and its first members (its creator) in one transaction. */
  insertWorkspace(row: WorkspaceRow, members?: WorkspaceMemberRow[]): Promise<void>;
  getWorkspace(idOrSlug: string): Promise<WorkspaceRow | null>;
  getDefaultWorkspace(): Promise<WorkspaceRow | null>;
  listWorkspaces(offset: number, limit: number): Promise<Page<WorkspaceRow>>;
  updateWorkspace(id: string, patch: Partial<WorkspaceRow>): Promise<WorkspaceRow | null>;
  /** Refuses (ConflictError) while the workspace has active keys. Removes its presets in the same transaction. */
  deleteWorkspace(id: string): Promise<boolean>;

  insertKey(row: KeyRow): Promise<void>;
  getKey(hash: string): Promise<KeyRow | null>;
  listKeys(q: { workspace_id: string; include_disabled: boolean; offset: number; limit: number }): Promise<KeyRow[]>;
  updateKey(hash: string, patch: Partial<KeyRow>): Promise<KeyRow | null>;
  deleteKey(hash: string): Promise<boolean>;
  countActiveManagementKeys(): Promise<number>;
  /** Hashes of the keys created by a member, or of a workspace. */
  listKeyHashes(q: { creator_user_id?: string; workspace_id?: string }): Promise<string[]>;
}
