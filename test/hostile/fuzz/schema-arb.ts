/**
 * fast-check arbitraries from the JSON Schemas of the served OpenAPI document: values that satisfy the schema most of
 * the time (enums, formats, bounds, required fields, some optional ones), with a few field-name hints so that valid
 * requests reach deep code (a known model id rather than a random string).
 */
import fc from 'fast-check';

export type Schema = Record<string, any>;

export interface ArbContext {
  components: Record<string, Schema>;
  /** Values for string fields by name (model ids, …): used most of the time when the name matches. */
  hints: Record<string, string[]>;
}

function deref(s: Schema, ctx: ArbContext): Schema {
  let cur = s;
  for (let i = 0; i < 10 && cur && typeof cur.$ref === 'string'; i++) cur = ctx.components[cur.$ref.replace(/^#\/components\/schemas\//, '')] ?? {};
  return cur ?? {};
}

function stringArb(s: Schema, name: string | null, ctx: ArbContext): fc.Arbitrary<string> {
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum.filter((v: unknown) => typeof v === 'string') as string[]).concat(s.enum.length ? [] : ['x']));
  if (typeof s.const === 'string') return fc.constant(s.const);
  const hint = name ? ctx.hints[name] : undefined;
  const min = s.minLength ?? 0;
  const max = Math.max(min, Math.min(s.maxLength ?? 24, 48));
  let base: fc.Arbitrary<string>;
  switch (s.format) {
    case 'date-time':
      base = fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
      break;
    case 'date':
      base = fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
      break;
    case 'uuid':
      base = fc.uuid();
      break;
    case 'uri':
    case 'url':
      base = fc.constantFrom('https://example.com/hook', 'http://127.0.0.1:9/x', 'https://localhost.:8443/x', 'ftp://x');
      break;
    case 'email':
      base = fc.emailAddress();
      break;
    default:
      base = s.pattern ? fc.stringMatching(new RegExp(s.pattern)).map((x) => (s.maxLength !== undefined ? x.slice(0, s.maxLength) : x)) : fc.string({ minLength: min, maxLength: max });
  }
  return hint ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...hint) }, { weight: 1, arbitrary: base }) : base;
}

function numberArb(s: Schema): fc.Arbitrary<number> {
  const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -5);
  const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : Math.max(lo + 100, 100));
  if (s.type === 'integer') return fc.integer({ min: Math.ceil(Math.max(lo, -1e9)), max: Math.floor(Math.min(hi, 1e9)) });
  return fc.double({ min: Math.max(lo, -1e9), max: Math.min(hi, 1e9), noNaN: true, noDefaultInfinity: true });
}

/** An arbitrary of values for a schema; `depth` bounds recursion through nested/recursive schemas. */
export function arbFor(schema: Schema, ctx: ArbContext, name: string | null = null, depth = 0): fc.Arbitrary<unknown> {
  const s = deref(schema, ctx);
  if (depth > 6) return fc.constant(null);
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0) return fc.constantFrom(...s.enum);
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts) && alts.length > 0) return fc.oneof(...alts.map((a: Schema) => arbFor(a, ctx, name, depth + 1)));
  if (Array.isArray(s.allOf) && s.allOf.length > 0) return arbFor(Object.assign({}, ...s.allOf.map((a: Schema) => deref(a, ctx))), ctx, name, depth + 1);
  const type = Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : ['string', 'number', 'object'];
  if (type.length > 1) return fc.oneof(...type.map((t: string) => arbFor({ ...s, type: t }, ctx, name, depth)));
  switch (type[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number':
      return numberArb(s);
    case 'string':
      return stringArb(s, name, ctx);
    case 'array': {
      const min = s.minItems ?? 0;
      const max = Math.max(min, Math.min(s.maxItems ?? 3, 3));
      return fc.array(arbFor(s.items ?? {}, ctx, name, depth + 1), { minLength: min, maxLength: max });
    }
    case 'object': {
      const props: Record<string, Schema> = s.properties ?? {};
      const required = new Set<string>(s.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) record[k] = arbFor(v, ctx, k, depth + 1);
      if (Object.keys(record).length === 0) {
        const valueSchema = typeof s.additionalProperties === 'object' ? s.additionalProperties : { type: 'string', maxLength: 8 };
        return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), arbFor(valueSchema, ctx, null, depth + 1), { maxKeys: 3 });
      }
      return fc.record(record, { requiredKeys: [...required].filter((k) => k in record) });
    }
    default:
      return fc.anything({ maxDepth: 2 });
  }
}
