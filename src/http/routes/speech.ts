/**
 * POST /audio/speech: validate, hand over to the speech service, answer the audio bytes as they arrive
 * (`audio/mpeg` or `audio/pcm`, `X-Generation-Id`), or a JSON error in the envelope when nothing could be served.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../../core/errors.js';
import { errors } from '../schemas/common.js';
import { SpeechBody, type SpeechBodyT } from '../schemas/speech.js';
import { apiCall } from './inference.js';
import type { SpeechBody as ServiceBody } from '../../services/speech.js';
import type { Services } from '../../services/index.js';

const Audio = Type.String({ format: 'binary', description: 'Raw audio bytes, streamed as they are produced.' });

export default async function speechRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  app.post<{ Body: SpeechBodyT }>(
    '/audio/speech',
    {
      config: { auth: 'inference' },
      schema: {
        tags: ['Text-to-speech'],
        summary: 'Create speech: synthesize audio from text (OpenAI SDK `audio.speech.create` compatible)',
        headers: Type.Object({ 'x-gateway-metadata': Type.Optional(Type.String({ description: 'enabled adds gateway_metadata to error bodies.' })) }),
        body: SpeechBody,
        response: {
          200: {
            description: 'Audio bytes: `audio/mpeg` for mp3, `audio/pcm` for pcm (16-bit little-endian, mono, 24 kHz). The `X-Generation-Id` header names the generation record.',
            headers: { 'x-generation-id': { type: 'string' } },
            content: { 'audio/mpeg': { schema: Audio }, 'audio/pcm': { schema: Audio } },
          },
          ...errors(400, 401, 402, 403, 404, 413, 429, 500, 502, 503, 524, 529),
        },
      },
    },
    async (req, reply) => {
      const call = apiCall(req, reply);
      const prepared = await svc.speech.prepare(req.body as ServiceBody, call);
      reply.hijack();
      try {
        await svc.speech.stream(prepared, call, reply.raw);
      } catch (err) {
        // Failed before any audio: an ordinary JSON error in the envelope.
        const e = err instanceof HttpError ? err : new HttpError(500, 'Internal server error', { error_type: 'server' });
        if (!(err instanceof HttpError)) req.log.error({ err }, 'speech failed');
        if (!reply.raw.headersSent && !reply.raw.destroyed) {
          reply.raw.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': req.id, ...e.headers });
          reply.raw.end(JSON.stringify(e.envelope()));
        } else if (!reply.raw.writableEnded) reply.raw.destroy();
      }
    },
  );
}
