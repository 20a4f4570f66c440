/**
 * GET /metrics: Prometheus metrics (text format 0.0.4), outside the versioned API like /health. Management keys only
 * by default (Prometheus sends one with `authorization: { credentials: … }`); `GATEWAY_METRICS=public` serves it to
 * anyone (e.g. on a private network), `off` not at all. See docs/metrics.md.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../schemas/common.js';
import type { Services } from '../../services/index.js';

/** `alias`: the same route under /api/v1 too (for clients that read the document's top-level server only), hidden. */
export default async function metricsRoutes(app: FastifyInstance, { svc, alias = false }: { svc: Services; alias?: boolean }) {
  const metrics = svc.metrics;
  if (!metrics) return;
  const open = svc.config.metrics === 'public';
  app.get(
    '/metrics',
    {
      config: { auth: open ? 'none' : 'management' },
      schema: {
        ...(alias ? { hide: true } : {}),
        tags: ['Health'],
        summary: 'Prometheus metrics: requests, tokens, cost, durations and upstream attempts by API, model and provider, the record queue, and the process',
        servers: [{ url: '/' }],
        ...(open ? { security: [] } : {}),
        response: {
          200: { description: 'Prometheus text exposition format 0.0.4.', content: { 'text/plain': { schema: Type.String() } } },
          ...(open ? errors(500) : errors(401, 403, 500)),
        },
      },
    },
    async (_req, reply) => {
      reply.type(metrics.contentType);
      return metrics.text();
    },
  );
}
