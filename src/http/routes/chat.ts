/** POST /chat/completions: validate, hand over to the chat service, shape the reply (JSON or an SSE stream). */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HttpError } from '../errors.js';
import { errors } from '../schemas/common.js';
import { ChatCompletionBody } from '../schemas/inference.js';
import type { Services } from '../../services/index.js';

/** `X-Gateway-Metadata: enabled` (or the legacy `X-Gateway-Experimental-Metadata`), case-insensitive. */
export function wantsMetadata(headers: Record<string, string | string[] | undefined>): boolean {
  const v = headers['x-gateway-metadata'] ?? headers['x-gateway-experimental-metadata'];
  return typeof v === 'string' && v.trim().toLowerCase() === 'enabled';
}

const ChatCompletionResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String({ description: 'The model that served the request.' }),
    provider: Type.Optional(Type.String()),
    choices: Type.Array(Type.Object({ index: Type.Integer(), message: Type.Object({ role: Type.String(), content: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: true }), finish_reason: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: true })),
    system_fingerprint: Type.Union([Type.String(), Type.Null()]),
    service_tier: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    usage: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Tokens, cost (USD; null when the price is unknown), cost_details, is_byok.' })),
    gateway_metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

export default async function chatRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.post<{ Body: Record<string, unknown> }>(
    '/chat/completions',
    {
      config: { auth: 'inference' },
      schema: {
        tags: ['Chat'],
        summary: 'Create a chat completion (OpenAI-compatible; `stream: true` answers with Server-Sent Events)',
        headers: Type.Object({ 'x-gateway-metadata': Type.Optional(Type.String({ description: 'enabled adds gateway_metadata; anything else (default) does not.' })) }),
        body: ChatCompletionBody,
        response: { 200: ChatCompletionResponse, ...errors(400, 401, 402, 403, 404, 408, 413, 429, 500, 502, 503, 524, 529) },
      },
    },
    async (req, reply) => {
      const controller = new AbortController();
      // A client that goes away aborts the upstream request at once.
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) controller.abort();
      });
      const session = req.headers['x-session-id'];
      const call = {
        key: req.key,
        requestId: req.id,
        wantMetadata: wantsMetadata(req.headers),
        sessionHeader: typeof session === 'string' && session.length <= 256 ? session : undefined,
        signal: controller.signal,
      };
      const prepared = await svc.chat.prepare(req.body, call);
      if (!prepared.stream) {
        const { id, body } = await svc.chat.complete(prepared, call);
        reply.header('x-generation-id', id);
        return body;
      }
      reply.hijack();
      try {
        await svc.chat.stream(prepared, call, reply.raw);
      } catch (err) {
        // Failed before the stream was committed: an ordinary JSON error.
        const e = err instanceof HttpError ? err : new HttpError(500, 'Internal server error', { error_type: 'server' });
        if (!(err instanceof HttpError)) req.log.error({ err }, 'stream failed');
        if (!reply.raw.headersSent && !reply.raw.destroyed) {
          reply.raw.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': req.id, ...e.headers });
          reply.raw.end(JSON.stringify(e.envelope()));
        } else if (!reply.raw.writableEnded) reply.raw.end();
      }
    },
  );
}
