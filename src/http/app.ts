/**
 * The Fastify application: plugins (request id, validation, errors, auth), the OpenAPI document generated from the
 * route schemas, and every API area under /api/v1.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { Type } from '@sinclair/typebox';
import type { Logger } from 'pino';
import { registerAccessLog } from './plugins/access-log.js';
import { registerAuth } from './plugins/auth.js';
import { registerErrorHandling, sendError } from './plugins/errors.js';
import { registerValidation } from './plugins/validation.js';
import { registerJsonBody } from './plugins/json-body.js';
import { registerConsole } from './console.js';
import { ErrorEnvelope } from './schemas/common.js';
import { KeyView } from './routes/keys.js';
import { WorkspaceView } from './routes/workspaces.js';
import { PresetView, VersionView } from './routes/presets.js';
import healthRoutes from './routes/health.js';
import metricsRoutes from './routes/metrics.js';
import keyRoutes from './routes/keys.js';
import workspaceRoutes from './routes/workspaces.js';
import presetRoutes from './routes/presets.js';
import organizationRoutes, { MemberView } from './routes/organization.js';
import { VideoJob } from './routes/videos.js';
import organizationSettingsRoutes from './routes/organization-settings.js';
import guardrailRoutes from './routes/guardrails.js';
import inferenceRoutes from './routes/inference.js';
import generationRoutes from './routes/generation.js';
import generationsLogRoutes from './routes/generations-log.js';
import generationFeedbackRoutes from './routes/generation-feedback.js';
import generationContentRoutes from './routes/generation-content.js';
import observabilityRoutes from './routes/observability.js';
import analyticsRoutes from './routes/analytics.js';
import activityRoutes from './routes/activity.js';
import modelRoutes from './routes/models.js';
import speechRoutes from './routes/speech.js';
import embeddingRoutes from './routes/embeddings.js';
import countTokensRoutes from './routes/count-tokens.js';
import transcriptionRoutes from './routes/transcriptions.js';
import rerankRoutes from './routes/rerank.js';
import imageRoutes from './routes/images.js';
import videoRoutes from './routes/videos.js';
import fileRoutes from './routes/files.js';
import geminiRoutes, { GEMINI_BASE } from './routes/gemini.js';
import { GEMINI_SHARED_SCHEMAS } from './schemas/gemini.js';
import creditRoutes from './routes/credits.js';
import workspaceBudgetRoutes, { WorkspaceBudgetView } from './routes/workspace-budgets.js';
import byokRoutes, { ByokView } from './routes/byok.js';
import type { Services } from '../services/index.js';

/** A request's child logger, created by pino only when first used (most requests log only their access line). */
class LazyChildLogger {
  private real: FastifyBaseLogger | null = null;
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
  ) {}
  private get log(): FastifyBaseLogger {
    return (this.real ??= this.parent.child(this.bindings));
  }
  get level(): string {
    return this.log.level;
  }
  set level(v: string) {
    this.log.level = v;
  }
  child(b: Record<string, unknown>, o?: object): FastifyBaseLogger {
    return this.log.child(b, o);
  }
  fatal(...a: unknown[]): void {
    (this.log.fatal as (...x: unknown[]) => void)(...a);
  }
  error(...a: unknown[]): void {
    (this.log.error as (...x: unknown[]) => void)(...a);
  }
  warn(...a: unknown[]): void {
    (this.log.warn as (...x: unknown[]) => void)(...a);
  }
  info(...a: unknown[]): void {
    (this.log.info as (...x: unknown[]) => void)(...a);
  }
  debug(...a: unknown[]): void {
    (this.log.debug as (...x: unknown[]) => void)(...a);
  }
  trace(...a: unknown[]): void {
    (this.log.trace as (...x: unknown[]) => void)(...a);
  }
  silent(): void {}
}

export const API_PREFIX = '/api/v1';

/**
 * A route's path in the OpenAPI document: relative to its server (`/api/v1`, or `/api` for the Gemini API, whose
 * operations name their own server), path parameters as `{name}` (the Gemini routes' `:model(regex)::method` becomes
 * `{model}:method`).
 */
function openApiPath(url: string): string {
  if (url === API_PREFIX || url.startsWith(`${API_PREFIX}/`)) return url.slice(API_PREFIX.length) || '/';
  if (url.startsWith(`${GEMINI_BASE}/`)) return url.slice(GEMINI_BASE.length).replace(/\(\^\.\+\)::/g, ':');
  return url;
}

/** A route plugin: registers one API area's routes, each validating, calling a service and shaping the reply. */
export type RoutePlugin = (app: FastifyInstance, opts: { svc: Services }) => Promise<void>;

/**
 * Every API area under /api/v1, in registration order (the OpenAPI document's order). `/health`, `/ready` and
 * `/metrics` are served at the root, outside the versioned API (registered in buildApp). A new area is added here.
 */
export const API_ROUTES: readonly RoutePlugin[] = [
  keyRoutes, // /keys
  workspaceRoutes, // /workspaces
  presetRoutes, // /presets
  organizationRoutes, // /organization/members
  organizationSettingsRoutes, // /organization/settings
  guardrailRoutes, // /guardrails
  creditRoutes, // /credits, /credits/adjustments
  workspaceBudgetRoutes, // /workspaces/:id/budgets
  byokRoutes, // /byok, /byok/:id
  inferenceRoutes, // /chat/completions, /responses, /messages
  generationRoutes, // /generation
  generationsLogRoutes, // /generations
  generationFeedbackRoutes, // /generation/feedback
  generationContentRoutes, // /generation/content
  observabilityRoutes, // /observability/destinations
  analyticsRoutes, // /analytics/meta, /analytics/query
  activityRoutes, // /activity
  modelRoutes, // /models, /models/count, /models/user, /model/:author/:slug, /models/:author/:slug/endpoints, /embeddings/models, /endpoints/zdr, /providers
  speechRoutes, // /audio/speech
  embeddingRoutes, // /embeddings
  countTokensRoutes, // /messages/count_tokens
  transcriptionRoutes, // /audio/transcriptions
  rerankRoutes, // /rerank
  imageRoutes, // /images, /images/models, /images/models/:author/:slug/endpoints
  videoRoutes, // /videos
  fileRoutes, // /files, /files/:file_id, /files/:file_id/content
];

export interface AppOptions {
  svc: Services;
  logger: Logger;
  /** Routes a test adds after API_ROUTES (the gateway's own routes are all in API_ROUTES). */
  extraRoutes?: readonly RoutePlugin[];
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Answered even while shutting down. */
const HEALTH_URLS = new Set(['/ready', '/health', `${API_PREFIX}/ready`, `${API_PREFIX}/health`]);

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (headers too large, malformed request line, a
 * client too slow to send its headers), answered in the error envelope instead of Fastify's own body.
 */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'Request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request was not received in time']
        : [400, 'Bad Request', 'Malformed HTTP request'];
  const body = JSON.stringify({ error: { code: status, message } });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/** Shutdown drain: requests stopped arriving for this long… */
const DRAIN_QUIET_MS = 100;
/** …or this long passed. */
const DRAIN_MAX_MS = 2_000;

export async function buildApp({ svc, logger, extraRoutes = [] }: AppOptions): Promise<FastifyInstance> {
  let closing = false;
  /** Requests received so far (the shutdown drain waits for this to stop changing). */
  let arrivals = 0;
  const app: FastifyInstance = Fastify({
    loggerInstance: logger as unknown as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    // `request.log` is made on first use: most requests log only their access line, written on the root logger.
    childLoggerFactory: (parent, bindings) => new LazyChildLogger(parent, bindings) as unknown as FastifyBaseLogger,
    bodyLimit: svc.config.bodyLimit,
    // A caller's own request id is kept when it is sane; otherwise a new one is made.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // While closing, new requests get a 503 in the error envelope from the first hook below (Fastify's own 503 body
    // is not the envelope).
    return503OnClosing: false,
    clientErrorHandler,
    forceCloseConnections: 'idle',
    keepAliveTimeout: 72_000,
    // Path parameters up to 500 characters reach validation (400 naming the parameter); longer ones get 414.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // Errors the router raises before any hook (bad URL encoding, over-long parameter) also use the envelope.
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id);
      const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : err.code === 'FST_ERR_BAD_URL' ? 400 : (err.statusCode ?? 500);
      return sendError(reply, status, status >= 500 ? 'Internal server error' : err.message);
    },
  });

  // First onRequest hook, so that responses of failing hooks (401/403 from auth) carry the request id too.
  // Hooks on every request are callback style: an async hook costs a promise and a tick per request.
  app.addHook('onRequest', (request, reply, done) => {
    arrivals++;
    reply.header('x-request-id', request.id);
    if (closing && !HEALTH_URLS.has(request.url)) {
      // Shutting down: requests in flight finish, new ones are refused (clients retry elsewhere); `/ready` says so.
      reply.header('connection', 'close');
      sendError(reply, 503, 'The gateway is shutting down; retry the request', { error_type: 'shutting_down' });
      return;
    }
    done();
  });

  // Any authenticated route may answer 429 (the key's rate limit) and, for a key with a rate limit whose shared
  // counters (Redis) cannot be reached, 503 (docs/spend.md, "Request rate limits"): documented on each in the OpenAPI
  // document.
  app.addHook('onRoute', (route) => {
    const auth = (route.config as { auth?: string } | undefined)?.auth;
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (!auth || auth === 'none' || !response) return;
    for (const status of [429, 503]) if (!response[status]) response[status] = Type.Ref('ErrorEnvelope');
  });
  registerValidation(app);
  registerJsonBody(app, svc.config.bodyLimit);
  registerErrorHandling(app);
  registerAuth(app, svc.keys, svc.rateLimits);
  registerAccessLog(app, logger);
  app.addHook('preClose', async () => {
    closing = true;
    // Drain before the server closes: Node closes idle keep-alive connections at once when it does, and a request
    // already on its way over one would meet a TCP reset. Until requests stop arriving (none for DRAIN_QUIET_MS, at
    // most DRAIN_MAX_MS and the grace period), they are answered 503 with `Connection: close` (clients retry elsewhere).
    const until = Date.now() + Math.min(DRAIN_MAX_MS, svc.config.shutdownGraceMs);
    let seen = -1;
    while (seen !== arrivals && Date.now() < until) {
      seen = arrivals;
      await new Promise((resolve) => setTimeout(resolve, DRAIN_QUIET_MS));
    }
  });

  // Shared schemas live on the root instance only: a plugin that calls addSchema gets a schema controller of its own,
  // which drops the validator compiler set above (its bodies would be coerced by Fastify's default Ajv).
  for (const s of [ErrorEnvelope, KeyView, WorkspaceView, VersionView, PresetView, MemberView, VideoJob, WorkspaceBudgetView, ByokView, ...GEMINI_SHARED_SCHEMAS]) app.addSchema(s);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Model Gateway API', version: '1.0.0', description: 'Self-hosted gateway in front of AI model providers. Every error uses the error envelope.' },
      servers: [{ url: API_PREFIX }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <key>' } } },
      security: [{ bearer: [] }],
    },
    // Components keep their schema names (ApiKey, Workspace, …) instead of def-0, def-1.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url }) => ({ schema, url: openApiPath(url) }),
  });

  await app.register(healthRoutes, { svc, isClosing: () => closing });
  await app.register(metricsRoutes, { svc });
  await app.register(
    async (api) => {
      // The document lists /health, /ready and /metrics with their own server (`/`); a client that reads only the
      // top-level server (`/api/v1`) finds them there too.
      await api.register(healthRoutes, { svc, isClosing: () => closing, alias: true });
      await api.register(metricsRoutes, { svc, alias: true });
      for (const r of [...API_ROUTES, ...extraRoutes]) await api.register(r, { svc });
      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    },
    { prefix: API_PREFIX },
  );
  // The Gemini API (v1beta) beside /api/v1: SDKs add the version to their base URL (routes/gemini.ts).
  await app.register(geminiRoutes, { svc, prefix: GEMINI_BASE });
  // The web console's static files at /console (docs/console.md); it calls the API above, nothing of its own.
  if (svc.config.console) await app.register(registerConsole);
  await app.ready();
  return app;
}
