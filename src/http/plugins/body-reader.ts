/**
 * A request body read as the parts it arrived in (issue 18). Fastify's `parseAs: 'buffer'` joins every read of the
 * socket into one Buffer (`Buffer.concat`): a second full copy of the body, ~1 MB of fresh memory per 1 MB request
 * on top of the reads themselves, and what drove the garbage collector's full collections at 1 MB. Here the reads are
 * handed on as they are: a large conversation is scanned from a passing copy in the SIMD finder's memory and sent
 * upstream as those same reads (json-body.ts, core/lazy-body.ts); other bodies are joined as before. The errors are
 * Fastify's own (413 over the limit, 400 when the body's size is not its Content-Length), so replies do not change.
 */
import type { Readable } from 'node:stream';
import { errorCodes } from 'fastify';
import type { BodyLease } from '../../core/body-slabs.js';

const { FST_ERR_CTP_BODY_TOO_LARGE, FST_ERR_CTP_INVALID_CONTENT_LENGTH } = errorCodes;

/**
 * Reads `payload` to its end and calls `done` once: with the body's reads (each a Buffer of its own, not a view of a
 * shared one: Node's HTTP parser copies every read) and their total length, or with the error to answer.
 * `contentLength` is the header's value (undefined when absent); `limit` the most bytes accepted. With `lease`, every read
 * is copied into its slabs at once (the read dies young) and the parts are the slabs' views (core/body-slabs.ts).
 */
export function readBody(payload: Readable, contentLength: string | undefined, limit: number, done: (err: Error | null, parts?: Buffer[], length?: number) => void, lease?: BodyLease): void {
  const declared = contentLength === undefined ? NaN : Number(contentLength);
  if (declared > limit) {
    done(new FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  const parts: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (err: Error | null) => {
    if (finished) return;
    finished = true;
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
    if (err) done(err);
    else done(null, lease ? lease.parts() : parts, received);
  };
  const onData = (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    received += bytes.length;
    if (received > limit) return finish(new FST_ERR_CTP_BODY_TOO_LARGE());
    if (lease) lease.write(bytes);
    else parts.push(bytes);
  };
  const onEnd = () => finish(!Number.isNaN(declared) && received !== declared ? new FST_ERR_CTP_INVALID_CONTENT_LENGTH() : null);
  const onError = (err: Error & { statusCode?: number }) => {
    if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
    finish(err);
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.resume();
}
