/**
 * Request validation with two Ajv instances: bodies are validated as sent (no coercion, no defaults injected, unknown
 * fields kept for pass-through), while query strings and path parameters are coerced from strings and get defaults.
 */
import type { FastifyInstance } from 'fastify';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ErrorEnvelope } from '../schemas/common.js';

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

export function registerValidation(app: FastifyInstance): void {
  const body = makeAjv({ coerce: false });
  const params = makeAjv({ coerce: true });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : params).compile(schema));
  // Response schemas document the API; replies are serialized with JSON.stringify so no field is ever dropped.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}
