/**
 * Files on a provider's own Files API (docs/files.md; reference: "with provider=openai|anthropic the file is stored on
 * that provider using the user's BYOK key"). `POST /files?provider=…` sends the spooled upload there with the key's
 * BYOK credential for that provider and answers the provider's file object (in its own shape); the gateway records
 * it (./index.ts: provider, the provider's file id, the credential) so that `GET /files` lists it and deleting it —
 * or its workspace — deletes it on the provider with the same credential. No workspace quota applies (the bytes are
 * the provider's to hold).
 *
 *   openai     POST {base_url}/files   multipart `purpose` + `file`, `Authorization: Bearer <key>`
 *              DELETE {base_url}/files/{id}
 *   anthropic  POST {base_url}/files   multipart `file`, `x-api-key`, `anthropic-version: 2023-06-01`,
 *                                      `anthropic-beta: files-api-2025-04-14`
 *              DELETE {base_url}/files/{id}   (same headers)
 */
import { openAsBlob } from 'node:fs';
import { badRequest, HttpError } from '../../core/errors.js';
import type { ProviderDef } from '../../core/catalog-types.js';
import { filesApiHeaders } from '../../providers/registry.js';
import type { KeyRow } from '../../store/types.js';
import type { ByokService } from '../byok.js';
import type { CatalogService } from '../catalog.js';
import { MAX_FILE_BYTES, type Spooled } from './index.js';

export type FilesProvider = 'openai' | 'anthropic';

interface Deps {
  catalog: CatalogService;
  byok: ByokService;
  fetch?: typeof fetch;
}

/** The catalog's provider of that protocol, or a 400 naming `provider`. */
function providerDef(deps: Deps, provider: FilesProvider): ProviderDef {
  const def = deps.catalog.catalog.providers.find((p) => p.slug === provider);
  if (!def || def.protocol !== provider) throw badRequest(`provider: no ${provider} provider is configured on this gateway`, { field: 'provider' });
  return def;
}

async function call(deps: Deps, def: ProviderDef, path: string, init: RequestInit): Promise<{ res: Response; body: unknown }> {
  let res: Response;
  try {
    res = await (deps.fetch ?? fetch)(`${def.baseUrl.replace(/\/+$/, '')}/${path}`, { ...init, signal: AbortSignal.timeout(300_000) });
  } catch (err) {
    throw new HttpError(502, `${def.name}'s Files API could not be reached (${(err as Error).message})`, { error_type: 'provider_unavailable', provider_name: def.name });
  }
  const text = await res.text();
  try {
    return { res, body: JSON.parse(text) };
  } catch {
    return { res, body: null };
  }
}

/** The provider's refusal of the client's file (4xx but its key) is the client's; anything else is a bad gateway. */
function providerError(def: ProviderDef, res: Response, body: unknown): HttpError {
  const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
  const status = res.status >= 400 && res.status < 500 && res.status !== 401 && res.status !== 403 && res.status !== 429 ? res.status : 502;
  return new HttpError(status, `${def.name}'s Files API answered ${res.status}${typeof message === 'string' ? `: ${message.slice(0, 500)}` : ''}`, { error_type: status === 502 ? 'provider_unavailable' : 'invalid_request', provider_name: def.name, provider_code: res.status });
}

/** Sends a spooled upload to the provider: its file object (with `_shape`) and the BYOK credential that stored it. */
export async function uploadToProvider(
  deps: Deps,
  key: KeyRow,
  provider: FilesProvider,
  s: Spooled,
  filename: string,
  purpose: string | null,
): Promise<{ body: Record<string, unknown> & { id: string }; credentialId: string }> {
  if (s.truncated) throw new HttpError(413, `file: larger than the ${MAX_FILE_BYTES / 1024 / 1024} MB limit`, { field: 'file' });
  if (s.size === 0) throw badRequest('file: the file is empty', { field: 'file' });
  const def = providerDef(deps, provider);
  const cred = deps.byok.credentialFor(key, provider);
  if (!cred) throw badRequest(`provider: files are stored on ${def.name} with your own ${def.name} key: add one with POST /byok (none is usable by this key)`, { field: 'provider', error_type: 'byok_required' });
  const form = new FormData();
  if (provider === 'openai') form.append('purpose', purpose ?? 'user_data');
  form.append('file', await openAsBlob(s.path), filename);
  const { res, body } = await call(deps, def, 'files', { method: 'POST', headers: filesApiHeaders(provider, cred.secret), body: form });
  if (!res.ok || typeof body !== 'object' || body === null || typeof (body as { id?: unknown }).id !== 'string') throw providerError(def, res, body);
  return { body: { _shape: provider, ...(body as Record<string, unknown> & { id: string }) }, credentialId: cred.id };
}

/**
 * Deletes a file on the provider with the credential that stored it: `deleted`, or `gone` when the provider no longer
 * has it (404) or the credential was deleted (nothing can reach the file any more). A refusal or an unreachable
 * provider is an HttpError (502, or the provider's 4xx).
 */
export async function deleteOnProvider(deps: Deps, provider: FilesProvider, fileId: string, credentialId: string): Promise<'deleted' | 'gone'> {
  const secret = deps.byok.secretById(credentialId);
  if (secret === null) return 'gone';
  const def = providerDef(deps, provider);
  const { res, body } = await call(deps, def, `files/${encodeURIComponent(fileId)}`, { method: 'DELETE', headers: filesApiHeaders(provider, secret) });
  if (res.status === 404) return 'gone';
  if (!res.ok) throw providerError(def, res, body);
  return 'deleted';
}
