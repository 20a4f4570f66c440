/**
 * A simulated provider Files API (OpenAI's and Anthropic's, one path), for the gateway's `POST /files?provider=…`:
 *
 *   POST /v1/files   multipart `file` (+ `purpose` for OpenAI) → OpenAI's file object, or Anthropic's when the request
 *                    has an `anthropic-version` header (Anthropic's Files API also needs `anthropic-beta:
 *                    files-api-2025-04-14`: 400 without it)
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

function upload(ctx: EndpointContext): Reply {
  const anthropic = ctx.headers['anthropic-version'] !== undefined;
  const protocol = anthropic ? anthropicProtocol : openaiProtocol;
  const auth = anthropic ? ctx.headers['x-api-key'] : /^Bearer (.+)$/.exec(String(ctx.headers.authorization ?? ''))?.[1];
  if (typeof auth !== 'string' || auth === '') return protocol.error(401, ctx, { message: 'Missing API key', type: anthropic ? 'authentication_error' : 'invalid_request_error' });
  if (anthropic && !String(ctx.headers['anthropic-beta'] ?? '').includes('files-api-2025-04-14')) return protocol.error(400, ctx, { message: 'The Files API is in beta: send anthropic-beta: files-api-2025-04-14', type: 'invalid_request_error' });
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

export const providerFilesEndpoints: Endpoint[] = [{ method: 'POST', path: '/v1/files', protocol: openaiProtocol, modelCall: false, handle: upload }];
