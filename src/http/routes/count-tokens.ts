/**
 * POST /messages/count_tokens: the Messages API's token count (Anthropic SDK `messages.countTokens`; Claude Code calls
 * it every turn, as `/v1/messages/count_tokens?beta=true`). Validate, hand over to the counting service, answer
 * `{ input_tokens }`; errors in Anthropic's envelope, as on POST /messages. Not counted against the key's rate limit.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { HttpError } from '../../core/errors.js';
import { toHttpError } from '../plugins/errors.js';
import { errors } from '../schemas/common.js';
import { MessagesBody } from '../schemas/inference.js';
import { messagesInbound } from '../../inbound/messages.js';
import { Cancellation } from '../../providers/http.js';
import type { Services } from '../../services/index.js';

const { model: _model, messages: _messages, max_tokens: _maxTokens, ...rest } = MessagesBody.properties;

const CountTokensBody = Type.Object(
  {
    ...rest,
    model: Type.String({ minLength: 1, description: 'The model whose tokenizer counts, e.g. `anthropic/claude-sonnet-4.5`.' }),
    messages: Type.Array(Type.Object({ role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]), content: Type.Unknown() }, { additionalProperties: true }), { minItems: 1 }),
  },
  { additionalProperties: true },
);

export default async function countTokensRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  await app.register(async (scope) => {
    // Anthropic's error envelope for everything on this route, authentication and validation included.
    scope.setErrorHandler((err: FastifyError | HttpError, req, reply: FastifyReply) => {
      const e = toHttpError(err, req);
      if (e.status === 500 && !(err instanceof HttpError)) req.log.error({ err }, 'unhandled error');
      if (e.headers) reply.headers(e.headers);
      return reply.code(e.status).type('application/json; charset=utf-8').send(messagesInbound.errorBody(e.status, e.message, e.metadata ?? null, req.id));
    });
    scope.post<{ Body: Record<string, unknown> }>(
      '/messages/count_tokens',
      {
        config: { auth: 'inference', rateLimit: false },
        schema: {
          tags: ['Inference'],
          summary:
            'Count the input tokens of a Messages request (Anthropic-compatible), exactly, with the counting API of the model’s provider (Anthropic, Gemini); 404 when its providers have none. Free: no record, no spend, not rate limited',
          body: CountTokensBody,
          response: {
            200: Type.Object({ input_tokens: Type.Integer({ minimum: 0 }) }),
            ...errors(400, 401, 403, 404, 413, 429, 500, 502, 503, 524, 529),
          },
        },
      },
      async (req, reply) => {
        const beta = req.headers['anthropic-beta'];
        // A client that goes away aborts the upstream request at once.
        return svc.countTokens.count(req.body, { key: req.key, beta: typeof beta === 'string' ? beta : undefined, cancel: Cancellation.of(reply.raw) });
      },
    );
  });
}
