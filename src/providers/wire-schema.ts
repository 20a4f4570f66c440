/**
 * Upstream replies validated at the edge (as the Vercel AI SDK providers do): each protocol describes, as a TypeBox
 * schema, the fields its parser reads and the types it relies on — unknown fields allowed, so providers may add
 * anything — compiled once. A reply that does not fit becomes an UpstreamError 502 naming the field and what was
 * wrong, instead of a TypeError (or a silently wrong count) deep inside the parser.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { ValueError } from '@sinclair/typebox/errors';
import { UpstreamError } from '../core/provider-errors.js';

/** `T` or null (providers send null for absent values). */
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
/** An optional field that may also be null. */
export const Opt = <T extends TSchema>(t: T) => Type.Optional(Nullable(t));
/** A token count: a number, null or absent. */
export const Count = Opt(Type.Number());

/** A JSON pointer (`/choices/0/message`) as a field path (`choices[0].message`). */
export function fieldPath(pointer: string): string {
  let out = '';
  for (const seg of pointer.split('/').slice(1)) {
    const s = seg.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(s) ? `[${s}]` : out === '' ? s : `.${s}`;
  }
  return out;
}

/** What a schema accepts, in words: "a string or null". */
export function expected(s: TSchema): string {
  if (Array.isArray(s.anyOf)) return (s.anyOf as TSchema[]).map(expected).join(' or ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  switch (s.type) {
    case 'array':
      return 'an array';
    case 'object':
      return 'an object';
    case 'integer':
      return 'an integer';
    case 'null':
      return 'null';
    default:
      return typeof s.type === 'string' ? `a ${s.type}` : 'a valid value';
  }
}

function got(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return v.length > 40 ? 'a string' : JSON.stringify(v);
  return typeof v === 'object' ? 'an object' : typeof v === 'number' || typeof v === 'boolean' ? String(v) : typeof v;
}

/** The raw value kept on the error: bounded, as the other upstream errors keep theirs. */
function rawOf(value: unknown): unknown {
  const s = JSON.stringify(value) ?? '';
  return s.length > 4096 ? s.slice(0, 4096) : value;
}

/**
 * The most precise error: inside a union (`T or null`), the error of the variant that went deepest — "usage.
 * prompt_tokens must be a number", not "usage must be an object or null" when usage is an object.
 */
function deepest(e: ValueError): ValueError {
  let best = e;
  for (const it of e.errors ?? []) {
    const inner = it.First();
    if (inner && inner.path.length > best.path.length) best = deepest(inner);
  }
  return best;
}

/**
 * A compiled check of one kind of upstream reply (`what`: "response", "stream event", …), optionally of a part of it
 * (`at`: the part's path, e.g. `content[2]`). It returns the value typed by the schema, or throws UpstreamError(502): "Provider returned an invalid <what>: <field> must be <expected>
 * (got <value>)".
 */
export function wireCheck<T extends TSchema>(schema: T, what: string): (value: unknown, at?: string) => Static<T> {
  const check = TypeCompiler.Compile(schema);
  return (value, at = '') => {
    if (check.Check(value)) return value;
    const first = check.Errors(value).First();
    const e = first && deepest(first);
    const inner = e ? fieldPath(e.path) : '';
    const field = at && inner && !inner.startsWith('[') ? `${at}.${inner}` : at + inner;
    const problem = !e ? 'does not fit' : e.value === undefined ? 'is missing' : `must be ${expected(e.schema)} (got ${got(e.value)})`;
    throw new UpstreamError(502, `Provider returned an invalid ${what}: ${field || 'the body'} ${problem}`, 'provider_unavailable', 200, rawOf(value));
  };
}
