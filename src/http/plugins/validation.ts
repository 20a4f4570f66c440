/**
 * Request validation with two Ajv instances: bodies are validated as sent (no coercion, no defaults injected, unknown
 * fields kept for pass-through), while query strings and path parameters are coerced from strings and get defaults.
 * Before either, every path parameter, query value and non-JSON body (multipart fields) is checked for what no
 * database can store (NUL, lone surrogates), on every route, with or without a schema; JSON bodies were checked by
 * their parser (json-body.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ErrorEnvelope } from '../schemas/common.js';
import { findUntrusted, isStorable, type UntrustedProblem } from '../../core/untrusted.js';
import { checkedBodies, untrustedError } from './json-body.js';
import { HttpError } from '../../core/errors.js';
import { clip } from '../../core/untrusted.js';
import { lazyAware } from './lazy-validation.js';

// ajv-formats is CommonJS; its default export arrives as `default` under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

function makeAjv(opts: { coerce: boolean }): Ajv {
  const ajv = new Ajv({
    coerceTypes: opts.coerce ? 'array' : false,
    useDefaults: opts.coerce,
    removeAdditional: false,
    allErrors: false,
    strict: false,
    allowUnionTypes: true,
  });
  addFormats(ajv);
  ajv.addSchema(ErrorEnvelope);
  return ajv;
}

/** A coerced query or path number beyond 2^53 (`offset=99999999999999999999`): no database takes it as an integer. */
function unsafeInteger(data: unknown): UntrustedProblem | null {
  if (!data || typeof data !== 'object') return null;
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if (typeof v === 'number' && Math.abs(v) > Number.MAX_SAFE_INTEGER) return { field: k, rule: 'finite', message: `must be at most ${Number.MAX_SAFE_INTEGER} in absolute value` };
  }
  return null;
}

/** Path parameters and query values: flat strings (or arrays of strings for repeated query names). */
function flatProblem(values: unknown, location: string): HttpError | null {
  if (!values || typeof values !== 'object') return null;
  // for…in, not Object.entries: most requests have no path parameter or query value, and nothing is allocated then.
  for (const k in values) {
    if (!Object.prototype.hasOwnProperty.call(values, k)) continue;
    const v = (values as Record<string, unknown>)[k];
    const bad = !isStorable(k) || (typeof v === 'string' ? !isStorable(v) : Array.isArray(v) && v.some((x) => typeof x === 'string' && !isStorable(x)));
    if (bad) return untrustedError({ field: isStorable(k) ? k : JSON.stringify(k).slice(0, 60), rule: 'storable', message: 'must not contain NUL characters or unpaired UTF-16 surrogates' }, location);
  }
  return null;
}

/**
 * Whether every own value of `data` is a string or an array of strings (a repeated query name): then nothing in it
 * can fail `findUntrusted` without its string checks (depth, finite numbers) nor `unsafeInteger` (numbers).
 */
export function onlyStrings(data: unknown): boolean {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return false;
  for (const k in data) {
    if (!Object.prototype.hasOwnProperty.call(data, k)) continue;
    const v = (data as Record<string, unknown>)[k];
    if (typeof v === 'string') continue;
    if (!Array.isArray(v)) return false;
    for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'string') return false;
  }
  return true;
}

export function unstorableInput(request: FastifyRequest): HttpError | null {
  const fromParams = flatProblem(request.params, 'path');
  if (fromParams) return fromParams;
  const fromQuery = flatProblem(request.query, 'querystring');
  if (fromQuery) return fromQuery;
  const body = request.body;
  if (body !== null && typeof body === 'object' && !checkedBodies.has(body)) {
    const p = findUntrusted(body);
    if (p) return untrustedError(p, 'body');
  }
  return null;
}

export function registerValidation(app: FastifyInstance): void {
  const body = makeAjv({ coerce: false });
  const params = makeAjv({ coerce: true });
  app.setValidatorCompiler(({ schema, httpPart }) => {
    // A large body's conversation may still be bytes: validated without parsing it where the schema allows.
    if (httpPart === 'body') return lazyAware(body.compile(schema), schema);
    // Query strings and path parameters are coerced: `offset=1e309` becomes Infinity, refused like in a body.
    const validate = params.compile(schema);
    const checked = (data: unknown) => {
      if (!validate(data)) {
        checked.errors = validate.errors;
        return false;
      }
      // Headers (every inference request's), and most query strings and path parameters, are flat strings: neither
      // walk can find anything in them (no number, no nesting), so they are skipped without allocating.
      const p = onlyStrings(data) ? null : (findUntrusted(data, { strings: false }) ?? unsafeInteger(data));
      return p ? { error: untrustedError(p, httpPart === 'querystring' ? 'querystring' : httpPart === 'params' ? 'path' : httpPart ?? 'query') } : true;
    };
    checked.errors = null as typeof validate.errors;
    return checked;
  });
  // Response schemas document the API; replies are serialized with JSON.stringify so no field is ever dropped.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addHook('preValidation', (request, _reply, done) => {
    const err = unstorableInput(request);
    if (err) done(err);
    else done();
  });
  // A body schema given per content type (`body: {content: {...}}`) is only checked for those types: any other type,
  // or no body at all, is refused with 415 before the handler sees an unvalidated body.
  app.addHook('onRoute', (route) => {
    const content = (route.schema?.body as { content?: Record<string, unknown> } | undefined)?.content;
    if (!content) return;
    const types = Object.keys(content);
    const check = (request: FastifyRequest, _reply: unknown, done: (err?: Error) => void) => {
      const mediaType = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (request.body !== undefined && types.includes(mediaType)) return done();
      done(new HttpError(415, `Unsupported Content-Type ${clip(mediaType || '(none)', 60)}${request.body === undefined ? ' (no body)' : ''}; send ${types.join(' or ')}`));
    };
    const hooks = route.preValidation;
    route.preValidation = hooks ? [check as never, ...(Array.isArray(hooks) ? hooks : [hooks])] : (check as never);
  });
}
