/** Liveness (`/health`) and readiness (`/ready`): no authentication, outside the versioned API. */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/index.js';

/** In the OpenAPI document: served at the root (not under the /api/v1 server) and without authentication. */
const OUTSIDE_API = { servers: [{ url: '/' }], security: [] };

/** `alias`: the same routes under /api/v1 too (for clients that read the document's top-level server only), hidden. */
export default async function healthRoutes(app: FastifyInstance, { svc, isClosing, alias = false }: { svc: Services; isClosing: () => boolean; alias?: boolean }) {
  const doc = alias ? { hide: true } : OUTSIDE_API;
  app.get('/health', { schema: { tags: ['Health'], summary: 'Liveness: the process answers', ...doc } }, async () => ({ status: 'ok' }));

  app.get('/ready', { schema: { tags: ['Health'], summary: 'Readiness: the store and every dependency answer; 503 while shutting down', ...doc } }, async (_req, reply) => {
    const checks: Record<string, boolean> = {};
    for (const [name, check] of svc.readiness) checks[name] = await check().catch(() => false);
    const ready = !isClosing() && Object.values(checks).every(Boolean);
    reply.code(ready ? 200 : 503);
    // Redis unreachable is a degraded mode, not unreadiness: the instance serves with its own counters and caches.
    const redis = svc.bus.redisUp();
    if (redis === null) return { status: ready ? 'ready' : isClosing() ? 'shutting_down' : 'unavailable', checks };
    return { status: ready ? 'ready' : isClosing() ? 'shutting_down' : 'unavailable', checks, redis: redis ? 'up' : 'unreachable', degraded: redis ? [] : ['redis'] };
  });
}
