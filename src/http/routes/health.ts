/** Liveness (`/health`) and readiness (`/ready`): no authentication, outside the versioned API. */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/index.js';

/** In the OpenAPI document: served at the root (not under the /api/v1 server) and without authentication. */
const OUTSIDE_API = { servers: [{ url: '/' }], security: [] };

export default async function healthRoutes(app: FastifyInstance, { svc, isClosing }: { svc: Services; isClosing: () => boolean }) {
  app.get('/health', { schema: { tags: ['Health'], summary: 'Liveness: the process answers', ...OUTSIDE_API } }, async () => ({ status: 'ok' }));

  app.get('/ready', { schema: { tags: ['Health'], summary: 'Readiness: the store and every dependency answer; 503 while shutting down', ...OUTSIDE_API } }, async (_req, reply) => {
    const checks: Record<string, boolean> = { store: await svc.store.ping() };
    for (const [name, check] of svc.readiness) checks[name] = await check().catch(() => false);
    const ready = !isClosing() && Object.values(checks).every(Boolean);
    reply.code(ready ? 200 : 503);
    // Redis unreachable is a degraded mode, not unreadiness: the instance serves with its own counters and caches.
    const redis = svc.bus.redisUp();
    if (redis === null) return { status: ready ? 'ready' : isClosing() ? 'shutting_down' : 'unavailable', checks };
    return { status: ready ? 'ready' : isClosing() ? 'shutting_down' : 'unavailable', checks, redis: redis ? 'up' : 'unreachable', degraded: redis ? [] : ['redis'] };
  });
}
