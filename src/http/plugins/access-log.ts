/**
 * The access log: one structured line per request, at the end (status, timing, caller's key and workspace, no
 * secrets), at level info on the root logger.
 *
 * Every request pays for this line, so it is written without pino's generic serializer (several µs per line): the
 * fields are fixed and known, and the line is put together here from the logger's own level prefix, time and bindings
 * and handed to the logger's destination — byte for byte what `logger.info({...}, 'request')` writes. A logger with
 * hooks, a mixin or custom formatters goes through pino as usual.
 */
import pino, { type Logger } from 'pino';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

type Internals = Record<symbol, unknown>;
const S = pino.symbols;

/** A JSON string literal; request ids, key hashes and workspace ids need no escaping, URLs may. */
function str(v: string): string {
  return JSON.stringify(v);
}

/** The URL as logged: a `key=` query parameter (the Gemini API's way to send a key) is masked. */
export function loggedUrl(url: string): string {
  return url.includes('key=') ? url.replace(/([?&]key=)[^&#]*/g, '$1***') : url;
}

function fields(request: FastifyRequest, reply: FastifyReply) {
  return {
    request_id: request.id,
    method: request.method,
    url: loggedUrl(request.url),
    status: reply.statusCode,
    ms: Math.round(reply.elapsedTime * 100) / 100,
    key: request.key ? request.key.hash.slice(0, 12) : undefined,
    workspace: request.key?.workspace_id,
  };
}

/** Whether pino would write `logger.info(obj, msg)` as plain level + time + bindings + fields + msg. */
function plain(logger: Logger): boolean {
  const l = logger as unknown as Internals;
  const formatters = l[S.formattersSym] as { log?: unknown } | undefined;
  const hooks = l[S.hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const stream = l[S.streamSym] as { write?: unknown } | undefined;
  return (
    typeof (l[S.lsCacheSym] as Record<number, string> | undefined)?.[30] === 'string' &&
    typeof l[S.timeSym] === 'function' &&
    typeof l[S.chindingsSym] === 'string' &&
    l[S.endSym] === '}\n' &&
    l[S.messageKeySym] === 'msg' &&
    !l[S.mixinSym] &&
    !l[(S as unknown as Record<string, symbol>).msgPrefixSym] &&
    !formatters?.log &&
    !hooks?.logMethod &&
    !hooks?.streamWrite &&
    typeof stream?.write === 'function' &&
    (stream as Internals)[S.needsMetadataGsym] !== true
  );
}

export function registerAccessLog(app: FastifyInstance, logger: Logger): void {
  if (!plain(logger)) {
    app.addHook('onResponse', (request, reply, done) => {
      if (logger.isLevelEnabled('info')) logger.info(fields(request, reply), 'request');
      done();
    });
    return;
  }
  const l = logger as unknown as Internals;
  const prefix = (l[S.lsCacheSym] as Record<number, string>)[30];
  const time = l[S.timeSym] as () => string;
  const bindings = l[S.chindingsSym] as string;
  const stream = l[S.streamSym] as { write(line: string): void };
  app.addHook('onResponse', (request, reply, done) => {
    if (!logger.isLevelEnabled('info')) return done();
    const key = request.key;
    let line = `${prefix}${time()}${bindings},"request_id":${str(request.id)},"method":${str(request.method)},"url":${str(loggedUrl(request.url))},"status":${reply.statusCode},"ms":${Math.round(reply.elapsedTime * 100) / 100}`;
    if (key) line += `,"key":${str(key.hash.slice(0, 12))},"workspace":${str(key.workspace_id)}`;
    stream.write(`${line},"msg":"request"}\n`);
    done();
  });
}
