/**
 * The catalog file format, as one TypeBox schema: the `providers`, `models` and `endpoints` sections an operator writes
 * in the config file (docs/configuration.md) and the shipped catalog files under src/catalog/ are written in (snake_case,
 * prices in USD per token as decimal strings). `catalogFileProblems` lists every mistake with its path
 * (`endpoints[2].pricing.prompt must be …`); the rules the shape cannot say (an endpoint names a known model and
 * provider, …) are checked where the catalog is built (core/catalog-build.ts). Pure; no I/O.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType } from '@sinclair/typebox/value';

/** The schema keyword holding what a value must be: a problem reads `<path> <rule>`. */
export const RULE = 'x-rule';
/** Set on schemas whose problems quote the offending value (never on secrets). */
const GOT = 'x-got';

/** A plain non-negative decimal, without exponent: the only way prices are written. */
export const DECIMAL_PATTERN = '^\\d+(\\.\\d+)?$';
export const DECIMAL = new RegExp(DECIMAL_PATTERN);

const rule = (text: string, extra: Record<string, unknown> = {}) => ({ [RULE]: text, ...extra });
const oneOf = (values: readonly string[], text: string) => Type.Union(values.map((v) => Type.Literal(v)), rule(text));
const nullable = (s: TSchema, text: string) => Type.Optional(Type.Union([s, Type.Null()], rule(text)));
const opt = Type.Optional;
const str = (text = 'must be a string') => opt(Type.String(rule(text)));
const bool = (text = 'must be true or false') => opt(Type.Boolean(rule(text)));
const strings = (text = 'must be a list of strings') => Type.Array(Type.String(), rule(text));

export const PROTOCOLS = ['openai', 'anthropic', 'google', 'openai-responses', 'azure-openai', 'azure-openai-responses', 'bedrock', 'vertex', 'vertex-anthropic'] as const;
export const SPEECH_PROTOCOL_NAMES = ['openai-tts', 'gemini-tts', 'azure-openai-tts'] as const;
export const AUDIO_FORMAT_NAMES = ['mp3', 'pcm'] as const;
export const RERANK_PROTOCOL_NAMES = ['jina', 'cohere', 'voyage', 'bedrock-rerank'] as const;
export const VIDEO_PROTOCOL_NAMES = ['openai-video', 'google-veo'] as const;
export const IMAGE_PROTOCOL_NAMES = ['openai-images', 'gemini-image', 'azure-openai-images', 'bedrock-image'] as const;

const DataPolicy = Type.Object(
  { training: bool(), retains_prompts: bool(), zdr: bool() },
  { additionalProperties: false, [RULE]: 'must be a mapping of training, retains_prompts, zdr (true or false)' },
);

const timeout = opt(Type.Integer({ minimum: 1, [RULE]: 'must be a positive integer (milliseconds)' }));
const Timeouts = Type.Object(
  { connect_ms: timeout, first_byte_ms: timeout, idle_ms: timeout, total_ms: timeout },
  { additionalProperties: false, [RULE]: 'must be a mapping' },
);

export const ProviderEntry = Type.Object(
  {
    slug: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]*$', [RULE]: 'must be a lowercase slug' }),
    name: str(),
    protocol: opt(oneOf(PROTOCOLS, `must be one of ${PROTOCOLS.join(', ')}`)),
    base_url: opt(Type.String({ pattern: '^https?://[^/]+', [RULE]: 'must be an http(s) URL' })),
    api_key: str(),
    api_key_env: str('must be the name of an environment variable'),
    no_auth: bool(),
    headers: opt(Type.Record(Type.String(), Type.String(), rule('must map header names to strings'))),
    data_policy: opt(DataPolicy),
    timeouts: opt(Timeouts),
    max_connections: opt(Type.Integer({ minimum: 1, maximum: 1_000_000, [RULE]: 'must be an integer from 1 to 1000000 (connections to the provider at once)' })),
    http2: bool(),
    cloud: opt(Type.Record(Type.String(), Type.String(), rule('must map cloud settings to strings (docs/clouds.md)'))),
    token_counting: nullable(Type.Literal('openai-responses'), "must be openai-responses (OpenAI's /responses/input_tokens) or null"),
    privacy_policy_url: nullable(Type.String(), 'must be a URL or null'),
    terms_of_service_url: nullable(Type.String(), 'must be a URL or null'),
    status_page_url: nullable(Type.String(), 'must be a URL or null'),
    headquarters: nullable(Type.String(), 'must be a country code or null'),
    datacenters: nullable(Type.Array(Type.String()), 'must be a list of country or region codes, or null'),
  },
  { additionalProperties: false },
);

/** A bare model id (an alias such as `claude-sonnet-4-5`) or an `author/slug` id. */
export const ALIAS_PATTERN = '^([A-Za-z0-9._:-]+|[^/\\s]+/[^\\s]+)$';

const Reasoning = Type.Object(
  {
    default_effort: nullable(Type.String(), 'must be a string or null'),
    default_enabled: bool(),
    mandatory: bool(),
    supported_efforts: opt(strings()),
  },
  { additionalProperties: false },
);

export const ModelEntry = Type.Object(
  {
    id: Type.String({ pattern: '^[^/\\s]+/[^\\s]+$', [RULE]: 'must look like author/slug' }),
    aliases: opt(Type.Array(Type.String({ pattern: ALIAS_PATTERN }), rule('must be a list of model ids: author/slug, or bare ids of letters, digits, dots, dashes, underscores and colons'))),
    canonical_slug: str(),
    name: str(),
    created: opt(Type.Integer({ minimum: 0, [RULE]: 'must be a Unix time in seconds' })),
    description: str(),
    context_length: opt(Type.Integer({ minimum: 0, [RULE]: 'must be a non-negative integer (tokens)' })),
    input_modalities: opt(strings()),
    output_modalities: opt(strings()),
    tokenizer: str(),
    instruct_type: nullable(Type.String(), 'must be a string or null'),
    reasoning: nullable(Reasoning, 'must be a mapping (default_effort, default_enabled, mandatory, supported_efforts) or null'),
    knowledge_cutoff: nullable(Type.String(), 'must be a date (YYYY-MM-DD) or null'),
    expiration_date: nullable(Type.String(), 'must be a date (YYYY-MM-DD) or null'),
    hugging_face_id: nullable(Type.String(), 'must be a string or null'),
    default_parameters: nullable(Type.Record(Type.String(), Type.Unknown()), 'must be a mapping or null'),
    supported_voices: nullable(Type.Array(Type.String()), 'must be a list of strings or null'),
  },
  { additionalProperties: false },
);

/** Price fields of an endpoint (core/catalog-types.ts `Pricing`): USD per token, per unit or per second. */
export const PRICE_FIELDS = ['prompt', 'completion', 'request', 'image', 'input_cache_read', 'input_cache_write', 'internal_reasoning', 'characters', 'search_unit', 'audio', 'audio_second', 'video_second', 'video', 'image_output'] as const;

// A number is accepted where it prints as a plain decimal (`prompt: 0`); the loader checks that and keeps the string.
const price = Type.Union([Type.String({ pattern: DECIMAL_PATTERN }), Type.Number({ minimum: 0 })], rule('must be a non-negative decimal string like "0.0000025"', { [GOT]: true }));
export const PricingEntry = Type.Object(
  { ...Object.fromEntries(PRICE_FIELDS.map((k) => [k, opt(price)])), discount: opt(Type.Number({ minimum: 0, maximum: 1, [RULE]: 'must be a number from 0 to 1' })) },
  { additionalProperties: false },
);

const VideoEntry = Type.Object(
  {
    protocol: opt(oneOf(VIDEO_PROTOCOL_NAMES, `must be one of ${VIDEO_PROTOCOL_NAMES.join(', ')}`)),
    resolutions: nullable(Type.Array(Type.String({ minLength: 1 })), 'must be a list of strings or null'),
    aspect_ratios: nullable(Type.Array(Type.String({ minLength: 1 })), 'must be a list of strings or null'),
    sizes: nullable(Type.Array(Type.String({ minLength: 1 })), 'must be a list of strings or null'),
    durations: nullable(Type.Array(Type.Integer({ minimum: 1 })), 'must be a list of positive integers (seconds) or null'),
    frame_images: nullable(Type.Array(Type.Union([Type.Literal('first_frame'), Type.Literal('last_frame')])), 'must be a list of first_frame, last_frame, or null'),
    generate_audio: nullable(Type.Boolean(), 'must be true, false or null'),
    seed: nullable(Type.Boolean(), 'must be true, false or null'),
    allowed_passthrough_parameters: opt(Type.Array(Type.String({ minLength: 1 }), rule('must be a list of strings'))),
    default_duration: opt(Type.Integer({ minimum: 1, [RULE]: 'must be a positive integer (seconds)' })),
    default_resolution: str(),
    second_price_by_resolution: opt(Type.Record(Type.String(), Type.String({ pattern: DECIMAL_PATTERN }), rule('must map resolutions to decimal strings (USD per second)'))),
  },
  { additionalProperties: false, [RULE]: 'must be a mapping (protocol, resolutions, aspect_ratios, sizes, durations, …)' },
);

const tokens = (text: string) => nullable(Type.Integer({ minimum: 1 }), text);
export const EndpointEntry = Type.Object(
  {
    model: Type.String(rule('must name a model of the catalog', { [GOT]: true })),
    provider: Type.String(rule('must name a configured provider', { [GOT]: true })),
    tag: str(),
    upstream_model: str(),
    pricing: nullable(PricingEntry, 'must be a mapping of decimal strings (USD per token) or null'),
    context_length: opt(Type.Integer({ minimum: 0, [RULE]: 'must be a non-negative integer (tokens)' })),
    max_prompt_tokens: tokens('must be a positive integer or null'),
    max_completion_tokens: tokens('must be a positive integer or null'),
    quantization: str(),
    supported_parameters: opt(strings()),
    data_policy: opt(DataPolicy),
    is_moderated: bool(),
    supports_implicit_caching: bool(),
    speech_protocol: opt(oneOf(SPEECH_PROTOCOL_NAMES, `must be one of ${SPEECH_PROTOCOL_NAMES.join(', ')}`)),
    audio_formats: opt(Type.Array(Type.Union(AUDIO_FORMAT_NAMES.map((f) => Type.Literal(f))), { minItems: 1, [RULE]: `must be a non-empty list of ${AUDIO_FORMAT_NAMES.join(', ')}` })),
    rerank_protocol: opt(oneOf(RERANK_PROTOCOL_NAMES, `must be one of ${RERANK_PROTOCOL_NAMES.join(', ')}`)),
    video: opt(VideoEntry),
    image_protocol: opt(oneOf(IMAGE_PROTOCOL_NAMES, `must be one of ${IMAGE_PROTOCOL_NAMES.join(', ')}`)),
  },
  { additionalProperties: false },
);

/** A catalog file: the shipped files under src/catalog/, and the catalog sections of the operator's config file. */
export const CatalogFile = Type.Object(
  {
    providers: opt(Type.Array(ProviderEntry, rule('must be a list of mappings'))),
    models: opt(Type.Array(ModelEntry, rule('must be a list of mappings'))),
    endpoints: opt(Type.Array(EndpointEntry, rule('must be a list of mappings'))),
  },
  { additionalProperties: false },
);

/** The catalog sections of a file. */
export const CATALOG_SECTIONS = ['providers', 'models', 'endpoints'] as const;

/** `/endpoints/2/pricing/prompt` → `endpoints[2].pricing.prompt`. */
export function pathName(segments: readonly string[]): string {
  return segments.reduce((out, s) => (/^\d+$/.test(s) ? `${out}[${s}]` : out ? `${out}.${s}` : s), '');
}

type Node = TSchema & Record<string, unknown>;

/** The child schema at one path segment (through unions, arrays, records); undefined where the schema says nothing. */
function child(node: Node, segment: string): Node | undefined {
  if (Array.isArray(node.anyOf)) {
    for (const branch of node.anyOf as Node[]) {
      const c = child(branch, segment);
      if (c) return c;
    }
    return undefined;
  }
  if (node.type === 'array' && /^\d+$/.test(segment)) return node.items as Node;
  if (node.type === 'object') {
    const props = node.properties as Record<string, Node> | undefined;
    if (props?.[segment]) return props[segment];
    const patterns = node.patternProperties as Record<string, Node> | undefined;
    if (patterns) return Object.values(patterns)[0];
  }
  return undefined;
}

function quote(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? 'nothing' : s.length > 80 ? `${s.slice(0, 77)}…` : s;
}

/** The branch of a union that a value's JSON type selects, when it is a mapping or a list (to report inside it). */
function branchFor(union: Node, value: unknown): Node | undefined {
  const type = Array.isArray(value) ? 'array' : value !== null && typeof value === 'object' ? 'object' : null;
  if (!type) return undefined;
  const matches = (union.anyOf as Node[]).filter((b) => b.type === type);
  if (matches.length !== 1) return undefined;
  // The branch reports under the union's rule where it has none of its own.
  return { ...matches[0], [RULE]: matches[0][RULE] ?? union[RULE], [GOT]: matches[0][GOT] ?? union[GOT] } as Node;
}

const at = (value: unknown, segments: readonly string[]): unknown => segments.reduce<unknown>((v, s) => (v as Record<string, unknown> | null)?.[s], value);

/**
 * Every problem of `value` against `schema`, one line each: `<path> <rule>`, where the path names the innermost value
 * on the way to the mistake whose schema carries a rule (a list's rule covers its items), after `prefix` segments.
 */
export function schemaProblems(schema: TSchema, value: unknown, prefix: readonly string[] = [], unknownKey = 'field'): string[] {
  const out = new Set<string>();
  for (const e of Value.Errors(schema, value)) {
    const segments = e.path.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (e.type === ValueErrorType.ObjectAdditionalProperties) {
      const parent = segments.slice(0, -1).reduce<Node | undefined>((n, s) => (n ? child(n, s) : undefined), schema as Node);
      const known = Object.keys((parent?.properties as object | undefined) ?? {});
      out.add(`${pathName([...prefix, ...segments])} is not a known ${unknownKey}${known.length ? `; known: ${known.join(', ')}` : ''}`);
      continue;
    }
    const here = at(value, segments);
    if (e.type === ValueErrorType.Union) {
      const branch = branchFor(e.schema as Node, here);
      if (branch) {
        for (const p of schemaProblems(branch, here, [...prefix, ...segments], unknownKey)) out.add(p);
        continue;
      }
    }
    let node: Node | undefined = schema as Node;
    let depth = -1;
    for (let i = 0; i <= segments.length && node; i++) {
      if (typeof node[RULE] === 'string') depth = i;
      if (i < segments.length) node = child(node, segments[i]);
    }
    if (depth < 0) {
      out.add(`${pathName([...prefix, ...segments])} ${e.message.toLowerCase()}`.trim());
      continue;
    }
    const where = segments.slice(0, depth);
    const ruled = where.reduce<Node>((n, s) => child(n, s)!, schema as Node);
    const got = ruled[GOT] ? ` (got ${quote(at(value, where))})` : '';
    out.add(`${pathName([...prefix, ...where])} ${ruled[RULE] as string}${got}`);
  }
  return [...out];
}

/** Every shape problem of a catalog file (or of the catalog sections of a config file), each with its path. */
export function catalogFileProblems(file: Record<string, unknown>): string[] {
  const sections = Object.fromEntries(CATALOG_SECTIONS.filter((k) => file[k] !== undefined).map((k) => [k, file[k]]));
  return schemaProblems(CatalogFile, sections);
}
