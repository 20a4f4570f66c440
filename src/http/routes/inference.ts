/**
 * The three inference APIs — POST /chat/completions, /responses and /messages — on one handler: validate, hand over
 * to the inference service, shape the reply (JSON or the API's event stream). Each API answers errors in its own
 * envelope (the Messages API in Anthropic's), including authentication and validation errors.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../core/errors.js';
import { toHttpError } from '../plugins/errors.js';
import { errors } from '../schemas/common.js';
import { ChatCompletionBody, MessagesBody, ResponsesBody } from '../schemas/inference.js';
import { INBOUND, type InboundApi } from '../../services/codecs.js';
import { messagesInbound } from '../../inbound/messages.js';
import { Cancellation } from '../../providers/http.js';
import type { ApiCall } from '../../services/api-deps.js';
import type { Services } from '../../services/index.js';
import { eventStreamHead, type ChatCall } from '../../services/chat.js';
import type { FoundServerTool } from '../../services/server-tools.js';
import { answerBodyOf, chatBodyOf, encoderOf } from '../../services/server-tools-apis.js';
import { cacheDecision, cacheHeaders, cacheKey, cacheRequest, captureStream, hitHeaders, type CacheRequest } from '../../services/response-cache.js';

/** `X-Gateway-Metadata: enabled` (or the legacy `X-Gateway-Experimental-Metadata`), case-insensitive. */
export function wantsMetadata(headers: Record<string, string | string[] | undefined>): boolean {
  const v = headers['x-gateway-metadata'] ?? headers['x-gateway-experimental-metadata'];
  return typeof v === 'string' && v.trim().toLowerCase() === 'enabled';
}

/** The `X-Gateway-Metadata` request header of the single-answer APIs (embeddings, transcriptions, rerank). */
export const MetadataHeader = Type.Object({ 'x-gateway-metadata': Type.Optional(Type.String({ description: 'enabled adds gateway_metadata.' })) });

/** `anthropic-beta` values (comma-separated, possibly repeated), forwarded to Anthropic upstreams (docs/agents.md). */
export function anthropicBetas(v: string | string[] | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const out = (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).map((x) => x.trim()).filter((x) => /^[A-Za-z0-9._-]{1,100}$/.test(x));
  return out.length > 0 ? [...new Set(out)].slice(0, 50) : undefined;
}

/** The response cache's request headers (docs/cache.md). */
const CacheHeaderFields = {
  'x-gateway-cache': Type.Optional(Type.String({ description: 'true: answer from the response cache when this key sent the same body before, else store the answer (docs/cache.md). The answer carries X-Gateway-Cache-Status (HIT or MISS), -TTL, and on a hit -Age and -Source-Id.' })),
  'x-gateway-cache-ttl': Type.Optional(Type.String({ description: 'Seconds the answer is kept: 1 to 86400 (default 300).' })),
  'x-gateway-cache-clear': Type.Optional(Type.String({ description: 'true: drop the stored answer and ask the provider again.' })),
};

/** The request headers of a single-answer API with the response cache (embeddings, rerank). */
export const CachedAnswerHeaders = Type.Object({ ...MetadataHeader.properties, ...CacheHeaderFields });

/** The call of a non-chat API request: key, request id, X-Gateway-Metadata; a client that goes away aborts the upstream request at once. */
export function apiCall(req: FastifyRequest, reply: FastifyReply): ApiCall {
  return { key: req.key, requestId: req.id, wantMetadata: wantsMetadata(req.headers), cancel: Cancellation.of(reply.raw) };
}

/**
 * The reply of a single-answer API: the call (`apiCall`), the service's preparation (refusals throw, answered in the
 * envelope), its run, and `X-Generation-Id`. The request's in-flight count against the key's limit ends whatever
 * happens (normally the generation record has ended it already). With `cacheAs` (the services and the API's name), the response cache
 * applies as on the inference APIs: a hit is answered here (the reply is returned), a miss stored.
 */
export async function answerOnce<P extends { release(cost: number | null): void }>(
  req: FastifyRequest,
  reply: FastifyReply,
  prepare: (call: ApiCall) => Promise<P>,
  run: (prepared: P, call: ApiCall) => Promise<{ id: string; body: Record<string, unknown> }>,
  cacheAs?: { svc: Services; api: string },
): Promise<Record<string, unknown> | FastifyReply> {
  const call = apiCall(req, reply);
  const caching = cacheAs ? cacheRequest(req.headers) : null;
  const prepared = await prepare(call);
  try {
    const cache = caching && cacheAs ? { ...caching, ...cacheAs, key: cacheKey(req.key.hash, cacheAs.api, false, req.body) } : null;
    if (cache && (await serveCached(cache.svc, cache.api, req, reply, cache, false))) return reply;
    const { id, body } = await run(prepared, call);
    reply.header('x-generation-id', id);
    if (cache) await storeAnswer(cache.svc, cache, id, body);
    return body;
  } finally {
    prepared.release(null);
  }
}

/** Keeps a JSON answer in the response cache, without its gateway_metadata (hits never carry it). */
async function storeAnswer(svc: Services, cache: CacheRequest & { key: string }, id: string, body: Record<string, unknown>): Promise<void> {
  const { gateway_metadata: _notKept, ...kept } = body;
  await svc.cache.set(cache.key, { body: JSON.stringify(kept), contentType: 'application/json; charset=utf-8', generationId: id, ttl: cache.ttl });
}

const AnyObject = Type.Object({}, { additionalProperties: true });

const ChatCompletionResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String({ description: 'The model that served the request.' }),
    provider: Type.Optional(Type.String()),
    choices: Type.Array(
      Type.Object(
        { index: Type.Integer(), message: Type.Object({ role: Type.String(), content: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: true }), finish_reason: Type.Union([Type.String(), Type.Null()]) },
        { additionalProperties: true },
      ),
    ),
    system_fingerprint: Type.Union([Type.String(), Type.Null()]),
    service_tier: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    usage: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Tokens, cost (USD; null when the price is unknown), cost_details, is_byok.' })),
    gateway_metadata: Type.Optional(AnyObject),
  },
  { additionalProperties: true },
);

interface ApiRoute {
  api: InboundApi;
  path: string;
  body: TSchema;
  summary: string;
  response: TSchema;
}

const ROUTES: ApiRoute[] = [
  { api: 'chat', path: '/chat/completions', body: ChatCompletionBody, response: ChatCompletionResponse, summary: 'Create a chat completion (OpenAI-compatible; `stream: true` answers with Server-Sent Events)' },
  { api: 'responses', path: '/responses', body: ResponsesBody, response: AnyObject, summary: 'Create a response (OpenAI Responses-compatible, stateless; `stream: true` answers with its typed events)' },
  { api: 'messages', path: '/messages', body: MessagesBody, response: AnyObject, summary: 'Create a message (Anthropic Messages-compatible; `stream: true` answers with its event stream)' },
];

/** The error body of an API: the gateway envelope for chat, the API's own shape for the others. */
function apiErrorBody(api: InboundApi, err: HttpError, requestId: string): Record<string, unknown> {
  if (api === 'chat') return err.envelope();
  const body = api === 'messages' ? messagesInbound.errorBody(err.status, err.message, err.metadata ?? null, requestId) : INBOUND[api].errorBody(err.status, err.message, err.metadata ?? null);
  if (err.gatewayMetadata) body.gateway_metadata = err.gatewayMetadata;
  return body;
}

/** A stream that failed before it was committed: an ordinary JSON error in the API's shape (else the stream just ends). */
function failStream(req: FastifyRequest, reply: FastifyReply, api: InboundApi, err: unknown): void {
  const e = err instanceof HttpError ? err : new HttpError(500, 'Internal server error', { error_type: 'server' });
  if (!(err instanceof HttpError)) req.log.error({ err }, 'stream failed');
  if (!reply.raw.headersSent && !reply.raw.destroyed) {
    reply.raw.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': req.id, ...e.headers });
    reply.raw.end(JSON.stringify(apiErrorBody(api, e, req.id)));
  } else if (!reply.raw.writableEnded) reply.raw.end();
}

/** A request with server tools: the loop, answered in the request's API (JSON or its event stream). */
async function serveServerTools(svc: Services, api: InboundApi, req: FastifyRequest<{ Body: Record<string, unknown> }>, reply: FastifyReply, call: ChatCall, server: FoundServerTool[]) {
  const chatBody = api === 'chat' ? req.body : chatBodyOf(api, req.body, server);
  const tools = svc.serverTools.tools(server, chatBody);
  if (req.body.stream !== true) {
    const { id, body, details } = await svc.serverTools.run(chatBody, tools, call);
    reply.header('x-generation-id', id);
    return api === 'chat' ? body : answerBodyOf(api, body, details);
  }
  reply.hijack();
  try {
    await svc.serverTools.stream(chatBody, tools, call, reply.raw, req.id, api === 'chat' ? undefined : encoderOf(api));
  } catch (err) {
    failStream(req, reply, api, err);
  }
  return reply;
}

/**
 * The cache's part of a request that passed its checks: a hit is answered here (true); on a miss (false) the
 * response is marked MISS and goes on (`X-Gateway-Cache-Clear` drops the stored answer first).
 */
async function serveCached(svc: Services, api: string, req: FastifyRequest, reply: FastifyReply, cache: CacheRequest & { key: string }, stream: boolean): Promise<boolean> {
  const hit = cache.clear ? (await svc.cache.delete(cache.key), null) : await svc.cache.get(cache.key);
  svc.metrics?.cacheLookup(api, hit !== null);
  if (!hit) {
    const miss = { 'x-gateway-cache-status': 'MISS', 'x-gateway-cache-ttl': String(cache.ttl) };
    // A stream writes its own head on the raw response, which keeps headers set on it beforehand.
    if (stream) for (const [k, v] of Object.entries(miss)) reply.raw.setHeader(k, v);
    else reply.headers(miss);
    return false;
  }
  const headers = hitHeaders(hit, svc.health.now());
  if (!stream) {
    reply.headers({ ...headers, 'x-generation-id': hit.generationId }).type(hit.contentType).send(hit.body);
    return true;
  }
  reply.hijack();
  reply.raw.writeHead(200, { ...eventStreamHead(hit.generationId, req.id), ...headers });
  reply.raw.end(hit.body);
  return true;
}

export default async function inferenceRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  for (const r of ROUTES) {
    await app.register(async (scope) => {
      if (r.api !== 'chat') {
        // The API's own error envelope for everything on this route, authentication and validation included.
        scope.setErrorHandler((err: FastifyError | HttpError, req, reply: FastifyReply) => {
          const e = toHttpError(err, req);
          if (e.status === 500 && !(err instanceof HttpError)) req.log.error({ err }, 'unhandled error');
          if (e.headers) reply.headers(e.headers);
          return reply.code(e.status).type('application/json; charset=utf-8').send(apiErrorBody(r.api, e, req.id));
        });
      }
      scope.post<{ Body: Record<string, unknown> }>(
        r.path,
        {
          config: { auth: 'inference' },
          schema: {
            tags: ['Inference'],
            summary: r.summary,
            headers: Type.Object({
              'x-gateway-metadata': Type.Optional(Type.String({ description: 'enabled adds gateway_metadata; anything else (default) does not.' })),
              'anthropic-beta': Type.Optional(Type.String({ description: 'Comma-separated Anthropic beta names, forwarded to Anthropic-protocol upstreams (docs/agents.md).' })),
              ...CacheHeaderFields,
            }),
            body: r.body,
            response: { 200: r.response, ...errors(400, 401, 402, 403, 404, 408, 413, 429, 500, 502, 503, 524, 529) },
          },
        },
        async (req, reply) => {
          // A client that goes away aborts the upstream request at once.
          const cancel = Cancellation.of(reply.raw);
          const session = req.headers['x-session-id'];
          const call = {
            key: req.key,
            requestId: req.id,
            wantMetadata: wantsMetadata(req.headers),
            sessionHeader: typeof session === 'string' && session.length <= 256 ? session : undefined,
            anthropicBeta: anthropicBetas(req.headers['anthropic-beta']),
            cancel,
          };
          // Server tools (gateway:web_search, …): the model/tool loop, run on chat bodies (docs/server-tools.md).
          const server = svc.serverTools.find(r.api, req.body);
          if (server) return serveServerTools(svc, r.api, req, reply, call, server);
          const cacheAsked = cacheHeaders(req.headers);
          const prepared = await svc.chat.prepare(r.api, req.body, call);
          // The response cache (docs/cache.md): the header, or a preset's (or the body's) `cache_enabled`.
          const caching = cacheDecision(cacheAsked, prepared.body);
          const cache = caching ? { ...caching, key: cacheKey(req.key.hash, r.api, prepared.stream, req.body) } : null;
          if (cache && (await serveCached(svc, r.api, req, reply, cache, prepared.stream))) {
            prepared.release(null);
            return reply;
          }
          if (!prepared.stream) {
            try {
              const { id, body, headers } = await svc.chat.complete(prepared, call);
              reply.header('x-generation-id', id);
              if (headers) reply.headers(headers);
              if (cache) await storeAnswer(svc, cache, id, body);
              return body;
            } finally {
              prepared.release(null); // normally already released by the generation record
            }
          }
          reply.hijack();
          // A copy of the stream for the cache (not when it carries gateway_metadata, which hits never do).
          const copy = cache && !call.wantMetadata ? captureStream(reply.raw) : null;
          try {
            const done = await svc.chat.stream(prepared, call, reply.raw);
            const text = copy?.();
            if (done && text && cache) await svc.cache.set(cache.key, { body: text, contentType: 'text/event-stream; charset=utf-8', generationId: done.id, ttl: cache.ttl });
          } catch (err) {
            failStream(req, reply, r.api, err);
          } finally {
            prepared.release(null); // normally already released by the generation record
          }
        },
      );
    });
  }
}
