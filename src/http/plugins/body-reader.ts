/**
 * A request body read into one Buffer (issue 18). Fastify's `parseAs: 'buffer'` keeps every read of the socket and
 * joins them at the end (`Buffer.concat`): a second full copy of the body, ~1 MB of fresh memory per 1 MB request on
 * top of the socket's own. With a Content-Length within the limit, the body is copied read by read into one Buffer
 * of that size instead; a chunked body (no Content-Length) is still collected and joined. The errors are Fastify's
 * own (413 over the limit, 400 when the body's size is not its Content-Length), so replies do not change.
 */
import type { Readable } from 'node:stream';
import { errorCodes } from 'fastify';

const { FST_ERR_CTP_BODY_TOO_LARGE, FST_ERR_CTP_INVALID_CONTENT_LENGTH } = errorCodes;

/**
 * Reads `payload` to its end and calls `done` once: with the body, or with the error to answer. `contentLength` is
 * the header's value (undefined when absent); `limit` the most bytes accepted.
 */
export function readBody(payload: Readable, contentLength: string | undefined, limit: number, done: (err: Error | null, body?: Buffer) => void): void {
  const declared = contentLength === undefined ? NaN : Number(contentLength);
  if (declared > limit) {
    done(new FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  // Only an exact, whole Content-Length sizes the buffer (the bytes are written over before it is handed on).
  const sized = Number.isSafeInteger(declared) && declared >= 0;
  const whole = sized ? Buffer.allocUnsafe(declared) : null;
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (err: Error | null, body?: Buffer) => {
    if (finished) return;
    finished = true;
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
    done(err, body);
  };
  const onData = (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const at = received;
    received += bytes.length;
    if (received > limit) return finish(new FST_ERR_CTP_BODY_TOO_LARGE());
    if (!whole) chunks.push(bytes);
    else if (received <= whole.length) whole.set(bytes, at);
  };
  const onEnd = () => {
    if (sized && received !== declared) return finish(new FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    finish(null, whole ?? Buffer.concat(chunks, received));
  };
  const onError = (err: Error & { statusCode?: number }) => {
    if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
    finish(err);
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.resume();
}
