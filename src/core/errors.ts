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

/** A message naming the field and the rule it breaks, e.g. `body.name must be at most 100 characters (maxLength)`. */
export function describeValidationError(e: ErrorObject, location: string): { field: string; rule: string; message: string } {
  let field = clip(fieldPath(e.instancePath));
  const p = e.params as Record<string, unknown>;
  // An error inside `propertyNames` is about a key of the object, not the object itself.
  if (e.propertyName !== undefined && e.keyword !== 'propertyNames') field = field ? `${field} key "${quote(e.propertyName)}"` : `key "${quote(e.propertyName)}"`;
  let rule: string;
  switch (e.keyword) {
    case 'required':
      field = field ? `${field}.${p.missingProperty}` : String(p.missingProperty);
      rule = 'is required';
      break;
    case 'maxLength':
      rule = `must be at most ${p.limit} characters`;
      break;
    case 'minLength':
      rule = p.limit === 1 ? 'must not be empty' : `must be at least ${p.limit} characters`;
      break;
    case 'maximum':
      rule = `must be at most ${p.limit}`;
      break;
    case 'minimum':
      rule = `must be at least ${p.limit}`;
      break;
    case 'exclusiveMaximum':
      rule = `must be less than ${p.limit}`;
      break;
    case 'exclusiveMinimum':
      rule = `must be greater than ${p.limit}`;
      break;
    case 'maxItems':
      rule = `must have at most ${p.limit} items`;
      break;
    case 'minItems':
      rule = `must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`;
      break;
    case 'maxProperties':
      rule = `must have at most ${p.limit} entries`;
      break;
    case 'pattern':
      rule = `must match the pattern ${p.pattern}`;
      break;
    case 'format':
      rule = `must be a valid ${p.format}`;
      break;
    case 'enum':
      rule = `must be one of: ${(p.allowedValues as unknown[]).map((v) => (v === null ? 'null' : String(v))).join(', ')}`;
      break;
    case 'const':
      rule = `must be ${JSON.stringify(p.allowedValue)}`;
      break;
    case 'type':
      rule = `must be of type ${Array.isArray(p.type) ? (p.type as string[]).join(' or ') : p.type}`;
      break;
    case 'additionalProperties':
      field = field ? `${field}.${quote(String(p.additionalProperty))}` : quote(String(p.additionalProperty));
      rule = 'is not a known field';
      break;
    case 'propertyNames':
      field = field ? `${field} key "${quote(String(p.propertyName))}"` : `key "${quote(String(p.propertyName))}"`;
      rule = 'must be at most 64 characters without brackets';
      break;
    case 'anyOf':
    case 'oneOf':
      rule = 'does not match any allowed shape';
      break;
    default:
      rule = e.message ?? 'is invalid';
  }
  const where = location === 'body' ? '' : `${location === 'querystring' ? 'query' : location} parameter `;
  const name = field || location;
  return { field: name, rule: e.keyword, message: `${where}${name} ${rule} (${e.keyword})` };
}
