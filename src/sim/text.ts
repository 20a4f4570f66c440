/**
 * Deterministic text and token generation shared by all simulated protocols.
 *
 * Rules (documented so tests and benchmarks can rely on them):
 * - a text of N characters counts as ceil(N / 4) tokens;
 * - a reply is a list of pieces; one piece = one token = one streamed chunk;
 * - the same input always yields the same pieces.
 */

/** Tokens of a text of `chars` characters. */
export function tokensOfChars(chars: number): number {
  return Math.ceil(chars / 4);
}

/** 32-bit FNV-1a hash of (at most the first 4096 characters of) a string, mixed with its length. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  const n = Math.min(s.length, 4096);
  for (let i = 0; i < n; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h ^ s.length) >>> 0;
}

/** Small deterministic PRNG (mulberry32) returning integers in [0, 2^32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const FILLER = (
  'the quick model gateway routes each request to a simulated provider which answers with ' +
  'deterministic words so that tests benchmarks and demos can rely on stable output while ' +
  'latency errors and streaming behaviour are shaped by knobs set per provider or per request'
).split(' ');

/** The first `n` whitespace-separated words of a text (looks at its first 400 characters only). */
export function leadingWords(text: string, n: number): string[] {
  const words = text.slice(0, 400).split(/\s+/);
  const out: string[] = [];
  for (const w of words) {
    if (w !== '') out.push(w);
    if (out.length === n) break;
  }
  return out;
}

/**
 * Reply pieces: `lead` words, then up to 6 words of `seedText`, then filler
 * words picked by a PRNG seeded from `seedText`; exactly `count` pieces.
 * Pieces after the first carry their leading space, so `pieces.join('')` is the text.
 */
export function replyPieces(lead: string, seedText: string, count: number): string[] {
  const out: string[] = [];
  const push = (w: string) => {
    if (out.length < count) out.push(out.length === 0 ? w : ' ' + w);
  };
  for (const w of lead.split(' ')) if (w !== '') push(w);
  for (const w of leadingWords(seedText, 6)) push(w);
  const next = prng(hash32(seedText));
  while (out.length < count) push(FILLER[next() % FILLER.length]);
  if (count > 0 && out.length === count) out[count - 1] += '.';
  return out;
}

/** Split a fixed text into word pieces (leading whitespace kept with the word); joins back to `text`. */
export function splitWords(text: string): string[] {
  const out: string[] = text.match(/\s*\S+/g) ?? [];
  const used = out.reduce((n, p) => n + p.length, 0);
  if (used < text.length) {
    // Trailing whitespace (or an all-whitespace text).
    if (out.length > 0) out[out.length - 1] += text.slice(used);
    else out.push(text);
  }
  return out;
}

/** Split a text into pieces of `size` characters (used for JSON output and tool arguments). */
/** The chunks of a fixed reply (`content` knob): word by word, or `chunkChars` characters each when set. */
export function contentPieces(content: string, chunkChars: number | undefined): string[] {
  return chunkChars && chunkChars > 0 ? splitFixed(content, chunkChars) : splitWords(content);
}

export function splitFixed(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/**
 * Cut pieces at the earliest occurrence of any stop sequence (the stop text
 * itself is not emitted). Returns `undefined` when no stop sequence occurs.
 */
export function applyStop(pieces: string[], stops: readonly string[]): string[] | undefined {
  const text = pieces.join('');
  let cut = -1;
  for (const s of stops) {
    if (s === '') continue;
    const i = text.indexOf(s);
    if (i !== -1 && (cut === -1 || i < cut)) cut = i;
  }
  if (cut === -1) return undefined;
  const out: string[] = [];
  let pos = 0;
  for (const p of pieces) {
    if (pos >= cut) break;
    out.push(pos + p.length <= cut ? p : p.slice(0, cut - pos));
    pos += p.length;
  }
  return out;
}

type Schema = Record<string, unknown>;

function isObj(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Text of a message `content` (a string, or an array of parts whose `text` fields are joined); '' otherwise. */
export function partsText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  let s = '';
  for (const p of c) if (isObj(p) && typeof p.text === 'string') s += p.text;
  return s;
}

/** Resolve a local `$ref` (`#/$defs/X`, `#/definitions/X`, ...) against the root schema. */
function resolveRef(ref: string, root: Schema): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let cur: unknown = root;
  for (const part of ref.slice(1).split('/')) {
    if (part === '') continue;
    if (!isObj(cur)) return undefined;
    cur = cur[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return isObj(cur) ? cur : undefined;
}

/**
 * A deterministic placeholder value conforming (at a basic level) to a JSON
 * schema: objects get their required properties (all properties when
 * `required` is absent), enums their first value, arrays one item.
 */
export function sampleFromSchema(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (!isObj(schema) || depth > 12) return null;
  const r = isObj(root) ? root : schema;
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(schema.$ref, r);
    return target ? sampleFromSchema(target, r, depth + 1) : null;
  }
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list) && list.length > 0) {
      const pick = list.find((s) => !(isObj(s) && s.type === 'null')) ?? list[0];
      return sampleFromSchema(pick, r, depth + 1);
    }
  }
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? type[0];
  if (type === undefined && isObj(schema.properties)) type = 'object';
  switch (type) {
    case 'object': {
      const props = isObj(schema.properties) ? schema.properties : {};
      const keys = Array.isArray(schema.required)
        ? schema.required.filter((k): k is string => typeof k === 'string')
        : Object.keys(props);
      const out: Record<string, unknown> = {};
      for (const k of keys) out[k] = sampleFromSchema(props[k] ?? { type: 'string' }, r, depth + 1);
      return out;
    }
    case 'array': {
      const min = typeof schema.minItems === 'number' ? Math.max(1, schema.minItems) : 1;
      return Array.from({ length: Math.min(min, 3) }, () => sampleFromSchema(schema.items ?? {}, r, depth + 1));
    }
    case 'string':
      return 'example';
    case 'integer':
      return typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : 1;
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1.5;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return 'example';
  }
}
