/**
 * Fuzz cases of one OpenAPI operation: a request generated from its schemas, then mutated — one field replaced by a
 * hostile value or removed, the whole body replaced, the JSON text itself broken (deep nesting, 1e309, duplicate
 * keys, truncation, bad UTF-8, empty), the content type changed, oversized or hostile headers, hostile path and query
 * values.
 */
import fc from 'fast-check';
import { arbFor, type ArbContext, type Schema } from './schema-arb.js';

export interface Operation {
  method: string;
  /** Path template as served (`/api/v1/keys/{hash}` or `/health`). */
  path: string;
  op: Schema;
}

export interface FuzzCase {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** What was done, for the failure report. */
  label: string;
}

export interface Fixtures {
  /** The key each operation is mostly called with (management or inference), and the other one. */
  keys: string[];
  /** Index in `keys` of the key an operation takes, by `METHOD path`. */
  keyOf?: Record<string, number>;
  /** Valid bodies by `METHOD path`: mutations start from one of them half the time. */
  examples?: Record<string, unknown[]>;
  /** Path parameter values that exist, by parameter name. */
  params: Record<string, string[]>;
}

const RAW = (i: number) => `\u0001RAW${i}\u0001`;

/** Hostile JSON values (JSON-representable ones; raw texts like 1e309 go through RAW markers). */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, -1e308, 1e308, 2 ** 53 + 2, 1.5, -0.000001, '', ' ', 'a\u0000b', '\u0000', '\ud800', 'x\udfff', '\ud83d', '../../etc/passwd', '%00', '{}', 'null', 'NaN', '1e309'),
  fc.constantFrom([], {}, [null], [''], { '': '' }, { 'k\u0000': 1 }, { '\ud800': 1 }, ['\u0000']),
  fc.constant('x'.repeat(60_000)),
  fc.constant(Array.from({ length: 5000 }, (_, i) => i)),
  fc.constant(Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]))),
  fc.constant(JSON.parse('['.repeat(100) + ']'.repeat(100))),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.integer(),
  fc.double(),
);

/** Raw JSON texts no JSON value produces. */
const RAW_TEXTS = ['1e309', '-1e309', '1E400', '-0', '123456789012345678901234567890', '['.repeat(10_000) + ']'.repeat(10_000), '{"a":'.repeat(5000) + '1' + '}'.repeat(5000), '"\\ud800"', '"\\u0000"'];

const hostileParam = fc.oneof(
  fc.constantFrom('%00', 'a%00b', '%ED%A0%80', '%ff', '%', '..', '%2e%2e', '0', '-1', '99999999999999999999', '1e309', 'x'.repeat(400), '%F0%9F%98%80', 'null', 'undefined', '__proto__', 'constructor', '%20'),
  fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent),
);

const hostileQueryValue = fc.oneof(
  fc.constantFrom('%00', '%ED%A0%80', '-1', '0', '1e309', '99999999999999999999', 'abc', '', 'true', 'null', 'x'.repeat(3000), '%ff', '[]', '{}', '1.5', '2026-13-45', '%F0%9F%98%80'),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
);

function paths(v: unknown, prefix: Array<string | number> = [], out: Array<Array<string | number>> = [], depth = 0): Array<Array<string | number>> {
  if (depth > 8 || v === null || typeof v !== 'object') return out;
  for (const k of Array.isArray(v) ? v.keys() : Object.keys(v)) {
    const p = [...prefix, k];
    out.push(p);
    paths((v as any)[k], p, out, depth + 1);
  }
  return out;
}

function setAt(root: unknown, path: Array<string | number>, value: unknown, remove: boolean): unknown {
  const copy = structuredClone(root) as any;
  let cur = copy;
  for (let i = 0; i < path.length - 1; i++) cur = cur[path[i]];
  const last = path[path.length - 1];
  if (remove) {
    if (Array.isArray(cur)) cur.splice(Number(last), 1);
    else delete cur[last];
  } else cur[last] = value;
  return copy;
}

function parameters(op: Schema, where: string): Schema[] {
  return ((op.parameters ?? []) as Schema[]).filter((p) => p.in === where);
}

/** The arbitrary of fuzz cases of an operation. */
export function caseArb(o: Operation, ctx: ArbContext, fx: Fixtures): fc.Arbitrary<FuzzCase> {
  const json = o.op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
  const multipart = o.op.requestBody?.content?.['multipart/form-data']?.schema as Schema | undefined;
  const pathParams = parameters(o.op, 'path');
  const queryParams = parameters(o.op, 'query');
  const pathArb = fc.tuple(
    ...pathParams.map((p) => {
      const known = fx.params[p.name] ?? [];
      const valid = arbFor(p.schema ?? { type: 'string' }, ctx, p.name).map((v) => encodeURIComponent(String(v)));
      return fc.oneof({ weight: 3, arbitrary: known.length ? fc.constantFrom(...known) : valid }, { weight: 1, arbitrary: valid }, { weight: 2, arbitrary: hostileParam });
    }),
  );
  const queryArb = fc.tuple(
    ...queryParams.map((p) =>
      fc.option(
        fc.oneof({ weight: 3, arbitrary: arbFor(p.schema ?? { type: 'string' }, ctx, p.name).map((v) => encodeURIComponent(typeof v === 'object' ? JSON.stringify(v) : String(v))) }, { weight: 2, arbitrary: hostileQueryValue }),
        { freq: 2 },
      ),
    ),
  );
  const generated: fc.Arbitrary<unknown> = json ? arbFor(json, ctx) : multipart ? arbFor(multipart, ctx) : fc.constant(undefined);
  const known = fx.examples?.[`${o.method.toUpperCase()} ${o.path}`];
  const bodyArb = known?.length ? fc.oneof(fc.constantFrom(...known).map((v) => structuredClone(v)), generated) : generated;
  const mutation = fc.constantFrom('valid', 'valid', 'field', 'field', 'field', 'remove', 'root', 'raw', 'raw', 'content-type', 'headers', 'duplicate');
  return fc
    .record({
      pathValues: pathArb,
      queryValues: queryArb,
      extraQuery: fc.option(fc.tuple(fc.constantFrom('offset', 'limit', 'workspace_id', 'x', '%00', 'a[b]', 'limit'), hostileQueryValue), { freq: 5 }),
      body: bodyArb,
      mutation,
      pick: fc.nat(),
      hostile: hostileValue,
      raw: fc.constantFrom(...RAW_TEXTS),
      contentType: fc.constantFrom('text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '', 'application/json\u0000'),
      header: fc.constantFrom('oversized', 'auth-oversized', 'metadata', 'cache-ttl', 'request-id', 'no-auth', 'bad-auth'),
      key: fc.nat(9),
    })
    .map((r) => {
      let url = o.path;
      pathParams.forEach((p, i) => (url = url.replace(`{${p.name}}`, r.pathValues[i] as string)));
      const q: string[] = [];
      queryParams.forEach((p, i) => r.queryValues[i] !== null && q.push(`${p.name}=${r.queryValues[i]}`));
      if (r.extraQuery) q.push(`${r.extraQuery[0]}=${r.extraQuery[1]}`);
      if (q.length) url += `?${q.join('&')}`;
      // Mostly the key the route takes (found by a probe), sometimes the other kind.
      const right = fx.keyOf?.[`${o.method.toUpperCase()} ${o.path}`] ?? 0;
      const headers: Record<string, string> = { authorization: `Bearer ${fx.keys[r.key < 8 ? right : (right + 1) % fx.keys.length]}` };
      let label = `${r.mutation}`;
      let body: string | Buffer | undefined;
      let value = r.body;
      const hasBody = value !== undefined;
      const fieldPaths = hasBody ? paths(value) : [];
      const target = fieldPaths.length ? fieldPaths[r.pick % fieldPaths.length] : null;
      if (r.mutation === 'field' && target) {
        value = setAt(value, target, r.hostile, false);
        label += ` ${target.join('.')}=${JSON.stringify(r.hostile)?.slice(0, 60)}`;
      } else if (r.mutation === 'remove' && target) {
        value = setAt(value, target, undefined, true);
        label += ` ${target.join('.')}`;
      } else if (r.mutation === 'root') {
        value = r.hostile;
        label += ` ${JSON.stringify(r.hostile)?.slice(0, 60)}`;
      } else if (r.mutation === 'raw') {
        value = target ? setAt(value, target, RAW(0), false) : RAW(0);
        label += ` ${target?.join('.') ?? 'body'}=${r.raw.slice(0, 30)}`;
      }
      if (hasBody || r.mutation === 'root' || r.mutation === 'raw') {
        let text = JSON.stringify(value) ?? '';
        text = text.replace(JSON.stringify(RAW(0)), r.raw);
        if (r.mutation === 'duplicate' && text.startsWith('{"')) {
          const firstKey = /^\{("(?:[^"\\]|\\.)*")/.exec(text)?.[1];
          if (firstKey) text = `{${firstKey}:${JSON.stringify(r.hostile) ?? 'null'},${text.slice(1)}`;
        }
        if (r.mutation === 'raw' && r.pick % 7 === 0) text = text.slice(0, Math.max(0, text.length - 1 - (r.pick % 20)));
        body = r.mutation === 'raw' && r.pick % 11 === 0 ? Buffer.concat([Buffer.from(text.slice(0, 10)), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from(text.slice(10))]) : text;
        headers['content-type'] = 'application/json';
      }
      if (r.mutation === 'content-type') {
        label += ` ${JSON.stringify(r.contentType)}`;
        if (r.contentType) headers['content-type'] = r.contentType.replace('\u0000', '');
        else delete headers['content-type'];
        if (r.pick % 3 === 0) body = undefined;
        else body ??= 'model=x&input=y';
      }
      if (r.mutation === 'headers') {
        label += ` ${r.header}`;
        if (r.header === 'oversized') headers['x-pad'] = 'p'.repeat(70_000);
        if (r.header === 'auth-oversized') headers.authorization = `Bearer ${'k'.repeat(70_000)}`;
        if (r.header === 'metadata') headers['x-gateway-metadata'] = ['true', 'yes', '%00', 'x'.repeat(9000)][r.pick % 4];
        if (r.header === 'cache-ttl') Object.assign(headers, { 'x-gateway-cache': 'true', 'x-gateway-cache-ttl': ['-1', '1e309', 'abc', '99999999999999999999', '0'][r.pick % 5] });
        if (r.header === 'request-id') headers['x-request-id'] = 'r'.repeat(5000);
        if (r.header === 'no-auth') delete headers.authorization;
        if (r.header === 'bad-auth') headers.authorization = 'Bearer sk-gw-v1-' + 'z'.repeat(64);
      }
      if (multipart && hasBody && (r.mutation === 'valid' || r.mutation === 'field') && r.pick % 2 === 0) {
        const boundary = 'fuzzboundary';
        const parts = Object.entries(value as Record<string, unknown>).map(([k, v]) =>
          k === 'file'
            ? `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF....WAVEfmt \r\n`
            : `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${typeof v === 'string' ? v : JSON.stringify(v)}\r\n`,
        );
        body = parts.join('') + `--${boundary}--\r\n`;
        headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
        label += ' multipart';
      }
      return { method: o.method.toUpperCase(), url, headers, body, label };
    });
}
