/**
 * Broadcast destinations (`/observability/destinations`, docs/observability.md): per workspace, management keys
 * only. Each type's configuration is checked here (400 naming `config.<field>`); its credentials (API keys, secret
 * keys, headers, the webhook signing secret) are encrypted at rest (services/secrets-crypto.ts) and never returned —
 * views show them masked, and a masked value sent back in a PATCH keeps the stored one.
 */
import { randomUUID } from 'node:crypto';
import { checkOutboundUrl } from '../../core/addresses.js';
import { badRequest, HttpError, notFound } from '../../core/errors.js';
import { DESTINATION_TYPES, type DestinationRow, type DestinationType } from '../../store/destinations.js';
import type { Store } from '../../store/types.js';
import { decryptSecret, encryptionAvailable, encryptSecret } from '../secrets-crypto.js';
import type { WorkspaceService } from '../workspaces.js';

export const MASK = '********';
const MAX_PER_TYPE = 5;

/** The fields of each type's configuration, and which of them are secret. */
const FIELDS: Record<DestinationType, { required: string[]; optional: string[]; secret: string[]; urls: string[]; defaults: Record<string, string> }> = {
  'otel-collector': { required: ['endpoint'], optional: ['headers'], secret: ['headers'], urls: ['endpoint'], defaults: {} },
  langfuse: { required: ['publicKey', 'secretKey'], optional: ['baseUrl', 'headers'], secret: ['secretKey', 'headers'], urls: ['baseUrl'], defaults: { baseUrl: 'https://us.cloud.langfuse.com' } },
  datadog: { required: ['apiKey', 'mlApp'], optional: ['url', 'headers'], secret: ['apiKey', 'headers'], urls: ['url'], defaults: { url: 'https://api.us5.datadoghq.com' } },
  webhook: { required: ['url'], optional: ['method', 'headers', 'secret'], secret: ['headers', 'secret'], urls: ['url'], defaults: { method: 'POST' } },
};

export interface DestinationInput {
  type: DestinationType;
  name: string;
  config: Record<string, unknown>;
  enabled?: boolean;
  privacy_mode?: boolean;
  sampling_rate?: number;
  api_key_hashes?: string[] | null;
  workspace_id?: string;
}

export type DestinationPatch = Partial<Omit<DestinationInput, 'type' | 'workspace_id'>>;

export interface DestinationOptions {
  /** Loopback destination URLs (http or https) accepted: tests and local development only. */
  allowLoopback: boolean;
  /** GATEWAY_WEBHOOK_SECRET: signs webhooks whose destination has no `secret` of its own. */
  webhookSecret: string | null;
}

/** The full configuration of a destination (its secrets decrypted): for delivery only, never for a reply. */
export function fullConfig(row: DestinationRow): Record<string, unknown> {
  return { ...row.config, ...(row.secrets ? (JSON.parse(decryptSecret(row.secrets)) as Record<string, unknown>) : {}) };
}

export class DestinationService {
  constructor(
    private readonly deps: { store: Store; workspaces: WorkspaceService; now: () => number; options: DestinationOptions; changed: () => void },
  ) {}

  async list(workspace: string | undefined, defaultWorkspace: string): Promise<DestinationRow[]> {
    const ws = await this.deps.workspaces.get(workspace ?? defaultWorkspace);
    return this.deps.store.listDestinations(ws.id);
  }

  async get(id: string): Promise<DestinationRow> {
    const row = await this.deps.store.getDestination(id);
    if (!row) throw notFound(`Observability destination ${id} not found`);
    return row;
  }

  async create(input: DestinationInput, defaultWorkspace: string): Promise<DestinationRow> {
    const ws = await this.deps.workspaces.get(input.workspace_id ?? defaultWorkspace);
    const existing = await this.deps.store.listDestinations(ws.id);
    if (existing.filter((d) => d.type === input.type).length >= MAX_PER_TYPE) throw badRequest(`a workspace has at most ${MAX_PER_TYPE} destinations of type ${input.type}`, { field: 'type' });
    const config = this.checkConfig(input.type, { ...FIELDS[input.type].defaults, ...input.config });
    const now = new Date(this.deps.now()).toISOString();
    const row: DestinationRow = {
      id: randomUUID(),
      workspace_id: ws.id,
      type: input.type,
      name: input.name,
      enabled: input.enabled ?? true,
      privacy_mode: input.privacy_mode ?? false,
      sampling_rate: input.sampling_rate ?? 1,
      api_key_hashes: input.api_key_hashes ?? null,
      ...split(input.type, config),
      created_at: now,
      updated_at: now,
      deleted_at: null,
      sent_count: 0,
      failed_count: 0,
      dropped_count: 0,
      last_error: null,
      last_error_at: null,
      last_success_at: null,
    };
    await this.deps.store.insertDestination(row);
    this.deps.changed();
    return row;
  }

  async update(id: string, patch: DestinationPatch): Promise<DestinationRow> {
    const row = await this.get(id);
    const out: Partial<DestinationRow> = { updated_at: new Date(this.deps.now()).toISOString() };
    for (const k of ['name', 'enabled', 'privacy_mode', 'sampling_rate', 'api_key_hashes'] as const) if (patch[k] !== undefined) (out as Record<string, unknown>)[k] = patch[k];
    if (patch.config) {
      const current = fullConfig(row);
      const merged: Record<string, unknown> = { ...current };
      for (const [k, v] of Object.entries(patch.config)) {
        if (v === MASK) continue; // a masked value sent back: the stored one stays
        if (k === 'headers' && v && typeof v === 'object' && !Array.isArray(v)) {
          const old = (current.headers ?? {}) as Record<string, string>;
          merged.headers = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([h, hv]) => [h, hv === MASK ? old[h] : hv]));
        } else merged[k] = v;
      }
      Object.assign(out, split(row.type, this.checkConfig(row.type, merged)));
    }
    const updated = await this.deps.store.updateDestination(id, out);
    if (!updated) throw notFound(`Observability destination ${id} not found`);
    this.deps.changed();
    return updated;
  }

  /** Soft delete (as the hosted API). */
  async remove(id: string): Promise<void> {
    await this.get(id);
    await this.deps.store.updateDestination(id, { deleted_at: new Date(this.deps.now()).toISOString() });
    this.deps.changed();
  }

  /** A type's configuration, checked (400 naming `config.<field>`); URLs through the outbound guard (SSRF). */
  private checkConfig(type: DestinationType, config: Record<string, unknown>): Record<string, unknown> {
    const f = FIELDS[type];
    const known = new Set([...f.required, ...f.optional]);
    for (const k of Object.keys(config)) if (!known.has(k)) throw badRequest(`config.${k} is not a ${type} setting (known: ${[...known].join(', ')})`, { field: `config.${k}` });
    for (const k of f.required) if (config[k] === undefined || config[k] === null || config[k] === '') throw badRequest(`config.${k} is required for a ${type} destination`, { field: `config.${k}` });
    for (const [k, v] of Object.entries(config)) {
      if (k === 'headers') {
        if (typeof v !== 'object' || v === null || Array.isArray(v) || Object.values(v).some((h) => typeof h !== 'string' || /[\r\n]/.test(h))) {
          throw badRequest('config.headers must be an object of header names to string values', { field: 'config.headers' });
        }
        for (const h of Object.keys(v)) if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/.test(h)) throw badRequest(`config.headers has an invalid header name: ${h}`, { field: 'config.headers' });
      } else if (typeof v !== 'string' || v.length > 2048) throw badRequest(`config.${k} must be a string (at most 2048 characters)`, { field: `config.${k}` });
    }
    for (const k of f.urls) if (typeof config[k] === 'string') config[k] = checkOutboundUrl(config[k] as string, this.deps.options.allowLoopback, `config.${k}`).replace(/\/+$/, '');
    if (type === 'webhook') {
      if (config.method !== 'POST' && config.method !== 'PUT') throw badRequest('config.method must be POST or PUT', { field: 'config.method' });
      if (config.secret !== undefined && (config.secret as string).length < 16) throw badRequest('config.secret must be at least 16 characters', { field: 'config.secret' });
      if (config.secret === undefined && !this.deps.options.webhookSecret) {
        throw badRequest('config.secret is required (at least 16 characters) to sign the webhook, unless the gateway has GATEWAY_WEBHOOK_SECRET', { field: 'config.secret' });
      }
    }
    if (!encryptionAvailable() && f.secret.some((k) => config[k] !== undefined)) {
      throw new HttpError(503, 'Destinations with credentials need GATEWAY_ENCRYPTION_KEY on the gateway (their credentials are stored encrypted)');
    }
    return config;
  }
}

/** The stored form: the public fields in `config`, the secret ones encrypted in `secrets`. */
function split(type: DestinationType, config: Record<string, unknown>): { config: Record<string, unknown>; secrets: string | null } {
  const pub: Record<string, unknown> = {};
  const sec: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) (FIELDS[type].secret.includes(k) ? sec : pub)[k] = v;
  return { config: pub, secrets: Object.keys(sec).length > 0 ? encryptSecret(JSON.stringify(sec)) : null };
}

/** A destination as the API shows it: secrets masked, delivery status added (our extension). */
export function destinationView(row: DestinationRow) {
  const masked: Record<string, unknown> = { ...row.config };
  for (const k of FIELDS[row.type].secret) {
    if (k === 'headers') {
      // Header names are shown, their values never (they are usually credentials).
      const names = row.secrets ? Object.keys(((JSON.parse(decryptSecretSafe(row.secrets)) as Record<string, unknown>).headers ?? {}) as object) : [];
      if (names.length > 0) masked.headers = Object.fromEntries(names.map((n) => [n, MASK]));
    } else if (row.secrets) masked[k] = MASK;
  }
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    type: row.type,
    name: row.name,
    enabled: row.enabled,
    privacy_mode: row.privacy_mode,
    sampling_rate: row.sampling_rate,
    api_key_hashes: row.api_key_hashes,
    broadcast_generation_cost: true,
    broadcast_generation_identity: false,
    broadcast_generation_request_context: false,
    filter_rules: null,
    config: masked,
    created_at: row.created_at,
    updated_at: row.updated_at,
    delivery: {
      sent: row.sent_count,
      failed: row.failed_count,
      dropped: row.dropped_count,
      last_error: row.last_error,
      last_error_at: row.last_error_at,
      last_success_at: row.last_success_at,
    },
  };
}

/** Secrets that cannot be decrypted (another key) show no header names rather than failing the listing. */
function decryptSecretSafe(blob: string): string {
  try {
    return decryptSecret(blob);
  } catch {
    return '{}';
  }
}

export { DESTINATION_TYPES };
