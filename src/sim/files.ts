/**
 * A simulated provider Files API (OpenAI's and Anthropic's, one path), for the gateway's `POST /files?provider=…`:
 *
 *   POST /v1/files   multipart `file` (+ `purpose` for OpenAI) → OpenAI's file object, or Anthropic's when the request
 *                    has an `anthropic-version` header (Anthropic's Files API also needs `anthropic-beta:
 *                    files-api-2025-04-14`: 400 without it)
 *
 *   DELETE /v1/files/{id}  → OpenAI's `{id, object: "file", deleted: true}` or Anthropic's `{id, type: "file_deleted"}`;
 *                    404 when no such file was stored with this key (a file is its account's: another key's is unseen)
 *
 * Both need a key (OpenAI: `Authorization: Bearer`, Anthropic: `x-api-key`; 401 without). The files are kept by the
 * simulator (SIM_FILES, exported for tests) with the key that stored them.
 */
import { anthropicProtocol } from './anthropic.js';
import { openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext, Reply } from './protocol.js';
import type { SimUpload } from './stt.js';

export const SIM_FILES = new Map<string, { provider: string; key: string; filename: string; data: Buffer; purpose: string | null }>();

const json = (status: number, body: unknown): Reply => ({ kind: 'json', status, body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, chunks: 1 });

/** The caller's protocol and key, or the error to answer. */
function caller(ctx: EndpointContext): { anthropic: boolean; protocol: typeof openaiProtocol; auth: string } | Reply {
  const anthropic = ctx.headers['anthropic-version'] !== undefined;
  const protocol = anthropic ? anthropicProtocol : openaiProtocol;
  const auth = anthropic ? ctx.headers['x-api-key'] : /^Bearer (.+)$/.exec(String(ctx.headers.authorization ?? ''))?.[1];
  if (typeof auth !== 'string' || auth === '') return protocol.error(401, ctx, { message: 'Missing API key', type: anthropic ? 'authentication_error' : 'invalid_request_error' });
  if (anthropic && !String(ctx.headers['anthropic-beta'] ?? '').includes('files-api-2025-04-14')) return protocol.error(400, ctx, { message: 'The Files API is in beta: send anthropic-beta: files-api-2025-04-14', type: 'invalid_request_error' });
  return { anthropic, protocol, auth };
}

function remove(ctx: EndpointContext): Reply {
  const c = caller(ctx);
  if ('kind' in c) return c;
  const id = decodeURIComponent(ctx.path.slice('/v1/files/'.length));
  const f = SIM_FILES.get(id);
  if (!f || f.key !== c.auth || f.provider !== ctx.provider) return c.protocol.error(404, ctx, { message: `No such File object: ${id}`, type: c.anthropic ? 'not_found_error' : 'invalid_request_error' });
  SIM_FILES.delete(id);
  return c.anthropic ? json(200, { id, type: 'file_deleted' }) : json(200, { id, object: 'file', deleted: true });
}

function upload(ctx: EndpointContext): Reply {
  const c = caller(ctx);
  if ('kind' in c) return c;
  const { anthropic, protocol, auth } = c;
  const b = ctx.body as Record<string, unknown> | null;
  const file = b?.file as SimUpload | undefined;
  if (!file || !Buffer.isBuffer(file.data) || file.data.length === 0) return protocol.error(400, ctx, { message: "Missing required parameter: 'file'.", type: 'invalid_request_error' });
  const purpose = typeof b?.purpose === 'string' ? b.purpose : null;
  if (!anthropic && !purpose) return protocol.error(400, ctx, { message: "Missing required parameter: 'purpose'.", type: 'invalid_request_error' });
  const id = anthropic ? `file_sim${ctx.rid}` : `file-sim${ctx.rid}`;
  SIM_FILES.set(id, { provider: ctx.provider, key: auth, filename: file.filename, data: file.data, purpose });
  const created = Math.floor(Date.now() / 1000);
  return anthropic
    ? json(200, { id, type: 'file', filename: file.filename, mime_type: file.contentType || 'application/octet-stream', size_bytes: file.data.length, created_at: new Date(created * 1000).toISOString(), downloadable: false })
    : json(200, { id, object: 'file', bytes: file.data.length, created_at: created, filename: file.filename, purpose, status: 'processed', expires_at: null, status_details: null });
}

export const providerFilesEndpoints: Endpoint[] = [
  { method: 'POST', path: '/v1/files', protocol: openaiProtocol, modelCall: false, handle: upload },
  { method: 'DELETE', path: /^\/v1\/files\/[^/]+$/, protocol: openaiProtocol, modelCall: false, handle: remove },
];
