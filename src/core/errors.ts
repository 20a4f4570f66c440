/** Errors that routes and services throw; the error plugin turns them into the envelope. */
import type { ErrorObject } from 'ajv';
import { clip, quote } from './untrusted.js';

/** Longest error message: a message quoting client input (a 10 MB model name) echoes only a prefix of it. */
export const MESSAGE_LIMIT = 512;

export class HttpError extends Error {
  /** Routing metadata placed beside `error` when the caller opted in. */
  gatewayMetadata?: Record<string, unknown>;

  constructor(
    readonly status: number,
    message: string,
    readonly metadata?: Record<string, unknown> | null,
    readonly headers?: Record<string, string>,
  ) {
    super(message.length > MESSAGE_LIMIT ? clip(message, MESSAGE_LIMIT) : message);
    this.name = 'HttpError';
  }

  /** The envelope body of this error. */
  envelope(): Record<string, unknown> {
    const error: Record<string, unknown> = { code: this.status, message: this.message };
    if (this.metadata) error.metadata = this.metadata;
    return this.gatewayMetadata ? { error, gateway_metadata: this.gatewayMetadata } : { error };
  }
}

export const badRequest = (message: string, metadata?: Record<string, unknown>) => new HttpError(400, message, metadata);
export const unauthorized = (message: string) => new HttpError(401, message);
export const forbidden = (message: string, metadata?: Record<string, unknown>) => new HttpError(403, message, metadata);
export const notFound = (message: string, metadata?: Record<string, unknown>) => new HttpError(404, message, metadata);
export const conflict = (message: string) => new HttpError(409, message);

export const MANAGEMENT_ONLY = 'Only management keys can perform this operation';

/** Dotted path of an Ajv instance path: `/messages/0/role` → `messages[0].role`. */
function fieldPath(instancePath: string): string {
  let out = '';
  for (const part of instancePath.split('/').slice(1)) {
    const seg = part.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(seg) ? `[${seg}]` : out ? `.${seg}` : seg;
  }
  return out;
}

/** The rule an Ajv keyword states about its field (`p`: the error's params); a keyword not listed uses Ajv's message. */
const RULES: Record<string, (p: Record<string, unknown>) => string> = {
  required: () => 'is required',
  maxLength: (p) => `must be at most ${p.limit} characters`,
  minLength: (p) => (p.limit === 1 ? 'must not be empty' : `must be at least ${p.limit} characters`),
  maximum: (p) => `must be at most ${p.limit}`,
  minimum: (p) => `must be at least ${p.limit}`,
  exclusiveMaximum: (p) => `must be less than ${p.limit}`,
  exclusiveMinimum: (p) => `must be greater than ${p.limit}`,
  maxItems: (p) => `must have at most ${p.limit} items`,
  minItems: (p) => `must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`,
  maxProperties: (p) => `must have at most ${p.limit} entries`,
  pattern: (p) => `must match the pattern ${p.pattern}`,
  format: (p) => `must be a valid ${p.format}`,
  enum: (p) => `must be one of: ${(p.allowedValues as unknown[]).map((v) => (v === null ? 'null' : String(v))).join(', ')}`,
  const: (p) => `must be ${JSON.stringify(p.allowedValue)}`,
  type: (p) => `must be of type ${Array.isArray(p.type) ? (p.type as string[]).join(' or ') : p.type}`,
  additionalProperties: () => 'is not a known field',
  propertyNames: () => 'must be at most 64 characters without brackets',
  anyOf: () => 'does not match any allowed shape',
  oneOf: () => 'does not match any allowed shape',
};

/** A message naming the field and the rule it breaks, e.g. `body.name must be at most 100 characters (maxLength)`. */
export function describeValidationError(e: ErrorObject, location: string): { field: string; rule: string; message: string } {
  let field = clip(fieldPath(e.instancePath));
  const p = e.params as Record<string, unknown>;
  // An error inside `propertyNames` is about a key of the object, not the object itself.
  if (e.propertyName !== undefined && e.keyword !== 'propertyNames') field = field ? `${field} key "${quote(e.propertyName)}"` : `key "${quote(e.propertyName)}"`;
  // Three keywords name a field below the one the error is on: the missing property, the unknown one, the bad key.
  if (e.keyword === 'required') field = field ? `${field}.${p.missingProperty}` : String(p.missingProperty);
  else if (e.keyword === 'additionalProperties') field = field ? `${field}.${quote(String(p.additionalProperty))}` : quote(String(p.additionalProperty));
  else if (e.keyword === 'propertyNames') field = field ? `${field} key "${quote(String(p.propertyName))}"` : `key "${quote(String(p.propertyName))}"`;
  const rule = Object.hasOwn(RULES, e.keyword) ? RULES[e.keyword](p) : (e.message ?? 'is invalid');
  const where = location === 'body' ? '' : `${location === 'querystring' ? 'query' : location} parameter `;
  const name = field || location;
  return { field: name, rule: e.keyword, message: `${where}${name} ${rule} (${e.keyword})` };
}
