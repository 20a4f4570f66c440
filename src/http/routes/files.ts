/**
 * Files (docs/files.md): POST /files (multipart `file`, streamed to disk as it arrives), GET /files, GET and DELETE
 * /files/{file_id}, GET /files/{file_id}/content. Workspace-scoped: an inference key's own workspace; a management
 * key's `workspace_id` (the default workspace when omitted). The reply's shape is negotiated: OpenAI's for OpenAI
 * clients (their User-Agent, or a `purpose` on upload), Anthropic's for Anthropic clients (`anthropic-version`), the
 * gateway's otherwise.
 */
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, forbidden } from '../../core/errors.js';
import { isProviderStored, type FileRow } from '../../store/files.js';
import { MAX_FILE_BYTES, type Spooled } from '../../services/files/index.js';
import { uploadToProvider } from '../../services/files/provider-upload.js';
import type { Services } from '../../services/index.js';
import { errors } from '../schemas/common.js';
import { FileDeleted, FileList, FileListQuery, FileObject, FileParams, FileScopeQuery, FileUploadBody, type FileShape } from '../schemas/files.js';

type Scope = Static<typeof FileScopeQuery>;

/** The shape a client expects (see the file's comment). */
function shapeOf(req: FastifyRequest, purpose?: unknown): FileShape {
  const ua = String(req.headers['user-agent'] ?? '');
  if (req.headers['anthropic-version'] !== undefined || /^Anthropic\//.test(ua)) return 'anthropic';
  if (purpose !== undefined || /^OpenAI\//.test(ua)) return 'openai';
  return 'gateway';
}

export function fileView(f: FileRow, shape: FileShape): Record<string, unknown> {
  // A file on a provider's Files API names it (and, in the gateway shape, the BYOK credential that stored it).
  const onProvider = isProviderStored(f) ? { provider: f.storage, ...(shape === 'gateway' ? { byok_credential_id: f.storage_key } : {}) } : {};
  if (shape === 'openai') {
    return { _shape: 'openai', id: f.id, object: 'file', bytes: f.size_bytes, created_at: Math.floor(Date.parse(f.created_at) / 1000), filename: f.filename, purpose: f.purpose ?? 'user_data', status: 'processed', ...onProvider };
  }
  return { _shape: shape, id: f.id, type: 'file', filename: f.filename, mime_type: f.mime_type, size_bytes: f.size_bytes, created_at: f.created_at, downloadable: !isProviderStored(f), ...onProvider };
}

/** The workspace of a request: an inference key's own (another one → 403); a management key's choice or the default. */
async function workspaceOf(svc: Services, req: FastifyRequest, q: Scope): Promise<string> {
  if (q.provider !== undefined) throw badRequest(`provider: only uploads take it (POST /files?provider=${q.provider}); files stored on a provider are listed, shown and deleted by their id like the others`, { field: 'provider' });
  if (req.key.kind === 'inference') {
    if (q.workspace_id !== undefined) {
      const ws = await svc.workspaces.resolve(q.workspace_id);
      if (ws.id !== req.key.workspace_id) throw forbidden("workspace_id: an inference key reaches only its own workspace's files", { field: 'workspace_id' });
    }
    return req.key.workspace_id;
  }
  return (await svc.workspaces.resolve(q.workspace_id)).id;
}

const encodeCursor = (after: string) => Buffer.from(JSON.stringify({ after })).toString('base64url');
function decodeCursor(cursor: string): string {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof v.after === 'string' && v.after.length <= 200) return v.after;
  } catch {
    // answered below
  }
  throw badRequest('cursor: not a cursor from a previous page', { field: 'cursor' });
}

/** multipart/form-data: the `file` part streamed to a spool file (services/files), text fields kept (at most 10). */
function multipartParser(svc: Services) {
  return (request: FastifyRequest, payload: NodeJS.ReadableStream, done: (err: Error | null, body?: unknown) => void): void => {
    let bb: BusboyInstance;
    try {
      // Busboy's own file limit is one byte past the maximum: the spooler sees the excess and refuses with 413.
      bb = new Busboy({ headers: request.headers as never, limits: { fileSize: MAX_FILE_BYTES + 1, files: 1, fields: 10, fieldSize: 4 * 1024 } });
    } catch (err) {
      return done(badRequest(`Malformed multipart body: ${(err as Error).message}`));
    }
    const body: Record<string, unknown> = {};
    const pending: Array<Promise<unknown>> = [];
    let failed: Error | null = null;
    const fail = (e: Error) => void (failed ??= e);
    bb.on('field', (name, value) => {
      if (name !== 'file') body[name] = value;
    });
    bb.on('file', (name, stream, filename) => {
      if (name !== 'file') return void stream.resume();
      pending.push(
        svc.files.spool(stream).then(
          (s) => (body.file = { ...s, filename: filename ?? null }),
          (e: Error) => fail(badRequest(`file: the upload failed: ${e.message}`, { field: 'file' })),
        ),
      );
    });
    bb.on('filesLimit', () => fail(badRequest('Only one file may be uploaded (file)', { field: 'file' })));
    bb.on('error', (err) => fail(badRequest(`Malformed multipart body: ${(err as Error).message}`)));
    bb.on('finish', () => {
      void Promise.all(pending).then(async () => {
        if (!failed) return done(null, body);
        const f = body.file as Spooled | undefined;
        if (f) await svc.files.discard(f);
        done(failed);
      });
    });
    payload.pipe(bb);
  };
}

export default async function fileRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Files'];
  await app.register(async (scope) => {
    scope.addContentTypeParser('multipart/form-data', multipartParser(svc));
    // A spooled upload the handler did not store (refused by validation): removed with the response.
    scope.addHook('onResponse', async (req) => {
      const f = (req.body as { file?: Partial<Spooled> } | undefined)?.file;
      if (f && typeof f.path === 'string' && typeof f.sha256 === 'string') await svc.files.discard(f as Spooled);
    });
    scope.post<{ Body: Static<typeof FileUploadBody> & { file: Spooled & { filename: string | null } }; Querystring: Scope }>(
      '/files',
      {
        config: { auth: 'any' },
        bodyLimit: MAX_FILE_BYTES + 1024 * 1024,
        schema: {
          tags,
          summary: 'Upload a file (multipart `file`, at most 100 MB; type sniffed from the content; OpenAI SDK `files.create` compatible)',
          querystring: FileScopeQuery,
          body: { content: { 'multipart/form-data': { schema: FileUploadBody } } },
          response: { 200: FileObject, ...errors(400, 401, 403, 404, 413, 415, 500) },
        },
      },
      async (req) => {
        const file = req.body.file;
        if (typeof file?.path !== 'string') throw badRequest('file must be an uploaded file part', { field: 'file' });
        // provider=openai|anthropic: stored on the provider's own Files API with the key's BYOK credential, and recorded.
        if (req.query.provider !== undefined) {
          if (req.key.kind !== 'inference') throw badRequest('provider: uploads to a provider use the BYOK credentials of an inference key', { field: 'provider' });
          const up = await uploadToProvider(svc, req.key, req.query.provider, file, file.filename ?? 'file', req.body.purpose ?? null);
          await svc.files.recordProviderFile(req.key.workspace_id, req.query.provider, up.body.id, up.credentialId, file, file.filename ?? 'file', req.body.purpose ?? null);
          return up.body;
        }
        const ws = await workspaceOf(svc, req, req.query);
        const row = await svc.files.create(ws, file, file.filename, req.body.purpose ?? null);
        return fileView(row, shapeOf(req, req.body.purpose));
      },
    );
  });

  app.get<{ Querystring: Static<typeof FileListQuery> }>(
    '/files',
    {
      config: { auth: 'any' },
      schema: { tags, summary: "List the workspace's files, oldest first (cursor pagination)", querystring: FileListQuery, response: { 200: FileList, ...errors(400, 401, 403, 404, 500) } },
    },
    async (req) => {
      const q = req.query;
      if (q.before_id !== undefined) throw badRequest('before_id: listing backwards is not supported; use after_id or cursor', { field: 'before_id' });
      if (q.order === 'desc') throw badRequest('order: only asc is supported', { field: 'order' });
      const ws = await workspaceOf(svc, req, q);
      const after = q.cursor !== undefined ? decodeCursor(q.cursor) : (q.after ?? q.after_id ?? null);
      const { rows, hasMore } = await svc.files.list(ws, after, q.limit);
      const shape = shapeOf(req);
      const ids = { first_id: rows[0]?.id ?? null, last_id: rows.at(-1)?.id ?? null, has_more: hasMore };
      const data = rows.map((r) => fileView(r, shape));
      if (shape === 'openai') return { _shape: shape, object: 'list', data, ...ids };
      if (shape === 'anthropic') return { _shape: shape, data, ...ids };
      return { _shape: shape, data, ...ids, cursor: hasMore && ids.last_id ? encodeCursor(ids.last_id) : null };
    },
  );

  app.get<{ Params: Static<typeof FileParams>; Querystring: Scope }>(
    '/files/:file_id',
    {
      config: { auth: 'any' },
      schema: { tags, summary: "A file's metadata", params: FileParams, querystring: FileScopeQuery, response: { 200: FileObject, ...errors(400, 401, 403, 404, 500) } },
    },
    async (req) => fileView(await svc.files.get(await workspaceOf(svc, req, req.query), req.params.file_id), shapeOf(req)),
  );

  app.delete<{ Params: Static<typeof FileParams>; Querystring: Scope }>(
    '/files/:file_id',
    {
      config: { auth: 'any' },
      schema: { tags, summary: 'Delete a file (irreversible)', params: FileParams, querystring: FileScopeQuery, response: { 200: FileDeleted, ...errors(400, 401, 403, 404, 500) } },
    },
    async (req) => {
      const id = req.params.file_id;
      const r = await svc.files.delete(await workspaceOf(svc, req, req.query), id);
      const shape = shapeOf(req);
      const onProvider = r.provider === null ? {} : { provider_deleted: r.provider === 'deleted' };
      return shape === 'openai' ? { _shape: shape, id, object: 'file', deleted: true, ...onProvider } : { _shape: shape, id, type: 'file_deleted', ...onProvider };
    },
  );

  app.get<{ Params: Static<typeof FileParams>; Querystring: Scope }>(
    '/files/:file_id/content',
    {
      config: { auth: 'any' },
      schema: {
        tags,
        summary: "Download a file's bytes",
        params: FileParams,
        querystring: FileScopeQuery,
        response: {
          200: { description: 'The raw bytes, with the sniffed type.', content: { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } } },
          ...errors(400, 401, 403, 404, 500),
        },
      },
    },
    async (req, reply) => {
      const { row, body } = await svc.files.open(await workspaceOf(svc, req, req.query), req.params.file_id);
      reply.header('content-type', row.mime_type);
      reply.header('content-length', String(row.size_bytes));
      reply.header('content-disposition', `attachment; filename="${row.filename.replace(/[^\x20-\x7e]|["\\]/g, '_')}"`);
      return reply.send(body);
    },
  );
}


