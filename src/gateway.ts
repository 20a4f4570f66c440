/**
 * Assembles a gateway: store (migrated), services, first-start bootstrap and the HTTP app.
 * Used by the CLI's `serve`, by `npm run demo` and by the tests.
 */
import { randomBytes } from 'node:crypto';
import { reasoningKey } from './core/reasoning-signature.js';
import { useReasoningKey } from './inbound/messages.js';
import pino, { type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from './config.js';
import { buildApp, type RoutePlugin } from './http/app.js';
import { openStore } from './store/sql-store.js';
import type { Store } from './store/types.js';
import { ByokService } from './services/byok.js';
import { configureSecrets, SecretKeyring } from './services/secrets-crypto.js';
import { LocalBus, RedisBus } from './services/invalidation.js';
import { KeyService } from './services/keys.js';
import { MemberService, newMemberId } from './services/members.js';
import { GenerationLookup } from './services/generation-lookup.js';
import { ActivityService } from './services/activity.js';
import { PresetService } from './services/presets.js';
import { newWorkspace, WorkspaceService } from './services/workspaces.js';
import { FileService } from './services/files/index.js';
import { PluginSteps } from './services/plugins/index.js';
import { FileInputs } from './services/plugins/file-inputs.js';
import { deleteOnProvider } from './services/files/provider-upload.js';
import { Moderation } from './services/plugins/moderation.js';
import { blobStorage, S3Storage } from './services/files/storage.js';
import type { Services } from './services/index.js';
import { buildCatalog, CatalogService } from './services/catalog.js';
import { ChatService } from './services/chat.js';
import { ServerToolService } from './services/server-tools.js';
import { WebSearch } from './providers/web/search.js';
import { WebFetcher } from './providers/web/fetch.js';
import { ResponseCache } from './services/response-cache.js';
import { CacheStep } from './services/attempts/cache-step.js';
import { GenerationRecorder } from './services/generations.js';
import type { Redis } from 'ioredis';
import { newRedis, whenReady } from './services/redis.js';
import { SpendService } from './services/spend/index.js';
import { CreditService } from './services/spend/credits.js';
import { WorkspaceBudgetService } from './services/spend/budgets.js';
import { SpendGate } from './services/spend/gate.js';
import { TokenUsage } from './services/spend/tokens.js';
import { RateLimiter } from './services/rate-limits.js';
import { HealthTracker } from './services/health.js';
import { GuardrailService, orgSettingsFromConfig } from './services/guardrails.js';
import { UpstreamHttp } from './providers/http.js';
import { DEFAULT_SSE_EVENT_CHARS, sseLimits } from './providers/sse.js';
import { shippedCatalog } from './services/shipped-catalog.js';
import { SpeechService } from './services/speech.js';
import { GatewayMetrics } from './services/metrics.js';
import { clusterMetricsOf, isClusterWorker } from './services/cluster-metrics.js';
import { CountTokensService } from './services/count-tokens.js';
import { TranscriptionService } from './services/transcriptions.js';
import { RerankService } from './services/rerank.js';
import { ImagesService } from './services/images.js';
import { EmbeddingsService } from './services/embeddings.js';
import { VideoService } from './services/videos.js';
import { isoTime } from './core/time.js';
import { IoLogging } from './services/observability/io-logging.js';
import { Broadcast } from './services/observability/broadcast.js';
import { DestinationService } from './services/observability/destinations.js';

export interface Gateway {
  app: FastifyInstance;
  svc: Services;
  /** The first management key's secret, when this start created it (shown once). */
  bootstrapSecret: string | null;
  listen(): Promise<string>;
  /** Graceful stop: stop accepting, finish in-flight requests, run shutdown work, close the store. */
  close(): Promise<void>;
}

/**
 * Structured JSON logs on stdout. Writes are buffered (4 KiB) instead of one syscall per line: a per-request log
 * line must not cost the hot path a write each; the buffer is flushed at shutdown.
 */
export function createLogger(config: GatewayConfig, to?: pino.DestinationStream): Logger {
  let destination = to;
  if (!destination) {
    // Buffer mode: each line is appended as a Buffer to the pending chunk. In text mode sonic-boom measures the whole
    // pending chunk's byte length on every write, flattening a growing string each time (~2 µs and ~4 KB of garbage
    // per line at 4 KiB chunks).
    const stdout = pino.destination({ dest: 1, sync: false, minLength: 4096, contentMode: 'buffer' } as Parameters<typeof pino.destination>[0]);
    // A quiet server still shows its lines within a second.
    setInterval(() => stdout.flush(), 1000).unref();
    destination = {
      write: (line: string) => stdout.write(Buffer.from(line) as unknown as string),
      flush: (cb?: (err?: Error) => void) => stdout.flush(cb),
      flushSync: () => stdout.flushSync(),
    } as pino.DestinationStream;
  }
  return pino({ level: config.logLevel, base: { service: 'model-gateway' }, timestamp: () => `,"time":"${isoTime(Date.now())}"` }, destination);
}

/**
 * On first start with an empty database: the organization, an owner member, the default workspace and the first
 * management key (GATEWAY_ADMIN_KEY, or a generated secret returned here to be printed once). Safe to race.
 */
export async function bootstrap(store: Store, config: GatewayConfig): Promise<string | null> {
  if (await store.getOrganization()) return null;
  const now = new Date().toISOString();
  const member = { id: newMemberId(), email: config.adminEmail.toLowerCase(), first_name: 'Admin', last_name: '', role: 'org:admin' as const, created_at: now };
  const workspace = newWorkspace({ name: 'Default', slug: 'default', description: 'Created at first start' }, member.id, now, true);
  const { row, secret } = KeyService.build(
    { name: 'Bootstrap management key', kind: 'management', workspace_id: workspace.id, creator_user_id: member.id, secret: config.adminKey ?? undefined },
    now,
  );
  const created = await store.bootstrap({
    organization: { id: `org_${randomBytes(8).toString('hex')}`, name: 'Default organization', created_at: now },
    member,
    workspace,
    key: row,
  });
  return created ? secret : null;
}

export interface CreateGatewayOptions {
  logger?: Logger;
  extraRoutes?: RoutePlugin[];
  now?: () => number;
  /** Environment for provider credentials (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Generation flush cadence (tests shorten or lengthen it). */
  recorder?: { intervalMs: number; batchSize: number };
  /** A fixed Redis reconnection delay for the invalidation channel (tests). */
  redisRetryMs?: number;
  /** The randomness of I/O logging's sampling (tests fix a seed); default Math.random. */
  ioRng?: () => number;
}

export async function createGateway(config: GatewayConfig, opts: CreateGatewayOptions = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger(config);
  const now = opts.now ?? Date.now;
  // The catalog is validated before anything is opened: a bad config file stops the start with every problem listed.
  const catalog = new CatalogService(buildCatalog(config.file, config.defaultCatalog ? shippedCatalog() : { providers: [], models: [], endpoints: [] }), opts.env ?? process.env, logger);
  // The `organization` section names providers and models: validated against the catalog, also before opening anything.
  const orgSeed = orgSettingsFromConfig(config.file.organization, catalog);
  const store = openStore(config.databaseUrl);
  // GATEWAY_MIGRATE=off: a migration Job applied them; this instance only checks that none is pending.
  const applied = await store.migrate(config.migrate === 'off' ? 'check' : 'apply');
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  // The key of the gateway's signatures on unsigned thinking (docs/agents.md): configured, or generated once and shared
  // by every instance through the database.
  useReasoningKey(reasoningKey(config.reasoningSecret ?? (await store.serverSecret('reasoning_signatures', randomBytes(32).toString('base64url')))));

  const bus = config.redisUrl ? new RedisBus(config.redisUrl, logger, opts.redisRetryMs) : new LocalBus();
  const workspaces = new WorkspaceService(store, now, bus, config.keyCacheTtlMs);
  // Files (docs/files.md): on local disk or in S3-compatible storage; a deleted workspace's files go with it.
  const fileStorage = blobStorage(config.files);
  const files = new FileService({ store, storage: fileStorage, dir: config.files.dir, quotaBytes: config.files.quotaBytes, now, log: logger });
  workspaces.onDelete = (id) => files.deleteWorkspace(id);
  const presets = new PresetService(store, now, bus, config.keyCacheTtlMs);
  const health = new HealthTracker(now);
  // Each provider origin's pool: bounded by the provider's max_connections (or GATEWAY_UPSTREAM_CONNECTIONS), read once
  // when the pool is first used; a whole answer is bounded by GATEWAY_UPSTREAM_MAX_BYTES.
  const http = new UpstreamHttp((origin) => catalog.originLimits(origin, config.upstream), config.upstreamMaxBytes);
  // One stream event is bounded too (process-wide: the smaller of the setting and the parser's own 32 MiB default).
  sseLimits.eventChars = Math.min(DEFAULT_SSE_EVENT_CHARS, config.upstreamMaxBytes);
  const recorder = new GenerationRecorder(store, logger, opts.recorder ?? { intervalMs: config.recordFlushMs, batchSize: 500 });
  // BYOK credentials (docs/byok.md): sealed with GATEWAY_ENCRYPTION_KEY; routed from an in-memory table.
  const keyring = new SecretKeyring(config.encryption.key, config.encryption.previous);
  configureSecrets(keyring);
  const byok = new ByokService({ store, bus, keyring, catalog, workspaces, log: logger, ttlMs: config.keyCacheTtlMs, now });
  await byok.refresh();
  // Files stored on a provider's Files API are deleted there with the credential that stored them.
  files.deleteOnProvider = (provider, fileId, credentialId) => deleteOnProvider({ catalog, byok }, provider, fileId, credentialId);
  recorder.ioMaxBytes = config.observability.ioLogMaxBytes;
  recorder.now = now;
  // Tracing (docs/observability.md): the SDK is loaded only when an OTLP endpoint is configured.
  const otlp = config.observability.otlp;
  const tracing = otlp ? new (await import('./services/observability/tracing.js')).Tracing(otlp) : null;
  // Broadcast destinations: each written generation to its workspace's destinations, after the flush.
  const broadcast = new Broadcast({ store, workspaces, log: logger, now, options: { ...config.observability.broadcast, webhookSecret: config.video.webhookSecret } });
  recorder.written = broadcast.written;
  const destinations = new DestinationService({
    store,
    workspaces,
    now,
    options: { allowLoopback: config.observability.broadcast.allowLoopback, webhookSecret: config.video.webhookSecret },
    changed: () => broadcast.invalidate(),
  });
  const io = new IoLogging({ store, log: logger, now, options: { retentionDays: config.observability.ioLogRetentionDays }, rng: opts.ioRng });
  const guardrails = new GuardrailService({ store, bus, catalog, workspaces, recorder, ttlMs: config.keyCacheTtlMs, now, log: logger, seed: orgSeed });
  // The response cache: in memory, or shared in Redis; a step around the attempts of the APIs that offer it.
  const cache = new ResponseCache(config.redisUrl, logger, now);
  const cacheStep = new CacheStep(cache, () => metrics, now);
  // Spend control (docs/spend.md): reservations over every limit; across instances through Redis leases.
  // Reconnects every ≤ 500 ms (ioredis's default backs off to 2 s): while it is away, limited keys are refused (fail mode
  // `closed`), so an instance should see Redis again within half a second of its return.
  const spendRedis = config.redisUrl ? newRedis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: (n) => Math.min(n * 50, 500) }) : null;
  spendRedis?.on('error', () => undefined);
  const spend = new SpendService({ redis: spendRedis, failMode: config.spend.redisDown, ledger: { heartbeatTtlMs: config.spend.heartbeatTtlMs, flushMark: () => recorder.flushStarts }, log: logger, now });
  recorder.onStored = (through) => spend.shared?.stored(through);
  const credits = new CreditService({ store, recorder, enabled: config.spend.credits, bus, now });
  const budgets = new WorkspaceBudgetService({ store, workspaces, recorder, bus, now });
  guardrails.useSpend(new SpendGate({ spend, credits, budgets, source: guardrails, tokens: new TokenUsage({ store, recorder }), now }));
  const chat = new ChatService({
    catalog,
    health,
    http,
    recorder,
    presets,
    workspaces,
    guardrails,
    log: logger,
    now,
    options: { keepaliveMs: config.streamKeepaliveMs, sessionTtlMs: config.sessionTtlMs, unknownModelFallback: config.unknownModelFallback },
    cache: cacheStep,
    byok,
    // Request plugins (docs/plugins.md): file inputs and file-parser, middle-out, moderation, response-healing.
    plugins: new PluginSteps({ catalog, fileInputs: new FileInputs({ files, store, now }), moderation: new Moderation(config.moderation), now }),
    io,
  });
  // Server tools; web search over the operator's engine (SearXNG or Tavily) when one is configured.
  const search = config.webSearch ? new WebSearch(config.webSearch) : null;
  const fetcher = config.webFetch === 'off' ? null : new WebFetcher(config.webFetch === 'private');
  const images = new ImagesService({ catalog, health, http, recorder, workspaces, guardrails, log: logger, now, byok });
  const serverTools = new ServerToolService({ chat, search, fetcher, keepaliveMs: config.streamKeepaliveMs, now, images });
  // Video jobs: durable, driven by a background worker (started below, stopped first at shutdown).
  const videos = new VideoService({ store, catalog, health, recorder, workspaces, guardrails, byok, log: logger, now, options: config.video });
  // Request rate limits are scopes of the spend ledger (docs/spend.md, "Request rate limits"): its leases, its Redis.
  const rateLimits = new RateLimiter(spend, logger, now);
  // Guardrails' request limits (docs/guardrails.md, "Rate limits") are counted with the key's own.
  rateLimits.useGuardrails(guardrails);
  // Shared counters count from the first request (waits up to 2 s for Redis; without it, limited keys get 503 or,
  // GATEWAY_SPEND_REDIS_DOWN=local, this instance counts).
  if (spendRedis) await whenReady(spendRedis, 2000);
  // Metrics are taken from the generation records (one per request of every API); none when GATEWAY_METRICS=off.
  const metrics = config.metrics === 'off' ? null : new GatewayMetrics(recorder, () => bus.redisUp());
  if (metrics) recorder.observer = metrics.observe;
  // One of GATEWAY_WORKERS' processes: /metrics shows every worker's series, summed by the primary.
  if (metrics && isClusterWorker()) metrics.joinCluster(clusterMetricsOf(metrics.registries));

  const svc: Services = {
    config,
    metrics,
    store,
    bus,
    keys: new KeyService(store, bus, config.keyCacheTtlMs, now),
    rateLimits,
    workspaces,
    members: new MemberService(store, now),
    presets,
    catalog,
    health,
    recorder,
    generations: new GenerationLookup(store, recorder),
    io,
    tracing,
    destinations,
    broadcast,
    activity: new ActivityService({ store, workspaces, catalog: () => catalog.route, now }),
    chat,
    cache,
    serverTools,
    speech: new SpeechService({ catalog, health, http, recorder, workspaces, guardrails, log: logger, now, byok }),
    embeddings: new EmbeddingsService({ catalog, health, http, recorder, workspaces, guardrails, log: logger, now, cache: cacheStep, byok, io }),
    countTokens: new CountTokensService({ catalog, health, http, workspaces, guardrails, now, byok }),
    transcriptions: new TranscriptionService({ catalog, health, http, recorder, workspaces, guardrails, log: logger, now, byok }),
    rerank: new RerankService({ catalog, health, http, recorder, workspaces, guardrails, log: logger, now, cache: cacheStep, byok, io }),
    images,
    guardrails,
    spend,
    credits,
    budgets,
    byok,
    videos,
    files,
    readiness: new Map([
      ['store', () => store.ping()],
      ['videos', async () => videos.healthy()],
    ]),
    // After the server stopped and in-flight requests ended: write every pending record, then drop upstream pools.
    onShutdown: [
      () => videos.stop({ waitMs: config.shutdownGraceMs }),
      async () => io.stop(),
      () => recorder.close(),
      async () => tracing?.shutdown(),
      () => broadcast.close(),
      async () => {
        await spend.close();
        spendRedis?.disconnect();
      },
      () => http.close(),
      async () => search?.close(),
      () => cache.close(),
      async () => fetcher?.close(),
      () => videos.http.close(),
      async () => (fileStorage instanceof S3Storage ? fileStorage.close() : undefined),
    ],
  };

  const bootstrapSecret = await bootstrap(store, config);
  await guardrails.init();
  if (bootstrapSecret && !config.adminKey) {
    logger.warn('first start: created the organization, the default workspace and a management key (printed once on stdout)');
  } else if (bootstrapSecret) {
    logger.info('first start: created the organization, the default workspace and the management key from GATEWAY_ADMIN_KEY');
  }

  const app = await buildApp({ svc, logger, extraRoutes: opts.extraRoutes });
  videos.start();
  io.start();
  let closed: Promise<void> | null = null;

  return {
    app,
    svc,
    bootstrapSecret: bootstrapSecret && !config.adminKey ? bootstrapSecret : null,
    // A burst of connections (thousands of clients reconnecting at once) queues in the kernel rather than being
    // dropped at Node's default backlog of 511 (the kernel caps it at net.core.somaxconn).
    listen: () => app.listen({ port: config.port, host: config.host, backlog: 4096 }),
    close() {
      closed ??= (async () => {
        const grace = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownGraceMs).unref());
        // Stops accepting at once; in-flight requests finish (bounded by the grace period). Keep-alive connections
        // they leave idle are closed as they go idle: otherwise the stop waits for the clients to drop them.
        const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
        try {
          await Promise.race([app.close(), grace]);
        } finally {
          clearInterval(sweep);
        }
        for (const fn of svc.onShutdown) {
          try {
            await fn();
          } catch (err) {
            logger.error({ err }, 'shutdown step failed');
          }
        }
        await bus.close();
        await store.close();
        await new Promise<void>((resolve) => logger.flush(() => resolve()));
      })();
      return closed;
    },
  };
}
