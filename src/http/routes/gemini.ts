/**
 * The Gemini API (v1beta) under `/api`, so that `@google/genai` (`httpOptions.baseUrl`) and Gemini CLI
 * (`GOOGLE_GEMINI_BASE_URL`) take `http://<gateway>/api` as their base URL (docs/gemini.md):
 *   POST /v1beta/models/{model}:generateContent
 *   POST /v1beta/models/{model}:streamGenerateContent   (`alt=sse`: SSE; without it, one JSON array, as Google does)
 *   POST /v1beta/models/{model}:countTokens
 *   GET  /v1beta/models, /v1beta/models/{model}
 * `{model}` is a gateway model id (`google/gemini-2.5-pro`, the slash sent as is or URL-encoded) or a bare Gemini id
 * (`gemini-2.5-pro`, see geminiModelId). Keys come as `x-goog-api-key`, `?key=` (masked in the access log) or a
 * bearer token. Generation goes through the inference service like /chat/completions, /responses and /messages (same
 * routing, fallbacks, limits, records and metadata). Every error is answered in Google's shape
 * `{error: {code, message, status}}` — what @google/genai parses (its ApiError carries the status and the body), also
 * inside streams — with the gateway's metadata in `error.metadata` and a `google.rpc.RetryInfo` detail when the
 * answer has a Retry-After.
 */
import type { ServerResponse } from 'node:http';
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, notFound } from '../../core/errors.js';
import type { EndpointDef, ModelDef } from '../../core/catalog-types.js';
import { geminiModelId, geminiServerTools, type GeminiServerTool } from '../../inbound/gemini.js';
import { answerBodyOf, chatBodyOf, encoderOf } from '../../services/server-tools-apis.js';
import type { ChatCall } from '../../services/chat.js';
import { geminiCountBody } from '../../inbound/gemini-count.js';
import { geminiErrorBody } from '../../inbound/gemini-output.js';
import { Cancellation } from '../../providers/http.js';
import { lazyCopy } from '../../core/lazy-body.js';
import { releaseBody } from '../plugins/json-body.js';
import { canCount } from '../../services/count-tokens.js';
import type { Services } from '../../services/index.js';
import { toHttpError } from '../plugins/errors.js';
import { wantsMetadata } from './inference.js';
import {
  CountTokensBody,
  CountTokensResponse,
  GenerateContentBody,
  GenerateContentResponse,
  GeminiModelList,
  GeminiModelListQuery,
  googleErrors,
} from '../schemas/gemini.js';

declare module 'fastify' {
  interface FastifySchema {
    /** OpenAPI servers of one operation (@fastify/swagger copies them): the Gemini API is not under /api/v1. */
    servers?: Array<{ url: string; description?: string }>;
  }
}

/** Where the Gemini routes are mounted: the API version goes after it, as in Google's URLs. */
export const GEMINI_BASE = '/api';

type Params = { model?: string; author?: string; slug?: string };

/**
 * The last path parameter before `:<method>`: one path segment (find-my-way splits at `/`; URL-encoded slashes are
 * decoded), colons allowed so that variants (`google/gemini-2.5-flash:free`) pass. Ids of more than two segments
 * must be sent with their slashes URL-encoded.
 */
const SEGMENT = '(^.+)';
const OneSegment = Type.Object({ model: Type.String({ minLength: 1, maxLength: 256, description: 'A gateway model id (its slash URL-encoded) or a bare Gemini id such as gemini-2.5-pro.' }) });
const TwoSegments = Type.Object({ author: Type.String({ minLength: 1, maxLength: 128 }), slug: Type.String({ minLength: 1, maxLength: 128 }) });
const KeyQuery = { key: Type.Optional(Type.String({ description: 'The gateway key (instead of the x-goog-api-key header).' })) };
const StreamQuery = Type.Object({ alt: Type.Optional(Type.String({ description: 'sse: Server-Sent Events; otherwise one JSON array of the chunks.' })), ...KeyQuery });
const GenerateQuery = Type.Object(KeyQuery);

const pathModel = (p: Params): string => p.model ?? `${p.author}/${p.slug}`;

/** The error body in Google's shape, with a RetryInfo detail when the reply has a Retry-After. */
function googleError(e: HttpError): Record<string, unknown> {
  const body = geminiErrorBody(e.status, e.message, e.metadata ?? null);
  const retry = e.headers?.['retry-after'];
  if (retry) (body.error as Record<string, unknown>).details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retry}s` }];
  if (e.gatewayMetadata) body.gateway_metadata = e.gatewayMetadata;
  return body;
}

/** A stream that failed before it was committed: a JSON error in Google's shape (else the stream just ends). */
function failStream(req: FastifyRequest, reply: FastifyReply, err: unknown): void {
  const e = err instanceof HttpError ? err : new HttpError(500, 'Internal server error', { error_type: 'server' });
  if (!(err instanceof HttpError)) req.log.error({ err }, 'stream failed');
  if (!reply.raw.headersSent && !reply.raw.destroyed) {
    reply.raw.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': req.id, ...e.headers });
    reply.raw.end(JSON.stringify(googleError(e)));
  } else if (!reply.raw.writableEnded) reply.raw.end();
}

/**
 * The response seen through a JSON-array framing: the SSE events the service writes (`data: <chunk>` frames, keep-alive
 * comments) become `[<chunk>,\r\n<chunk>…]` with `application/json` (Google's answer to streamGenerateContent without
 * alt=sse); keep-alive comments become whitespace.
 */
export function jsonArrayResponse(raw: ServerResponse): ServerResponse {
  let opened = false;
  const convert = (text: string): string => {
    let out = '';
    for (const frame of text.split(/\r?\n\r?\n/)) {
      if (frame.startsWith('data: ')) {
        out += (opened ? ',\r\n' : '[') + frame.slice(6);
        opened = true;
      } else if (frame.startsWith(':')) out += '\n';
    }
    return out;
  };
  return new Proxy(raw, {
    get(target, prop) {
      if (prop === 'writeHead') {
        return (status: number, headers?: Record<string, string>) => target.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8' });
      }
      if (prop === 'write') return (chunk: unknown) => target.write(convert(String(chunk)));
      if (prop === 'end') {
        return (chunk?: unknown) => {
          const body = convert(chunk === undefined || chunk === null ? '' : String(chunk));
          return target.end(body + (opened ? ']' : '[]'));
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** A catalog model as a Gemini `Model`. */
function modelView(m: ModelDef, endpoints: EndpointDef[], countable: boolean): Record<string, unknown> {
  const outLimits = endpoints.map((e) => e.max_completion_tokens).filter((n): n is number => typeof n === 'number');
  return {
    name: `models/${m.id}`,
    baseModelId: m.id,
    version: m.canonical_slug,
    displayName: m.name,
    description: m.description,
    inputTokenLimit: m.context_length,
    outputTokenLimit: outLimits.length > 0 ? Math.max(...outLimits) : m.context_length,
    supportedGenerationMethods: countable ? ['generateContent', 'streamGenerateContent', 'countTokens'] : ['generateContent', 'streamGenerateContent'],
    thinking: m.reasoning !== null,
  };
}

const TAGS = ['Gemini API'];
const SERVERS = [{ url: GEMINI_BASE, description: 'The Gemini API sits beside /api/v1: give http://<gateway>/api as the SDK’s base URL.' }];
const HEADERS = Type.Object({
  'x-goog-api-key': Type.Optional(Type.String({ description: 'The gateway key (or Authorization: Bearer, or ?key=).' })),
  'x-gateway-metadata': Type.Optional(Type.String({ description: 'enabled adds gateway_metadata.' })),
});

type GeminiRequest = FastifyRequest<{ Params: Params; Body: Record<string, unknown>; Querystring: { alt?: string } }>;
type ModelIdOf = (p: Params) => string;

/** generateContent / streamGenerateContent: the inference service, as the other inference APIs use it. */
async function generate(svc: Services, modelId: ModelIdOf, req: GeminiRequest, reply: FastifyReply, stream: boolean) {
  const session = req.headers['x-session-id'];
  const call = {
    key: req.key,
    requestId: req.id,
    wantMetadata: wantsMetadata(req.headers),
    sessionHeader: typeof session === 'string' && session.length <= 256 ? session : undefined,
    // A client that goes away aborts the upstream request at once.
    cancel: Cancellation.of(reply.raw),
  };
  const server = geminiServerTools(req.body);
  if (server) return searchLoop(svc, { ...req.body, model: modelId(req.params) }, req, reply, stream, call, server);
  // A large body's `contents` may still be bytes (core/lazy-body.ts): copied without reading it.
  const prepared = await svc.chat.prepare('gemini', lazyCopy(req.body, { model: modelId(req.params), stream }), call);
  if (!stream) {
    const { id, body } = await svc.chat.complete(prepared, call);
    reply.header('x-generation-id', id);
    return body;
  }
  reply.hijack();
  try {
    await svc.chat.stream(prepared, call, req.query.alt === 'sse' ? reply.raw : jsonArrayResponse(reply.raw));
  } catch (err) {
    failStream(req, reply, err);
  }
  return reply;
}

/** A request with `googleSearch`: the gateway's web search loop (docs/server-tools.md), answered in Gemini's shape. */
async function searchLoop(svc: Services, body: Record<string, unknown>, req: GeminiRequest, reply: FastifyReply, stream: boolean, call: ChatCall, server: GeminiServerTool[]) {
  const chatBody = chatBodyOf('gemini', body, server);
  let tools: ReturnType<Services['serverTools']['tools']>;
  try {
    tools = svc.serverTools.tools(server, chatBody);
  } catch (err) {
    // Name the Gemini field (`tools[i].googleSearch`), not the chat body's.
    if (!(err instanceof HttpError)) throw err;
    const i = server[0].index;
    throw new HttpError(err.status, err.message.replace(`tools[${i}].type`, `tools[${i}].googleSearch`), { ...err.metadata, field: `tools[${i}].googleSearch` });
  }
  if (!stream) {
    const { id, body: answer, details } = await svc.serverTools.run(chatBody, tools, call);
    reply.header('x-generation-id', id);
    return answerBodyOf('gemini', answer, details);
  }
  reply.hijack();
  try {
    await svc.serverTools.stream(chatBody, tools, call, req.query.alt === 'sse' ? reply.raw : jsonArrayResponse(reply.raw), req.id, encoderOf('gemini'));
  } catch (err) {
    failStream(req, reply, err);
  }
  return reply;
}

/** `handling`, then the body read into slabs may go back to their pool: every attempt has settled (core/body-slabs.ts). */
async function released<T>(req: FastifyRequest, handling: Promise<T>): Promise<T> {
  try {
    return await handling;
  } finally {
    releaseBody(req);
  }
}

interface MethodRoute {
  method: string;
  summary: string;
  query: TSchema;
  body: TSchema;
  response: TSchema;
  rateLimit?: boolean;
  handler: (req: GeminiRequest, reply: FastifyReply) => Promise<unknown>;
}

/** POST /v1beta/models/{model}:<method>, for one- and two-segment model ids. */
function registerMethods(app: FastifyInstance, svc: Services, modelId: ModelIdOf): void {
  const methods: MethodRoute[] = [
    {
      method: 'generateContent',
      summary: 'Generate content (Gemini API): any provider behind the gateway, with its routing, fallbacks and accounting',
      query: GenerateQuery,
      body: GenerateContentBody,
      response: GenerateContentResponse,
      handler: (req, reply) => released(req, generate(svc, modelId, req, reply, false)),
    },
    {
      method: 'streamGenerateContent',
      summary: 'Stream content (Gemini API): with alt=sse one GenerateContentResponse per SSE event, else one JSON array of them',
      query: StreamQuery,
      body: GenerateContentBody,
      response: GenerateContentResponse,
      handler: (req, reply) => released(req, generate(svc, modelId, req, reply, true)),
    },
    {
      method: 'countTokens',
      summary: 'Count the input tokens (Gemini API) with the counting API of the model’s provider (Anthropic, Gemini, OpenAI Responses); 404 when it has none. Free: no record, no spend, not rate limited',
      query: GenerateQuery,
      body: CountTokensBody,
      response: CountTokensResponse,
      rateLimit: false,
      handler: async (req, reply) => {
        const counted = await svc.countTokens.count({ ...geminiCountBody(req.body), model: modelId(req.params) }, { key: req.key, cancel: Cancellation.of(reply.raw) });
        return { totalTokens: counted.input_tokens };
      },
    },
  ];
  for (const m of methods) {
    for (const [path, params] of [
      [`/v1beta/models/:model${SEGMENT}::${m.method}`, OneSegment],
      [`/v1beta/models/:author/:slug${SEGMENT}::${m.method}`, TwoSegments],
    ] as const) {
      app.post<{ Params: Params; Body: Record<string, unknown>; Querystring: { alt?: string } }>(
        path,
        {
          config: { auth: 'inference', queryKey: true, ...(m.rateLimit === false ? { rateLimit: false } : {}) },
          schema: { tags: TAGS, summary: m.summary, servers: SERVERS, params, querystring: m.query, headers: HEADERS, body: m.body, response: { 200: m.response, ...googleErrors(400, 401, 402, 403, 404, 408, 413, 429, 500, 502, 503, 524, 529) } },
        },
        m.handler,
      );
    }
  }
}

/** GET /v1beta/models and /v1beta/models/{model}: the models the key can reach (as GET /api/v1/models/user). */
function registerModels(app: FastifyInstance, svc: Services, modelId: ModelIdOf): void {
  const countable = (endpoints: EndpointDef[]) =>
    endpoints.some((e) => {
      const p = svc.catalog.route.providers.get(e.provider);
      return p !== undefined && canCount(p);
    });
  const reachable = async (req: FastifyRequest) =>
    (await svc.guardrails.userModels(req.key)).sort((a, b) => a.model.id.localeCompare(b.model.id)).map((x) => modelView(x.model, x.endpoints, countable(x.endpoints)));

  app.get<{ Querystring: { pageSize?: number; pageToken?: string } }>(
    '/v1beta/models',
    {
      config: { auth: 'inference', queryKey: true },
      schema: { tags: TAGS, servers: SERVERS, summary: 'List the models the key can reach (Gemini API `models.list`)', headers: HEADERS, querystring: GeminiModelListQuery, response: { 200: GeminiModelList, ...googleErrors(400, 401, 403, 500) } },
    },
    async (req) => {
      const all = await reachable(req);
      const offset = req.query.pageToken ? Number(req.query.pageToken) : 0;
      if (!Number.isInteger(offset) || offset < 0) throw new HttpError(400, 'pageToken is not a token this API returned', { field: 'pageToken' });
      const size = req.query.pageSize ?? 50;
      const models = all.slice(offset, offset + size);
      return offset + size < all.length ? { models, nextPageToken: String(offset + size) } : { models };
    },
  );

  for (const [path, params] of [
    ['/v1beta/models/:model', OneSegment],
    ['/v1beta/models/:author/:slug', TwoSegments],
  ] as const) {
    app.get<{ Params: Params }>(
      path,
      {
        config: { auth: 'inference', queryKey: true },
        schema: { tags: TAGS, servers: SERVERS, summary: 'Get a model the key can reach (Gemini API `models.get`)', headers: HEADERS, params, querystring: GenerateQuery, response: { 200: Type.Ref('GeminiModel'), ...googleErrors(400, 401, 403, 404, 500) } },
      },
      async (req) => {
        const id = modelId(req.params);
        const found = (await reachable(req)).find((m) => m.baseModelId === id);
        if (!found) throw notFound(`models/${id} is not found or not reachable with this key; GET /api/v1beta/models lists the models it can use`);
        return found;
      },
    );
  }
}

export default async function geminiRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const modelId: ModelIdOf = (p) => geminiModelId(pathModel(p), (id) => svc.catalog.route.models.has(id));
  // Google's error shape for everything on these routes, authentication and validation included.
  app.setErrorHandler((err: FastifyError | HttpError, req, reply: FastifyReply) => {
    const e = toHttpError(err, req);
    if (e.status === 500 && !(err instanceof HttpError)) req.log.error({ err }, 'unhandled error');
    if (e.headers) reply.headers(e.headers);
    return reply.code(e.status).type('application/json; charset=utf-8').send(googleError(e));
  });
  registerMethods(app, svc, modelId);
  registerModels(app, svc, modelId);
}
