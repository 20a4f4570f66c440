/**
 * GET /generations (our extension, docs/observability.md): the request log — generation records newest first,
 * cursor-paged and filtered. Scope as GET /generation?id=: inference keys see their own records; management keys see
 * the organization's (optionally one workspace's or one key's).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../core/errors.js';
import { errors, Nullable } from '../schemas/common.js';
import type { Services } from '../../services/index.js';
import type { GenerationLogQuery } from '../../store/generation-log.js';
import { generationView } from './generation.js';
import { CONTENT_PATH } from './generation-content.js';

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const Name = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

const Query = Type.Object(
  {
    from: Type.Optional(Timestamp('Records created at or after this time (ISO 8601).')),
    to: Type.Optional(Timestamp('Records created before this time (ISO 8601).')),
    api_key_hash: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$', description: "One key's records (its hash). Management keys only." })),
    workspace_id: Type.Optional(Name("One workspace's records (id or slug). Management keys only.")),
    user_id: Type.Optional(Name('The records of the keys an organization member created. Management keys only.')),
    model: Type.Optional(Name('The model served or requested.')),
    provider: Type.Optional(Name('The provider slug that served it.')),
    api_type: Type.Optional(Name('The API called (`completions`, `embeddings`, `rerank`, `tts`, `stt`, `video`).')),
    status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'The HTTP status returned.' })),
    finish_reason: Type.Optional(Name('The normalized finish reason (`stop`, `length`, `tool_calls`, …).')),
    session_id: Type.Optional(Name('The session id the request carried.')),
    min_cost: Type.Optional(Type.Number({ minimum: 0, description: 'Lowest total cost (USD).' })),
    max_cost: Type.Optional(Type.Number({ minimum: 0, description: 'Highest total cost (USD).' })),
    min_latency_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'Lowest latency (ms).' })),
    max_latency_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'Highest latency (ms).' })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'The previous page\'s `next_cursor`.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Records per page (1 to 200, default 50).' })),
  },
  { additionalProperties: false },
);

const LogItem = Type.Object(
  {
    id: Type.String(),
    request_id: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    model: Type.String(),
    requested_model: Nullable(Type.String()),
    provider_name: Nullable(Type.String()),
    endpoint_tag: Nullable(Type.String()),
    api_type: Type.String(),
    streamed: Type.Boolean(),
    cancelled: Type.Boolean(),
    status: Type.Integer(),
    finish_reason: Nullable(Type.String()),
    tokens_prompt: Type.Integer(),
    tokens_completion: Type.Integer(),
    total_cost: Type.Number({ description: 'USD (0 when nothing was billed).' }),
    latency: Type.Integer({ description: 'ms' }),
    time_to_first_token: Nullable(Type.Integer()),
    session_id: Nullable(Type.String()),
    workspace_id: Type.String(),
    api_key_hash: Type.String(),
    content_url: Nullable(Type.String({ description: 'Where its logged input and output are (`GET /generation/content?id=`); null when its content was not logged.' })),
  },
  { additionalProperties: true, description: 'A generation record, as GET /generation?id= returns it.' },
);

const Reply = Type.Object({
  data: Type.Array(LogItem),
  next_cursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next (older) page; null on the last page.' })),
});

type Q = Static<typeof Query>;

const encodeCursor = (g: { created_at: string; id: string }) => Buffer.from(JSON.stringify([g.created_at, g.id])).toString('base64url');

function decodeCursor(s: string): { created_at: string; id: string } {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string' && Number.isFinite(Date.parse(v[0]))) {
      return { created_at: v[0], id: v[1] };
    }
  } catch {
    // falls through to the error below
  }
  throw badRequest('cursor is not a cursor this API returned', { field: 'cursor' });
}

function checkRanges(q: Q): void {
  if (q.from !== undefined && q.to !== undefined && Date.parse(q.from) >= Date.parse(q.to)) throw badRequest('to must be after from', { field: 'to' });
  if (q.min_cost !== undefined && q.max_cost !== undefined && q.min_cost > q.max_cost) throw badRequest('max_cost must not be below min_cost', { field: 'max_cost' });
  if (q.min_latency_ms !== undefined && q.max_latency_ms !== undefined && q.min_latency_ms > q.max_latency_ms) {
    throw badRequest('max_latency_ms must not be below min_latency_ms', { field: 'max_latency_ms' });
  }
}

/** The key hashes the query is confined to (null: any), from the caller's scope and the key/member filters. */
async function scopeKeys(svc: Services, key: { kind: string; hash: string }, q: Q): Promise<string[] | null> {
  if (key.kind === 'inference') {
    for (const f of ['api_key_hash', 'workspace_id', 'user_id'] as const) {
      if (q[f] !== undefined && !(f === 'api_key_hash' && q[f] === key.hash)) throw badRequest(`${f} is for management keys; an inference key sees its own records`, { field: f });
    }
    return [key.hash];
  }
  let hashes: string[] | null = q.api_key_hash ? [q.api_key_hash] : null;
  if (q.user_id !== undefined) {
    if (!(await svc.store.getMember(q.user_id))) throw badRequest(`user_id ${q.user_id} is not a member of the organization`, { field: 'user_id' });
    const theirs = await svc.store.listKeyHashes({ creator_user_id: q.user_id });
    hashes = hashes ? hashes.filter((h) => theirs.includes(h)) : theirs;
  }
  return hashes;
}

const iso = (s: string | undefined) => (s === undefined ? undefined : new Date(s).toISOString());

export default async function generationsLogRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.get<{ Querystring: Q }>(
    '/generations',
    {
      config: { auth: 'any' },
      schema: {
        tags: ['Generations'],
        summary: 'The request log: generation records newest first, filtered and cursor-paged (gateway extension)',
        querystring: Query,
        response: { 200: Reply, ...errors(400, 401, 404, 500) },
      },
    },
    async (req) => {
      const q = req.query;
      checkRanges(q);
      const after = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined;
      const keyHashes = await scopeKeys(svc, req.key, q);
      const limit = q.limit ?? 50;
      const filter: GenerationLogQuery = {
        keyHashes,
        workspaceId: q.workspace_id !== undefined ? (await svc.workspaces.get(q.workspace_id)).id : undefined,
        from: iso(q.from),
        to: iso(q.to),
        model: q.model,
        provider: q.provider,
        apiType: q.api_type,
        status: q.status,
        finishReason: q.finish_reason,
        sessionId: q.session_id,
        minCost: q.min_cost,
        maxCost: q.max_cost,
        minLatencyMs: q.min_latency_ms,
        maxLatencyMs: q.max_latency_ms,
        after,
        limit: limit + 1,
      };
      const rows = await svc.store.listGenerations(filter);
      const page = rows.slice(0, limit);
      const logged = await svc.store.generationContentIds(page.map((g) => g.id));
      const data = page.map((g) => ({ ...generationView(g), content_url: logged.has(g.id) ? `${CONTENT_PATH}?id=${encodeURIComponent(g.id)}` : null }));
      return { data, next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null };
    },
  );
}
