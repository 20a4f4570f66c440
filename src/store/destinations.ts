/**
 * Broadcast destinations (docs/observability.md): per workspace, soft-deleted, their credentials encrypted
 * (`secrets`, services/secrets-crypto.ts) apart from the rest of their configuration, and delivery counters.
 */
import { sql, type Kysely } from 'kysely';
import type { Dialect } from './migrations/index.js';

export const DESTINATION_TYPES = ['otel-collector', 'langfuse', 'datadog', 'webhook'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

export interface DestinationRow {
  id: string;
  workspace_id: string;
  type: DestinationType;
  name: string;
  enabled: boolean;
  privacy_mode: boolean;
  sampling_rate: number;
  api_key_hashes: string[] | null;
  /** The configuration without its secret fields. */
  config: Record<string, unknown>;
  /** The secret fields (JSON), encrypted; null when there are none. */
  secrets: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  sent_count: number;
  failed_count: number;
  dropped_count: number;
  last_error: string | null;
  last_error_at: string | null;
  last_success_at: string | null;
}

/** What one round of deliveries adds to a destination's counters. */
export interface DestinationStats {
  sent: number;
  failed: number;
  dropped: number;
  last_error: string | null;
  last_error_at: string | null;
  last_success_at: string | null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;

const JSON_FIELDS = ['api_key_hashes', 'config'] as const;
const BOOL_FIELDS = ['enabled', 'privacy_mode'] as const;
const TS_FIELDS = ['created_at', 'updated_at', 'deleted_at', 'last_error_at', 'last_success_at'] as const;

function enc(dialect: Dialect, row: Partial<DestinationRow>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...row };
  for (const f of JSON_FIELDS) if (f in out) out[f] = out[f] === null ? null : JSON.stringify(out[f]);
  if (dialect === 'sqlite') for (const f of BOOL_FIELDS) if (f in out) out[f] = out[f] ? 1 : 0;
  return out;
}

function dec(r: Record<string, unknown>): DestinationRow {
  const out: Record<string, unknown> = { ...r };
  for (const f of JSON_FIELDS) if (typeof out[f] === 'string') out[f] = JSON.parse(out[f] as string);
  for (const f of BOOL_FIELDS) out[f] = out[f] === true || out[f] === 1;
  for (const f of TS_FIELDS) if (out[f] instanceof Date) out[f] = (out[f] as Date).toISOString();
  for (const f of ['sent_count', 'failed_count', 'dropped_count', 'sampling_rate']) out[f] = Number(out[f]);
  return out as unknown as DestinationRow;
}

export async function insertDestination(db: Db, dialect: Dialect, row: DestinationRow): Promise<void> {
  await db.insertInto('observability_destinations').values(enc(dialect, row)).execute();
}

export async function selectDestination(db: Db, id: string): Promise<DestinationRow | null> {
  const r = await db.selectFrom('observability_destinations').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  return r ? dec(r) : null;
}

/** A workspace's destinations (null: every workspace's), oldest first, deleted ones left out. */
export async function selectDestinations(db: Db, workspaceId: string | null): Promise<DestinationRow[]> {
  let q = db.selectFrom('observability_destinations').selectAll().where('deleted_at', 'is', null);
  if (workspaceId !== null) q = q.where('workspace_id', '=', workspaceId);
  return (await q.orderBy('created_at').orderBy('id').execute()).map(dec);
}

export async function updateDestinationRow(db: Db, dialect: Dialect, id: string, patch: Partial<DestinationRow>): Promise<DestinationRow | null> {
  await db.updateTable('observability_destinations').set(enc(dialect, patch)).where('id', '=', id).where('deleted_at', 'is', null).execute();
  return selectDestination(db, id);
}

/** Adds delivery counters and the latest error or success. */
export async function addDestinationStats(db: Db, id: string, s: DestinationStats): Promise<void> {
  const set: Record<string, unknown> = {
    sent_count: sql`sent_count + ${s.sent}`,
    failed_count: sql`failed_count + ${s.failed}`,
    dropped_count: sql`dropped_count + ${s.dropped}`,
  };
  if (s.last_error !== null) Object.assign(set, { last_error: s.last_error, last_error_at: s.last_error_at });
  if (s.last_success_at !== null) set.last_success_at = s.last_success_at;
  await db.updateTable('observability_destinations').set(set).where('id', '=', id).execute();
}
