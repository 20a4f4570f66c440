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
import { findUntrusted, isStorable } from '../../core/untrusted.js';
import { checkedBodies, untrustedError } from './json-body.js';
import type { HttpError } from '../../core/errors.js';

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

/** Path parameters and query values: flat strings (or arrays of strings for repeated query names). */
function flatProblem(values: unknown, location: string): HttpError | null {
  if (!values || typeof values !== 'object') return null;
  for (const [k, v] of Object.entries(values as Record<string, unknown>)) {
    const bad = !isStorable(k) || (typeof v === 'string' ? !isStorable(v) : Array.isArray(v) && v.some((x) => typeof x === 'string' && !isStorable(x)));
    if (bad) return untrustedError({ field: isStorable(k) ? k : JSON.stringify(k).slice(0, 60), rule: 'storable', message: 'must not contain NUL characters or unpaired UTF-16 surrogates' }, location);
  }
  return null;
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
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : params).compile(schema));
  // Response schemas document the API; replies are serialized with JSON.stringify so no field is ever dropped.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addHook('preValidation', (request, _reply, done) => {
    const err = unstorableInput(request);
    if (err) done(err);
    else done();
  });
}
