/**
 * `POST /files?provider=openai|anthropic` (docs/files.md; reference: "with provider=openai|anthropic the file is
 * stored on that provider using the user's BYOK key"): the spooled upload is sent to the provider's own Files API with
 * the key's BYOK credential for that provider, and the provider's file object is answered (in its own shape). The
 * gateway keeps nothing: the id is the provider's, usable in requests that reach that provider, and not listed by
 * `GET /files`; no workspace quota applies (the bytes are the provider's to hold).
 *
 *   openai     POST {base_url}/files   multipart `purpose` + `file`, `Authorization: Bearer <key>`
 *   anthropic  POST {base_url}/files   multipart `file`, `x-api-key`, `anthropic-version: 2023-06-01`,
 *                                      `anthropic-beta: files-api-2025-04-14`
 */
import { openAsBlob } from 'node:fs';
import { badRequest, HttpError } from '../../core/errors.js';
import type { KeyRow } from '../../store/types.js';
import type { ByokService } from '../byok.js';
import type { CatalogService } from '../catalog.js';
import { MAX_FILE_BYTES, type Spooled } from './index.js';

export type FilesProvider = 'openai' | 'anthropic';

export async function uploadToProvider(
  deps: { catalog: CatalogService; byok: ByokService; fetch?: typeof fetch },
  key: KeyRow,
  provider: FilesProvider,
  s: Spooled,
  filename: string,
  purpose: string | null,
): Promise<Record<string, unknown>> {
  if (s.truncated) throw new HttpError(413, `file: larger than the ${MAX_FILE_BYTES / 1024 / 1024} MB limit`, { field: 'file' });
  if (s.size === 0) throw badRequest('file: the file is empty', { field: 'file' });
  const def = deps.catalog.catalog.providers.find((p) => p.slug === provider);
  if (!def || def.protocol !== provider) throw badRequest(`provider: no ${provider} provider is configured on this gateway`, { field: 'provider' });
  const secret = deps.byok.secretFor(key, provider);
  if (!secret) throw badRequest(`provider: files are stored on ${def.name} with your own ${def.name} key: add one with POST /byok (none is usable by this key)`, { field: 'provider', error_type: 'byok_required' });
  const form = new FormData();
  if (provider === 'openai') form.append('purpose', purpose ?? 'user_data');
  form.append('file', await openAsBlob(s.path), filename);
  const headers: Record<string, string> =
    provider === 'openai' ? { authorization: `Bearer ${secret}` } : { 'x-api-key': secret, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'files-api-2025-04-14' };
  let res: Response;
  try {
    res = await (deps.fetch ?? fetch)(`${def.baseUrl.replace(/\/+$/, '')}/files`, { method: 'POST', headers, body: form, signal: AbortSignal.timeout(300_000) });
  } catch (err) {
    throw new HttpError(502, `${def.name}'s Files API could not be reached (${(err as Error).message})`, { error_type: 'provider_unavailable', provider_name: def.name });
  }
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // answered below
  }
  if (!res.ok || typeof body !== 'object' || body === null || typeof (body as { id?: unknown }).id !== 'string') {
    const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
    // The provider's refusal of the client's file (4xx but its key) is the client's; anything else is a bad gateway.
    const status = res.status >= 400 && res.status < 500 && res.status !== 401 && res.status !== 403 && res.status !== 429 ? res.status : 502;
    throw new HttpError(status, `${def.name}'s Files API answered ${res.status}${typeof message === 'string' ? `: ${message.slice(0, 500)}` : ''}`, { error_type: status === 502 ? 'provider_unavailable' : 'invalid_request', provider_name: def.name, provider_code: res.status });
  }
  return { _shape: provider, ...(body as Record<string, unknown>) };
}
