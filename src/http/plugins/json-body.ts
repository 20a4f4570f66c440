/**
 * The JSON body parser of every route, replacing Fastify's: one size limit for JSON bodies (GATEWAY_BODY_LIMIT, even
 * on a route that takes larger multipart uploads), then, before any schema check or recursive walk, the bounds of
 * core/untrusted.ts — nesting depth, finite numbers, storable strings and keys — each refused with a 400 naming the
 * field and the rule. `__proto__` keys are refused as Fastify's parser did. Bodies of other content types are not
 * parsed at all (Fastify's text/plain parser is removed): a route answers 415 for a type it does not take.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isAscii, isUtf8 } from 'node:buffer';
import { HttpError } from '../../core/errors.js';
import { rememberRaw, without } from '../../core/raw-json.js';
import { readBody } from './body-reader.js';
import { BodyLease } from '../../core/body-slabs.js';
import { LAZY_MIN_BYTES, parseLazy } from '../../core/lazy-body.js';
import { releaseScanMemory, scannerOfParts } from '../../core/json-simd.js';
import { findUntrusted, MAX_JSON_DEPTH, mayHoldUnstorable, type UntrustedProblem } from '../../core/untrusted.js';

/** Bodies this parser produced and checked (the validator does not check them again). */
export const checkedBodies = new WeakSet<object>();

export function untrustedError(p: UntrustedProblem, location: string): HttpError {
  const where = location === 'body' ? '' : `${location === 'querystring' ? 'query' : location} parameter `;
  const field = p.field || location;
  return new HttpError(400, `${where}${field} ${p.message} (${p.rule})`, { field, rule: p.rule });
}

export function registerJsonBody(app: FastifyInstance, bodyLimit: number): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  // A body refused before its route's handler ran (schema validation, a check of a hook): its slabs go back here, as
  // the handler's own `releaseBody` never ran. A handler's error reaches this hook only after the handler's `finally`
  // gave them back, and a second release does nothing.
  app.addHook('onError', (req, _reply, _err, done) => {
    releaseBody(req);
    done();
  });
  // As bytes, in the reads they arrived in (body-reader.ts; the limit is the route's, as with Fastify's own reader),
  // decoded once (Fastify's string mode decodes each read and joins the pieces), and kept beside the parse for a
  // same-protocol upstream body to reuse (core/raw-json.ts).
  app.addContentTypeParser('application/json', (req: FastifyRequest, payload, done) => {
    const limit = req.routeOptions.bodyLimit ?? bodyLimit;
    const lease = leaseFor(req, limit);
    readBody(
      payload,
      req.headers['content-length'],
      limit,
      (err, parts, length) => {
        if (err) {
          lease?.release();
          done(err, undefined);
        } else parseJson(req, parts!, length!, bodyLimit, done, lease);
      },
      lease,
    );
  });
}

/** Requests whose body is in slabs (core/body-slabs.ts) → their lease, until the handler is done (`releaseBody`). */
const leases = new WeakMap<object, BodyLease>();

/**
 * A lease of slabs for a body that may be taken lazily (a declared length of at least LAZY_MIN_BYTES, within the
 * limit, on a lazy route), else undefined (the reads are kept as they arrive).
 */
function leaseFor(req: FastifyRequest, limit: number): BodyLease | undefined {
  const declared = Number(req.headers['content-length']);
  if (!(declared >= LAZY_MIN_BYTES && declared <= limit) || !takesLazy(req)) return undefined;
  const lease = new BodyLease();
  leases.set(req.raw, lease);
  return lease;
}

/**
 * The route's handler is done with the request's body (every attempt settled): slabs it was read into go back to the
 * pool, unless something still reads them (core/body-slabs.ts). Nothing for other requests.
 */
export function releaseBody(req: FastifyRequest): void {
  const lease = leases.get(req.raw);
  if (!lease) return;
  leases.delete(req.raw);
  lease.release();
}

/** The JSON body parser proper: the body's reads parsed and checked, handed to `done`. */
function parseJson(req: FastifyRequest, parts: Buffer[], length: number, bodyLimit: number, done: (err: Error | null, body?: unknown) => void, lease?: BodyLease): void {
  // A large body's conversation is validated from the bytes and parsed only if some code reads it (lazy-body.ts):
  // scanned in a passing copy, kept as the reads or the slabs they were copied into (never joined in a buffer of their own).
  if (length >= LAZY_MIN_BYTES && length <= bodyLimit && takesLazy(req)) {
    const scan = scannerOfParts(parts, length);
    if (scan && lazyParse(scan.view, scan.find, parts, done, lease)) return;
  }
  // Parsed eagerly: slabs are copied out (Buffer.concat always copies) and given back at once.
  const raw = parts.length === 1 && !lease ? parts[0] : Buffer.concat(parts, length);
  lease?.release();
  // ASCII (most JSON) decodes as Latin-1: the same characters without the UTF-8 decoder's work (a small gain under
  // load, where the fresh string's memory costs more than the decoding; docs/benchmark.md, issue 18).
  const ascii = isAscii(raw);
  const body = ascii ? raw.toString('latin1') : raw.toString('utf8');
  if (body.length > bodyLimit / 4 && Buffer.byteLength(body) > bodyLimit) {
    done(new HttpError(413, `Request body is too large: JSON bodies are limited to ${bodyLimit} bytes (GATEWAY_BODY_LIMIT)`), undefined);
    return;
  }
  if (body.length === 0) {
    done(new HttpError(400, 'Malformed JSON body: the body is empty', { field: 'body', rule: 'json' }), undefined);
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    done(new HttpError(400, `Malformed JSON body: ${(err as Error).message.slice(0, 200)}`, { field: 'body', rule: 'json' }), undefined);
    return;
  }
  const problem = mayBeUntrusted(body) ? findUntrusted(parsed, { strings: mayHoldUnstorable(body) }) : null;
  if (problem) {
    done(untrustedError(problem, 'body'), undefined);
    return;
  }
  if (body.includes('"__proto__"') && hasProtoKey(parsed)) {
    done(new HttpError(400, 'body must not contain a "__proto__" key', { field: 'body', rule: 'proto' }), undefined);
    return;
  }
  if (parsed !== null && typeof parsed === 'object') {
    checkedBodies.add(parsed);
    // Only well-formed UTF-8 is reused as is (a malformed sequence was decoded to U+FFFD in the parse).
    if (!Array.isArray(parsed) && raw.length > RAW_MIN && (ascii || isUtf8(raw))) rememberRaw(parsed, raw);
  }
  done(null, parsed);
}

/**
 * Whether the route reads a lazy conversation only where it must: chat completions (its own and a preset's), the
 * Messages, Responses and Gemini APIs, whose same-protocol paths forward the bytes (the latter three defer their
 * IR's conversation: services/chat/lazy-ir.ts).
 */
function takesLazy(req: FastifyRequest): boolean {
  const url = req.routeOptions.url;
  return url !== undefined && (url.endsWith('/chat/completions') || LAZY_ROUTES.has(url) || (url.startsWith('/api/v1beta/models/') && GEMINI_METHOD.test(url)));
}

/** Gemini's generateContent and streamGenerateContent (not countTokens): `contents` is lazy, its Google path forwards the bytes. */
const GEMINI_METHOD = /:(?:generateContent|streamGenerateContent)$/;

const LAZY_ROUTES = new Set(['/api/v1/messages', '/api/v1/responses']);

/**
 * `view` (the body's bytes, `find` searching them; `parts`, the reads they were copied from, are what is kept) parsed
 * with its conversation left lazy (core/lazy-body.ts), checked like an eagerly parsed body (the conversation's own
 * strings were checked by the scan: no control character, one-character escapes only, well-formed UTF-8), and
 * handed to `done`; false when the body is not of that shape or the rest is not valid JSON (the eager path then
 * parses the whole and gives its error).
 */
function lazyParse(view: Buffer, find: (from: number, to: number) => number, parts: Buffer[], done: (err: Error | null, body?: unknown) => void, lease?: BodyLease): boolean {
  let lazy: ReturnType<typeof parseLazy>;
  try {
    lazy = parseLazy(view, find, parts, lease);
  } catch {
    return false;
  } finally {
    // The scan copy (`view`) is not read after the parse: a module memory grown past its bound is let go.
    releaseScanMemory();
  }
  if (!lazy) return false;
  const { body, text, key } = lazy;
  // The walks see the body without its conversation (reading it would parse it); the paths they name are the same.
  const problem = mayBeUntrusted(text) ? findUntrusted(without(body, key), { strings: mayHoldUnstorable(text) }) : null;
  if (problem) {
    lease?.release();
    done(untrustedError(problem, 'body'), undefined);
  } else if (text.includes('"__proto__"') && hasProtoKey(without(body, key))) {
    lease?.release();
    done(new HttpError(400, 'body must not contain a "__proto__" key', { field: 'body', rule: 'proto' }), undefined);
  } else {
    checkedBodies.add(body);
    rememberRaw(body, parts);
    done(null, body);
  }
  return true;
}

/**
 * Whether the raw text may hold what findUntrusted refuses; false skips the walk (the common small body). Too deep a
 * nesting needs more than 2 × MAX_JSON_DEPTH characters; a non-finite number, a long run of digits or an exponent of
 * three digits or more; an unstorable string, an escape (`mayHoldUnstorable`). Only a prefilter: text inside strings
 * may match, and then the walk decides.
 */
export function mayBeUntrusted(text: string): boolean {
  return text.length > 2 * MAX_JSON_DEPTH || mayHoldUnstorable(text) || NUMBER_RISK.test(text);
}

/** Below this size re-serializing costs less than finding the raw `messages` (and keeping the bytes). */
const RAW_MIN = 16 * 1024;

const NUMBER_RISK = /[eE][+-]?\d{3}|\d{300}/;

function hasProtoKey(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (!Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, '__proto__')) return true;
    for (const item of Object.values(v as Record<string, unknown>)) if (item !== null && typeof item === 'object') stack.push(item);
  }
  return false;
}
