/**
 * The error envelope on every route: `{ error: { code, message, metadata? } }` with `code` equal to the HTTP status.
 * Unknown routes answer 404, known paths with another method 405, schema violations 400 naming the field and rule,
 * and anything unexpected 500 with the detail logged but masked in the reply.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import FindMyWay from 'find-my-way';
import { describeValidationError, HttpError, MESSAGE_LIMIT } from '../../core/errors.js';
import { clip } from '../../core/untrusted.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function sendError(reply: FastifyReply, status: number, message: string, metadata?: Record<string, unknown> | null): FastifyReply {
  const error: Record<string, unknown> = { code: status, message: message.length > MESSAGE_LIMIT ? clip(message, MESSAGE_LIMIT) : message };
  if (metadata) error.metadata = metadata;
  return reply.code(status).type('application/json; charset=utf-8').send({ error });
}

/** The most specific Ajv error: the deepest path, and a constraint rather than a type mismatch of a union branch. */
function pickError(errors: ErrorObject[]): ErrorObject {
  const weak = new Set(['type', 'anyOf', 'oneOf', 'const']);
  return [...errors].sort((a, b) => {
    const depth = b.instancePath.split('/').length - a.instancePath.split('/').length;
    if (depth !== 0) return depth;
    return Number(weak.has(a.keyword)) - Number(weak.has(b.keyword));
  })[0];
}

/**
 * Any error a route, hook or Fastify itself throws, as the HttpError to answer with: schema violations name the field
 * and rule, body problems get 400/413/415, anything unexpected is a masked 500. Each API renders it in its envelope.
 */
export function toHttpError(err: FastifyError | HttpError, request: FastifyRequest): HttpError {
  if (err instanceof HttpError) return err;
  const fe = err as FastifyError & { validation?: ErrorObject[]; validationContext?: string };
  if (fe.validation && fe.validation.length > 0) {
    const d = describeValidationError(pickError(fe.validation), fe.validationContext ?? 'body');
    return new HttpError(400, d.message, { field: d.field, rule: d.rule });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HttpError(400, `Malformed JSON body: ${fe.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError(413, 'Request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpError(415, `Unsupported Content-Type ${request.headers['content-type'] ?? '(none)'}; send application/json`);
  }
  if (err instanceof SyntaxError || fe.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return new HttpError(400, `Malformed request: ${fe.message}`);
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) return new HttpError(status, fe.message);
  return new HttpError(500, 'Internal server error', { error_type: 'server', request_id: request.id });
}

export function registerErrorHandling(app: FastifyInstance): void {
  // A shadow router of every registered route, to tell a wrong method (405) from an unknown path (404).
  const shadow = FindMyWay({ ignoreTrailingSlash: true });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if (m === 'HEAD' || m === 'OPTIONS') continue;
      try {
        shadow.on(m as 'GET', route.url, () => undefined);
      } catch {
        /* duplicate shapes are fine */
      }
    }
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = METHODS.filter((m) => m !== request.method && shadow.find(m, path));
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(reply, 405, `Method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`);
    }
    return sendError(reply, 404, `No route for ${request.method} ${path}`);
  });

  app.setErrorHandler((err: FastifyError | HttpError, request, reply) => {
    const e = toHttpError(err, request);
    if (e.status === 500 && !(err instanceof HttpError)) request.log.error({ err }, 'unhandled error');
    if (e.headers) reply.headers(e.headers);
    return reply.code(e.status).type('application/json; charset=utf-8').send(e.envelope());
  });
}
