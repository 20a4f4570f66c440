/**
 * Schema validation of a body whose conversation is still bytes (core/lazy-body.ts) without parsing it. The scan
 * guaranteed every message is `{"role": <string>, "content": <string>}`; when the route's schema lets `content` be any
 * string, a message's validity depends on its role alone, so the body is validated with a stand-in conversation of
 * one `{role, content: ''}` per distinct role. When the stand-in fails, the real body is validated (which parses the
 * conversation), so every error is the one the eager path gives. Schemas that constrain content strings, the count
 * (maxItems) or uniqueness are always validated on the real body.
 */
import { lazyConversation, standIn, type LazyKey } from '../../core/lazy-body.js';
import { without } from '../../core/raw-json.js';
import type { ValidateFunction } from 'ajv';

type Schema = Record<string, unknown>;
type Validate = ValidateFunction;

/** Keys that annotate a schema without constraining what it accepts. */
const ANNOTATIONS = new Set(['description', 'title', 'deprecated', 'examples', '$comment', 'default', 'readOnly', 'writeOnly']);

const only = (s: Schema, allowed: string[]) => Object.keys(s).every((k) => ANNOTATIONS.has(k) || allowed.includes(k));

/** Whether `s` accepts every string, whatever its value. */
export function acceptsAnyString(s: unknown): boolean {
  if (s === undefined || s === true) return true;
  if (!s || typeof s !== 'object') return false;
  const o = s as Schema;
  if (Array.isArray(o.anyOf)) return only(o, ['anyOf']) && o.anyOf.some(acceptsAnyString);
  if (o.type === undefined) return only(o, []);
  const types = Array.isArray(o.type) ? o.type : [o.type];
  return types.includes('string') && only(o, ['type']);
}

/** Whether an item schema's verdict on `{role, content: <string>}` does not depend on the content string. */
function itemIgnoresContent(items: unknown): boolean {
  if (!items || typeof items !== 'object') return false;
  const o = items as Schema;
  if (!only(o, ['type', 'properties', 'required', 'additionalProperties']) || (o.type !== undefined && o.type !== 'object')) return false;
  const props = (o.properties ?? {}) as Schema;
  if ('content' in props) return acceptsAnyString(props.content);
  return o.additionalProperties === undefined || o.additionalProperties === true;
}

/** Whether an array schema accepts the real conversation whenever it accepts the stand-in. */
function arrayTakesStandIn(s: Schema): boolean {
  return s.type === 'array' && only(s, ['type', 'items', 'minItems']) && itemIgnoresContent(s.items);
}

/** Whether the stand-in may decide for `key` under `schema` (the body's schema). */
export function standInDecides(schema: unknown, key: LazyKey): boolean {
  const prop = ((schema as Schema | undefined)?.properties as Schema | undefined)?.[key] as Schema | undefined;
  if (!prop || typeof prop !== 'object') return false;
  if (Array.isArray(prop.anyOf)) {
    // A union: the array branches must take the stand-in; the others must refuse every array.
    return only(prop, ['anyOf']) && prop.anyOf.every((b: Schema) => (b?.type === 'array' ? arrayTakesStandIn(b) : typeof b?.type === 'string' && b.type !== 'array'));
  }
  return arrayTakesStandIn(prop);
}

/**
 * Whether the stand-in may decide for a Gemini `contents` (items `{role, parts: [{text}]}`, core/lazy-scan.ts) under
 * `schema`: an array (with at most a minItems) of contents whose verdict depends on the role alone — `parts` an array
 * of parts that take any `text` string and require nothing else — and no other constrained key.
 */
export function contentsStandInDecides(schema: unknown): boolean {
  const prop = ((schema as Schema | undefined)?.properties as Schema | undefined)?.contents as Schema | undefined;
  if (!prop || typeof prop !== 'object' || prop.type !== 'array' || !only(prop, ['type', 'items', 'minItems'])) return false;
  const item = prop.items as Schema | undefined;
  if (!item || typeof item !== 'object' || !only(item, ['type', 'properties', 'required', 'additionalProperties']) || item.type !== 'object') return false;
  const props = (item.properties ?? {}) as Schema;
  if (Object.keys(props).some((k) => k !== 'role' && k !== 'parts')) return false;
  const parts = props.parts as Schema | undefined;
  if (!parts || parts.type !== 'array' || !only(parts, ['type', 'items'])) return false;
  const part = parts.items as Schema | undefined;
  if (!part || typeof part !== 'object' || part.type !== 'object' || (Array.isArray(part.required) && part.required.length > 0)) return false;
  if (part.additionalProperties === false) return false;
  return acceptsAnyString(((part.properties ?? {}) as Schema).text);
}

/** `validate` (compiled from `schema`) made to validate lazy bodies through the stand-in where it decides. */
export function lazyAware(validate: Validate, schema: unknown): Validate {
  const decides = { messages: standInDecides(schema, 'messages'), input: standInDecides(schema, 'input'), contents: contentsStandInDecides(schema) };
  if (!decides.messages && !decides.input && !decides.contents) return validate;
  const checked = ((data: unknown) => {
    const key: LazyKey | null = data && typeof data === 'object' ? (lazyConversation(data, 'messages') ? 'messages' : lazyConversation(data, 'input') ? 'input' : lazyConversation(data, 'contents') ? 'contents' : null) : null;
    const conversation = key ? lazyConversation(data as object, key) : null;
    if (key && conversation && decides[key]) {
      const body = without(data as Record<string, unknown>, key);
      body[key] = standIn(conversation);
      if (validate(body) === true) {
        checked.errors = null;
        return true;
      }
    }
    const ok = validate(data);
    checked.errors = validate.errors;
    return ok;
  }) as Validate;
  checked.errors = null;
  return checked;
}
