/**
 * The three inference APIs — POST /chat/completions, /responses and /messages — on one handler: validate, hand over
 * to the inference service, shape the reply (JSON or the API's event stream). Each API answers errors in its own
 * envelope (the Messages API in Anthropic's), including authentication and validation errors.
 */
import { withWebPlugin } from '../../services/plugins/index.js';
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
import type { ChatCall } from '../../services/chat.js';
import type { Tracing } from '../../services/observability/tracing.js';
import type { FoundServerTool } from '../../services/server-tools.js';
import { answerBodyOf, chatBodyOf, encoderOf } from '../../services/server-tools-apis.js';
import { cacheHeaders } from '../../services/response-cache.js';
import type { JsonReply } from '../../services/attempts/cache-step.js';
import { releaseBody } from '../plugins/json-body.js';

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

/**
 * The call of a non-chat API request: key, request id, X-Gateway-Metadata; a client that goes away aborts the upstream
 * request at once. With `offersCache`, what the client asked of the response cache (its headers, checked here).
 */
export function apiCall(req: FastifyRequest, reply: FastifyReply, offersCache = false): ApiCall {
  const call: ApiCall = { key: req.key, requestId: req.id, wantMetadata: wantsMetadata(req.headers), cancel: Cancellation.of(reply.raw) };
  if (offersCache) call.cache = { headers: cacheHeaders(req.headers), body: req.body };
  return call;
}

/** A JSON reply as the service gave it: its headers; an answer from the response cache sent as it was kept. */
function shapeJson(reply: FastifyReply, r: JsonReply): Record<string, unknown> | FastifyReply {
  reply.headers(r.headers);
  if ('stored' in r) return reply.type(r.stored.contentType).send(r.stored.text);
  return r.body;
}

/**
 * The reply of a single-answer API: the call (`apiCall`), the service's preparation (refusals throw, answered in the
 * envelope), its run (through the response cache when the API offers it: `offersCache`), and `X-Generation-Id`. The
 * request's in-flight count against the key's limit ends whatever happens (normally the generation record has ended
 * it already).
 */
export async function answerOnce<P>(
  req: FastifyRequest,
  reply: FastifyReply,
  prepare: (call: ApiCall) => Promise<P>,
  run: (prepared: P, call: ApiCall) => Promise<JsonReply>,
  offersCache = false,
  /** Tracing, when on: the request's span under this GenAI operation name. */
  traced?: { tracing: Tracing | null; operation: 'embeddings' | 'rerank' | 'generate_content' },
): Promise<Record<string, unknown> | FastifyReply> {
  const tracing = traced?.tracing;
  const operation = traced?.operation ?? 'generate_content';
  const call = apiCall(req, reply, offersCache);
  // Tracing on (docs/observability.md): the request's span, ended whatever happens.
  if (tracing) call.trace = tracing.request(req.headers, operation, req.routeOptions.url ?? req.url);
  try {
    const prepared = await prepare(call);
    return shapeJson(reply, await run(prepared, call));
  } finally {
    call.trace?.end(reply.statusCode);
  }
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
  /** The Gemini API has its own routes (gemini.ts). */
  api: Exclude<InboundApi, 'gemini'>;
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
        // The handler itself (no async wrapper around it: one promise and await fewer per request).
        (req, reply) => serveInference(svc, r, req, reply),
      );
    });
  }
}

/**
 * One request of an inference API: its call, server tools or the chat service, the JSON answer or the stream. Once
 * every attempt has settled, a body read into slabs may go back to their pool (core/body-slabs.ts).
 */
async function serveInference(svc: Services, r: ApiRoute, req: FastifyRequest<{ Body: Record<string, unknown> }>, reply: FastifyReply) {
  try {
    // A client that goes away aborts the upstream request at once.
    const cancel = Cancellation.of(reply.raw);
    const session = req.headers['x-session-id'];
    const call: ChatCall = {
      key: req.key,
      requestId: req.id,
      wantMetadata: wantsMetadata(req.headers),
      sessionHeader: typeof session === 'string' && session.length <= 256 ? session : undefined,
      anthropicBeta: anthropicBetas(req.headers['anthropic-beta']),
      cancel,
    };
    // Tracing on (docs/observability.md): the request's span, ended when the reply is done.
    if (svc.tracing) {
      const tr = (call.trace = svc.tracing.request(req.headers, 'chat', r.path));
      reply.raw.once('close', () => tr.end(reply.raw.statusCode));
    }
    // Server tools (gateway:web_search, …): the model/tool loop, run on chat bodies (docs/server-tools.md).
    // The `web` plugin is the web search server tool (docs/plugins.md).
    req.body = withWebPlugin(req.body);
    const server = svc.serverTools.find(r.api, req.body);
    if (server) return await serveServerTools(svc, r.api, req, reply, call, server);
    // The response cache (docs/cache.md): what the headers ask, with the body as sent (its key).
    call.cache = { headers: cacheHeaders(req.headers), body: req.body };
    const prepared = await svc.chat.prepare(r.api, req.body, call);
    if (!prepared.stream) return shapeJson(reply, await svc.chat.answer(prepared, call));
    reply.hijack();
    try {
      await svc.chat.relay(prepared, call, reply.raw);
    } catch (err) {
      failStream(req, reply, r.api, err);
    }
  } finally {
    releaseBody(req);
  }
}
