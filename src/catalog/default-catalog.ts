/**
 * The default catalog the gateway ships: popular current models and the providers'
 * endpoints that serve them, with public list prices.
 *
 * Conventions
 * - Model ids are `author/slug` as OpenRouter names them; `upstreamModel` is the
 *   provider's own id.
 * - Prices are written here in USD per MILLION tokens (as the price lists publish
 *   them) and converted by `usdPerM` to exact decimal strings in USD per token
 *   ("0.15" → "0.00000015"), never through floating point, never with an exponent.
 * - Standard (non-batch, non-priority) list prices. Where a provider charges more for
 *   long prompts (Gemini Pro > 200K, GPT-5.x > 272K, Grok > 200K, Claude Haiku 5.5
 *   > 100K), the endpoint's `max_prompt_tokens` is capped at the threshold so the flat
 *   price below is always the price actually charged.
 * - `input_cache_write` only where a per-token write price is published (Anthropic:
 *   1.25× input for the default 5-minute cache). `internal_reasoning` only where it
 *   differs from the completion price (nowhere in this list: every provider here bills
 *   reasoning tokens as output).
 * - `expiration_date` is the upstream shutdown date the provider has announced.
 * - `supports_implicit_caching` is true where the provider caches prompt prefixes
 *   automatically and bills cache hits at the published `input_cache_read` price
 *   (Anthropic caching is explicit, via `cache_control`, so false there).
 *
 * All figures checked 2026-11 against the sources cited at the top of each block;
 * models.dev (github.com/anomalyco/models.dev, per-provider TOML files) and
 * OpenRouter's /models listings were used as cross-checks.
 *
 * Deliberately absent (shut down before 2026-11 per the providers' deprecation pages):
 * gpt-4.1-nano and o4-mini (OpenAI, 2026-10-23), claude-sonnet-4 / claude-opus-4
 * (2026-06-15) and claude-opus-4.1 (2026-08-05), Groq's llama-3.3-70b-versatile
 * (2026-08-16) and Llama 4 on Groq, Mistral's own mistral-small-2506 (2026-07-31).
 *
 * Pure data; no I/O.
 */
import type {
  Architecture,
  Catalog,
  EndpointDef,
  ModelDef,
  Pricing,
  ReasoningInfo,
} from '../core/catalog-types.js';
import { DEFAULT_PROVIDERS } from './providers.js';
import { DEFAULT_VIDEO_ENDPOINTS, DEFAULT_VIDEO_MODELS } from './video-catalog.js';
import { DEFAULT_EMBEDDING_ENDPOINTS, DEFAULT_EMBEDDING_MODELS } from './embedding-catalog.js';
import { DEFAULT_TRANSCRIPTION_ENDPOINTS, DEFAULT_TRANSCRIPTION_MODELS } from './transcription-catalog.js';
import { DEFAULT_RERANK_ENDPOINTS, DEFAULT_RERANK_MODELS } from './rerank-catalog.js';

/** Month the figures in this file were last checked against the public sources. */
export const DEFAULT_CATALOG_CHECKED = '2026-11';

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/**
 * USD per million tokens (a plain decimal string such as "2.50") → USD per token as
 * an exact decimal string without exponent ("0.0000025"). Throws on malformed input.
 */
export function perMillionToPerToken(usdPerMillion: string): string {
  if (!/^\d+(\.\d+)?$/.test(usdPerMillion)) {
    throw new Error(`invalid price "${usdPerMillion}": expected a plain decimal string`);
  }
  const [intPart, fracPart = ''] = usdPerMillion.split('.');
  let digits = (intPart + fracPart).replace(/^0+/, '');
  if (digits === '') return '0';
  // value = digits / 10^scale
  let scale = fracPart.length + 6;
  while (scale > 0 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    scale--;
  }
  if (scale === 0) return digits;
  if (digits.length > scale) {
    return `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  }
  return `0.${'0'.repeat(scale - digits.length)}${digits}`;
}

interface ExtraPrices {
  /** Cached-input (cache hit) price, USD per million tokens. */
  read?: string;
  /** Cache-write price, USD per million tokens. */
  write?: string;
  /** Reasoning-token price, USD per million tokens (only when ≠ completion). */
  reasoning?: string;
}

/** Builds a per-token `Pricing` from per-million list prices. */
function usdPerM(prompt: string, completion: string, extra: ExtraPrices = {}): Pricing {
  const pricing: Pricing = {
    prompt: perMillionToPerToken(prompt),
    completion: perMillionToPerToken(completion),
  };
  if (extra.read !== undefined) pricing.input_cache_read = perMillionToPerToken(extra.read);
  if (extra.write !== undefined) pricing.input_cache_write = perMillionToPerToken(extra.write);
  if (extra.reasoning !== undefined) {
    pricing.internal_reasoning = perMillionToPerToken(extra.reasoning);
  }
  return pricing;
}

/** Unix seconds at 00:00 UTC of an ISO date (YYYY-MM-DD). */
function unix(isoDate: string): number {
  const ms = Date.parse(`${isoDate}T00:00:00Z`);
  if (Number.isNaN(ms)) throw new Error(`invalid date "${isoDate}"`);
  return ms / 1000;
}

/** Architecture whose `modality` string is derived from the modality lists. */
function arch(input: string[], tokenizer: string, output: string[] = ['text']): Architecture {
  return {
    modality: `${input.join('+')}->${output.join('+')}`,
    input_modalities: input,
    output_modalities: output,
    tokenizer,
    instruct_type: null,
  };
}

function reasoning(
  supported_efforts: string[],
  default_effort: string | null,
  opts: { enabled?: boolean; mandatory?: boolean } = {},
): ReasoningInfo {
  const mandatory = opts.mandatory ?? false;
  return {
    default_effort,
    default_enabled: mandatory || (opts.enabled ?? true),
    mandatory,
    supported_efforts,
  };
}

const TEXT = ['text'];
const TEXT_IMAGE = ['text', 'image'];
const TEXT_IMAGE_FILE = ['text', 'image', 'file'];
const GEMINI_INPUTS = ['text', 'image', 'file', 'audio', 'video'];

/** Fields every model shares unless overridden. */
function model(
  m: Omit<ModelDef, 'default_parameters' | 'supported_voices' | 'expiration_date' | 'hugging_face_id'> &
    Partial<Pick<ModelDef, 'default_parameters' | 'supported_voices' | 'expiration_date' | 'hugging_face_id'>>,
): ModelDef {
  return {
    expiration_date: null,
    hugging_face_id: null,
    default_parameters: null,
    supported_voices: null,
    ...m,
  };
}

// ---------------------------------------------------------------------------
// Supported request parameters, per provider / protocol
// ---------------------------------------------------------------------------

const REASONING_PARAMS = ['reasoning', 'include_reasoning'];

/** OpenAI chat (non-reasoning) models. */
const OPENAI_CHAT = [
  'temperature',
  'top_p',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'response_format',
  'structured_outputs',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
];

/** OpenAI reasoning models (o-series, GPT-5 family): no sampling parameters. */
const OPENAI_REASONING = [
  'max_tokens',
  'max_completion_tokens',
  'seed',
  'response_format',
  'structured_outputs',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  ...REASONING_PARAMS,
  'reasoning_effort',
];
const OPENAI_GPT5 = [...OPENAI_REASONING, 'verbosity'];

/** Anthropic Messages API, Claude 4.x (sampling parameters accepted). */
const ANTHROPIC_4 = [
  'temperature',
  'top_p',
  'top_k',
  'max_tokens',
  'stop',
  'tools',
  'tool_choice',
  'response_format',
  'structured_outputs',
  ...REASONING_PARAMS,
  'verbosity',
];
/** Claude 5.x: non-default temperature/top_p/top_k are rejected with a 400. */
const ANTHROPIC_5 = ANTHROPIC_4.filter((p) => !['temperature', 'top_p', 'top_k'].includes(p));

/** Gemini generateContent. */
const GOOGLE = [
  'temperature',
  'top_p',
  'max_tokens',
  'stop',
  'seed',
  'response_format',
  'structured_outputs',
  'tools',
  'tool_choice',
  ...REASONING_PARAMS,
];

const GROQ = [
  'temperature',
  'top_p',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'response_format',
  'structured_outputs',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
];

const TOGETHER = [
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'max_tokens',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'seed',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'response_format',
  'tools',
  'tool_choice',
];

const FIREWORKS = [
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'max_tokens',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'seed',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'response_format',
  'structured_outputs',
  'tools',
  'tool_choice',
];

const DEEPINFRA = [
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'max_tokens',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'seed',
  'logprobs',
  'response_format',
  'tools',
  'tool_choice',
];

const DEEPSEEK = [
  'temperature',
  'top_p',
  'max_tokens',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'logprobs',
  'top_logprobs',
  'response_format',
  'tools',
  'tool_choice',
  ...REASONING_PARAMS,
  'reasoning_effort',
];

const MISTRAL = [
  'temperature',
  'top_p',
  'max_tokens',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'response_format',
  'structured_outputs',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
];

/** xAI reasoning models reject stop / presence_penalty / frequency_penalty. */
const XAI_REASONING = [
  'temperature',
  'top_p',
  'max_tokens',
  'seed',
  'logprobs',
  'top_logprobs',
  'response_format',
  'structured_outputs',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  ...REASONING_PARAMS,
  'reasoning_effort',
];

/** Adds the reasoning controls to an open-model provider's parameter list. */
function withReasoning(params: string[], effort = false): string[] {
  return [...params, ...REASONING_PARAMS, ...(effort ? ['reasoning_effort'] : [])];
}

/** Endpoint defaults: not moderated, no prompt cap; caching follows the pricing. */
function endpoint(
  e: Omit<EndpointDef, 'tag' | 'is_moderated' | 'supports_implicit_caching' | 'max_prompt_tokens'> &
    Partial<Pick<EndpointDef, 'tag' | 'is_moderated' | 'supports_implicit_caching' | 'max_prompt_tokens'>>,
): EndpointDef {
  return {
    tag: e.provider,
    max_prompt_tokens: null,
    is_moderated: e.provider === 'openai' || e.provider === 'anthropic',
    supports_implicit_caching:
      e.provider !== 'anthropic' && e.pricing !== null && e.pricing.input_cache_read !== undefined,
    ...e,
    supported_parameters: [...e.supported_parameters],
  };
}

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------

export const DEFAULT_MODELS: ModelDef[] = [
  // ---- OpenAI ---------------------------------------------------------------
  // Sources (checked 2026-11): developers.openai.com/api/docs/pricing (standard tier,
  // cached input), developers.openai.com/api/docs/deprecations (shutdown dates: gpt-5,
  // gpt-5-mini, o3 on 2026-12-11; gpt-4o, gpt-4o-mini, gpt-4.1, gpt-4.1-mini on
  // 2027-01-14), models.dev providers/openai/*.toml, OpenRouter /models.
  model({
    id: 'openai/gpt-4o',
    canonical_slug: 'openai/gpt-4o-2024-08-06',
    name: 'OpenAI: GPT-4o',
    created: unix('2024-05-13'),
    description:
      "OpenAI's GPT-4o (\"omni\") multimodal chat model for text and image input, superseded by the GPT-5 family.",
    context_length: 128_000,
    architecture: arch(TEXT_IMAGE_FILE, 'GPT'),
    reasoning: null,
    knowledge_cutoff: '2023-10-01',
    expiration_date: '2027-01-14',
  }),
  model({
    id: 'openai/gpt-4o-mini',
    canonical_slug: 'openai/gpt-4o-mini-2024-07-18',
    name: 'OpenAI: GPT-4o-mini',
    created: unix('2024-07-18'),
    description: 'Small, low-cost GPT-4o variant for high-volume multimodal chat.',
    context_length: 128_000,
    architecture: arch(TEXT_IMAGE_FILE, 'GPT'),
    reasoning: null,
    knowledge_cutoff: '2023-10-01',
    expiration_date: '2027-01-14',
  }),
  model({
    id: 'openai/gpt-4.1',
    canonical_slug: 'openai/gpt-4.1-2025-04-14',
    name: 'OpenAI: GPT-4.1',
    created: unix('2025-04-14'),
    description:
      'Non-reasoning GPT-4.1 flagship with a 1M-token context, tuned for instruction following, coding and tool use.',
    context_length: 1_047_576,
    architecture: arch(TEXT_IMAGE_FILE, 'GPT'),
    reasoning: null,
    knowledge_cutoff: '2024-06-01',
    expiration_date: '2027-01-14',
  }),
  model({
    id: 'openai/gpt-4.1-mini',
    canonical_slug: 'openai/gpt-4.1-mini-2025-04-14',
    name: 'OpenAI: GPT-4.1 Mini',
    created: unix('2025-04-14'),
    description: 'Mid-sized GPT-4.1 model with a 1M-token context at a fraction of the flagship price.',
    context_length: 1_047_576,
    architecture: arch(TEXT_IMAGE_FILE, 'GPT'),
    reasoning: null,
    knowledge_cutoff: '2024-06-01',
    expiration_date: '2027-01-14',
  }),
  model({
    id: 'openai/o3',
    canonical_slug: 'openai/o3-2025-04-16',
    name: 'OpenAI: o3',
    created: unix('2025-04-16'),
    description: "OpenAI's o3 reasoning model for math, science, coding and visual reasoning.",
    context_length: 200_000,
    architecture: arch(TEXT_IMAGE_FILE, 'GPT'),
    reasoning: reasoning(['low', 'medium', 'high'], 'medium', { mandatory: true }),
    knowledge_cutoff: '2024-06-01',
    expiration_date: '2026-12-11',
  }),
  model({
    id: 'openai/gpt-5',
    canonical_slug: 'openai/gpt-5-2025-08-07',
    name: 'OpenAI: GPT-5',
    created: unix('2025-08-07'),
    description: "OpenAI's GPT-5 reasoning model for coding, agentic tasks and long-context work.",
    context_length: 400_000,
    architecture: arch(TEXT_IMAGE_FILE, 'GPT'),
    reasoning: reasoning(['minimal', 'low', 'medium', 'high'], 'medium', { mandatory: true }),
    knowledge_cutoff: '2024-09-30',
    expiration_date: '2026-12-11',
  }),
  model({
    id: 'openai/gpt-5-mini',
    canonical_slug: 'openai/gpt-5-mini-2025-08-07',
    name: 'OpenAI: GPT-5 Mini',
    created: unix('2025-08-07'),
    description: 'Smaller, cheaper GPT-5 reasoning model for well-defined tasks.',
    context_length: 400_000,
    architecture: arch(TEXT_IMAGE_FILE, 'GPT'),
    reasoning: reasoning(['minimal', 'low', 'medium', 'high'], 'medium', { mandatory: true }),
    knowledge_cutoff: '2024-05-31',
    expiration_date: '2026-12-11',
  }),
  model({
    id: 'openai/gpt-5.5',
    canonical_slug: 'openai/gpt-5.5-20260423',
    name: 'OpenAI: GPT-5.5',
    created: unix('2026-04-23'),
    description:
      "OpenAI's GPT-5.5 frontier reasoning model with a 1M-token context for complex coding and professional work.",
    context_length: 1_050_000,
    architecture: arch(TEXT_IMAGE_FILE, 'GPT'),
    reasoning: reasoning(['none', 'low', 'medium', 'high', 'xhigh'], 'medium'),
    knowledge_cutoff: '2025-12-01',
  }),
  // OpenAI open-weight models (Apache-2.0), served by the open-model hosts below.
  model({
    id: 'openai/gpt-oss-120b',
    canonical_slug: 'openai/gpt-oss-120b',
    name: 'OpenAI: gpt-oss-120b',
    created: unix('2025-08-05'),
    description:
      "OpenAI's open-weight 117B-parameter mixture-of-experts reasoning model (5.1B active), natively MXFP4.",
    context_length: 131_072,
    architecture: arch(TEXT, 'GPT'),
    reasoning: reasoning(['low', 'medium', 'high'], 'medium', { mandatory: true }),
    knowledge_cutoff: '2024-06-01',
    hugging_face_id: 'openai/gpt-oss-120b',
  }),
  model({
    id: 'openai/gpt-oss-20b',
    canonical_slug: 'openai/gpt-oss-20b',
    name: 'OpenAI: gpt-oss-20b',
    created: unix('2025-08-05'),
    description:
      "OpenAI's open-weight 21B-parameter mixture-of-experts reasoning model (3.6B active) for low-latency use.",
    context_length: 131_072,
    architecture: arch(TEXT, 'GPT'),
    reasoning: reasoning(['low', 'medium', 'high'], 'medium', { mandatory: true }),
    knowledge_cutoff: '2024-06-01',
    hugging_face_id: 'openai/gpt-oss-20b',
  }),

  // ---- Anthropic ------------------------------------------------------------
  // Sources (checked 2026-11): platform.claude.com/docs/en/about-claude/pricing (base
  // input, 5-minute cache write, cache hit, output), platform.claude.com/docs/en/models/
  // <model>/overview (context, max output, thinking, default effort, knowledge cutoff,
  // lifecycle), .../model-deprecations; models.dev providers/anthropic/*.toml.
  // Opus 4.6, Sonnet 4.6 and Haiku 4.5 are "legacy" (still served); the 5.5 family is
  // current. Claude Opus 5.5's release date is approximate (late Sept. 2026).
  model({
    id: 'anthropic/claude-opus-4.6',
    canonical_slug: 'anthropic/claude-4.6-opus-20260205',
    name: 'Anthropic: Claude Opus 4.6',
    created: unix('2026-02-05'),
    description:
      "Anthropic's Claude Opus 4.6 for agentic coding and long-horizon professional work, with a 1M-token context.",
    context_length: 1_000_000,
    architecture: arch(TEXT_IMAGE_FILE, 'Claude'),
    reasoning: reasoning(['low', 'medium', 'high', 'max'], 'high', { enabled: false }),
    knowledge_cutoff: '2025-05-31',
  }),
  model({
    id: 'anthropic/claude-sonnet-4.6',
    canonical_slug: 'anthropic/claude-4.6-sonnet-20260217',
    name: 'Anthropic: Claude Sonnet 4.6',
    created: unix('2026-02-17'),
    description: 'Claude Sonnet 4.6 balances speed and intelligence for coding, agents and everyday work at scale.',
    context_length: 1_000_000,
    architecture: arch(TEXT_IMAGE_FILE, 'Claude'),
    reasoning: reasoning(['low', 'medium', 'high'], 'high', { enabled: false }),
    knowledge_cutoff: '2025-08-31',
  }),
  // Claude Sonnet 4.5 (legacy, still served): Claude Code's `claude-sonnet-4-5` and `claude-sonnet-4-5-20250929`.
  model({
    id: 'anthropic/claude-sonnet-4.5',
    canonical_slug: 'anthropic/claude-4.5-sonnet-20250929',
    name: 'Anthropic: Claude Sonnet 4.5',
    created: unix('2025-09-29'),
    description: 'Claude Sonnet 4.5 for coding and long-running agents, with extended thinking.',
    context_length: 200_000,
    architecture: arch(TEXT_IMAGE_FILE, 'Claude'),
    reasoning: reasoning(['low', 'medium', 'high'], null, { enabled: false }),
    knowledge_cutoff: '2025-01-31',
  }),
  model({
    id: 'anthropic/claude-haiku-4.5',
    canonical_slug: 'anthropic/claude-4.5-haiku-20251001',
    name: 'Anthropic: Claude Haiku 4.5',
    created: unix('2025-10-15'),
    description: 'Fast, low-cost Claude model with near-frontier coding ability and optional extended thinking.',
    context_length: 200_000,
    architecture: arch(TEXT_IMAGE_FILE, 'Claude'),
    reasoning: reasoning(['low', 'medium', 'high'], null, { enabled: false }),
    knowledge_cutoff: '2025-02-28',
  }),
  model({
    id: 'anthropic/claude-opus-5.5',
    canonical_slug: 'anthropic/claude-5.5-opus-20260924',
    name: 'Anthropic: Claude Opus 5.5',
    created: unix('2026-09-24'),
    description:
      "Anthropic's current Opus model for long-running agentic coding and knowledge work, with always-on adaptive thinking.",
    context_length: 1_000_000,
    architecture: arch(TEXT_IMAGE_FILE, 'Claude'),
    reasoning: reasoning(['low', 'medium', 'high', 'xhigh', 'max'], 'medium', { mandatory: true }),
    knowledge_cutoff: '2026-06-30',
  }),
  model({
    id: 'anthropic/claude-sonnet-5.5',
    canonical_slug: 'anthropic/claude-5.5-sonnet-20260928',
    name: 'Anthropic: Claude Sonnet 5.5',
    created: unix('2026-09-28'),
    description:
      "Anthropic's current Sonnet model for everyday coding, agents and documents, faster and more token-efficient than Sonnet 5.",
    context_length: 1_000_000,
    architecture: arch(TEXT_IMAGE_FILE, 'Claude'),
    reasoning: reasoning(['low', 'medium', 'high', 'xhigh', 'max'], 'high', { mandatory: true }),
    knowledge_cutoff: '2026-06-30',
  }),
  model({
    id: 'anthropic/claude-haiku-5.5',
    canonical_slug: 'anthropic/claude-5.5-haiku-20261007',
    name: 'Anthropic: Claude Haiku 5.5',
    created: unix('2026-10-07'),
    description: 'Fast Claude model for responsive assistance, classification and lightweight agents.',
    context_length: 1_000_000,
    architecture: arch(TEXT_IMAGE_FILE, 'Claude'),
    reasoning: reasoning(['low', 'medium', 'high'], 'medium'),
    knowledge_cutoff: '2026-06-30',
  }),

  // ---- Google ---------------------------------------------------------------
  // Sources (checked 2026-11): ai.google.dev/gemini-api/docs/pricing (paid tier, text/
  // image/video input ≤200K, context-cache read price), ai.google.dev/gemini-api/docs/
  // deprecations (gemini-2.5-pro and gemini-2.5-flash shut down 2026-12-01;
  // gemini-2.5-flash-lite not deprecated), models.dev providers/google/*.toml.
  // Audio input is billed higher on Flash ($1.00/M) and Flash-Lite ($0.30/M); Pricing
  // has no audio field, so the text rate is listed.
  model({
    id: 'google/gemini-2.5-pro',
    canonical_slug: 'google/gemini-2.5-pro',
    name: 'Google: Gemini 2.5 Pro',
    created: unix('2025-06-17'),
    description: "Google's Gemini 2.5 Pro thinking model for complex reasoning, coding and multimodal understanding.",
    context_length: 1_048_576,
    architecture: arch(GEMINI_INPUTS, 'Gemini'),
    reasoning: reasoning(['low', 'medium', 'high'], null, { mandatory: true }),
    knowledge_cutoff: '2025-01-31',
    expiration_date: '2026-12-01',
  }),
  model({
    id: 'google/gemini-2.5-flash',
    canonical_slug: 'google/gemini-2.5-flash',
    name: 'Google: Gemini 2.5 Flash',
    created: unix('2025-06-17'),
    description: 'Fast, cost-efficient Gemini 2.5 thinking model with a controllable thinking budget.',
    context_length: 1_048_576,
    architecture: arch(GEMINI_INPUTS, 'Gemini'),
    reasoning: reasoning(['low', 'medium', 'high'], null),
    knowledge_cutoff: '2025-01-31',
    expiration_date: '2026-12-01',
  }),
  model({
    id: 'google/gemini-2.5-flash-lite',
    canonical_slug: 'google/gemini-2.5-flash-lite',
    name: 'Google: Gemini 2.5 Flash Lite',
    created: unix('2025-07-22'),
    description: 'Lowest-cost Gemini 2.5 model for high-throughput tasks, with thinking off by default.',
    context_length: 1_048_576,
    architecture: arch(GEMINI_INPUTS, 'Gemini'),
    reasoning: reasoning(['low', 'medium', 'high'], null, { enabled: false }),
    knowledge_cutoff: '2025-01-31',
  }),
  model({
    id: 'google/gemini-3.5-flash',
    canonical_slug: 'google/gemini-3.5-flash-20260519',
    name: 'Google: Gemini 3.5 Flash',
    created: unix('2026-05-19'),
    description: "Google's generally available Gemini 3.5 Flash multimodal thinking model for fast agentic work.",
    context_length: 1_048_576,
    architecture: arch(GEMINI_INPUTS, 'Gemini'),
    reasoning: reasoning(['minimal', 'low', 'medium', 'high'], 'high', { mandatory: true }),
    knowledge_cutoff: '2025-01-31',
  }),
  model({
    id: 'google/gemini-3.1-pro-preview',
    canonical_slug: 'google/gemini-3.1-pro-preview-20260219',
    name: 'Google: Gemini 3.1 Pro Preview',
    created: unix('2026-02-19'),
    description: "Preview of Google's Gemini 3.1 Pro, its most capable model for reasoning, coding and multimodal tasks.",
    context_length: 1_048_576,
    architecture: arch(GEMINI_INPUTS, 'Gemini'),
    reasoning: reasoning(['low', 'medium', 'high'], 'high', { mandatory: true }),
    knowledge_cutoff: '2025-01-31',
  }),

  // ---- Meta Llama -------------------------------------------------------------
  // Sources (checked 2026-11): together.ai/pricing, deepinfra.com/<model> pages,
  // docs.fireworks.ai/serverless/pricing (size-based rate for >16B dense models),
  // models.dev providers/{togetherai,deepinfra}/…; Groq shut down
  // llama-3.3-70b-versatile on 2026-08-16 (console.groq.com/docs/deprecations).
  model({
    id: 'meta-llama/llama-3.3-70b-instruct',
    canonical_slug: 'meta-llama/llama-3.3-70b-instruct',
    name: 'Meta: Llama 3.3 70B Instruct',
    created: unix('2024-12-06'),
    description: "Meta's multilingual 70B instruction-tuned Llama 3.3 text model.",
    context_length: 131_072,
    architecture: arch(TEXT, 'Llama3'),
    reasoning: null,
    knowledge_cutoff: '2023-12-01',
    hugging_face_id: 'meta-llama/Llama-3.3-70B-Instruct',
  }),
  model({
    id: 'meta-llama/llama-4-maverick',
    canonical_slug: 'meta-llama/llama-4-maverick-17b-128e-instruct',
    name: 'Meta: Llama 4 Maverick',
    created: unix('2025-04-05'),
    description: "Meta's natively multimodal Llama 4 mixture-of-experts model with 128 experts (17B active).",
    context_length: 1_000_000,
    architecture: arch(TEXT_IMAGE, 'Llama4'),
    reasoning: null,
    knowledge_cutoff: '2024-08-01',
    hugging_face_id: 'meta-llama/Llama-4-Maverick-17B-128E-Instruct',
  }),
  model({
    id: 'meta-llama/llama-4-scout',
    canonical_slug: 'meta-llama/llama-4-scout-17b-16e-instruct',
    name: 'Meta: Llama 4 Scout',
    created: unix('2025-04-05'),
    description: "Meta's efficient multimodal Llama 4 mixture-of-experts model with 16 experts (17B active).",
    context_length: 327_680,
    architecture: arch(TEXT_IMAGE, 'Llama4'),
    reasoning: null,
    knowledge_cutoff: '2024-08-01',
    hugging_face_id: 'meta-llama/Llama-4-Scout-17B-16E-Instruct',
  }),

  // ---- DeepSeek -----------------------------------------------------------------
  // Sources (checked 2026-11): api-docs.deepseek.com/quick_start/pricing (V4 billed by
  // time of day since 2026-08-16: PEAK rates listed here, off-peak is exactly half;
  // `deepseek-flash` serves DeepSeek-V4.1-Flash), together.ai/pricing,
  // docs.fireworks.ai/serverless/pricing, deepinfra.com model pages, models.dev.
  model({
    id: 'deepseek/deepseek-chat',
    canonical_slug: 'deepseek/deepseek-chat-v3',
    name: 'DeepSeek: DeepSeek V3',
    created: unix('2024-12-26'),
    description: "DeepSeek's open-weight 671B mixture-of-experts chat model (37B active).",
    context_length: 163_840,
    architecture: arch(TEXT, 'DeepSeek'),
    reasoning: null,
    knowledge_cutoff: '2024-07-01',
    hugging_face_id: 'deepseek-ai/DeepSeek-V3',
  }),
  model({
    id: 'deepseek/deepseek-r1-0528',
    canonical_slug: 'deepseek/deepseek-r1-0528',
    name: 'DeepSeek: R1 0528',
    created: unix('2025-05-28'),
    description: "May 2025 update of DeepSeek's open-weight R1 reasoning model, with deeper reasoning and fewer hallucinations.",
    context_length: 163_840,
    architecture: arch(TEXT, 'DeepSeek'),
    reasoning: reasoning([], null, { mandatory: true }),
    knowledge_cutoff: '2024-07-01',
    hugging_face_id: 'deepseek-ai/DeepSeek-R1-0528',
  }),
  model({
    id: 'deepseek/deepseek-v4-pro',
    canonical_slug: 'deepseek/deepseek-v4-pro-20260424',
    name: 'DeepSeek: DeepSeek V4 Pro',
    created: unix('2026-04-24'),
    description:
      "DeepSeek's flagship open-weight V4 model with a 1M-token context and switchable thinking mode.",
    context_length: 1_048_576,
    architecture: arch(TEXT, 'DeepSeek'),
    reasoning: reasoning(['high', 'max'], 'high'),
    knowledge_cutoff: null,
    hugging_face_id: 'deepseek-ai/DeepSeek-V4-Pro',
  }),
  model({
    id: 'deepseek/deepseek-v4.1-flash',
    canonical_slug: 'deepseek/deepseek-v4.1-flash-20260908',
    name: 'DeepSeek: DeepSeek V4.1 Flash',
    created: unix('2026-09-08'),
    description:
      "DeepSeek's fast, low-cost open-weight V4.1 model with image understanding and switchable thinking mode.",
    context_length: 1_000_000,
    architecture: arch(TEXT_IMAGE, 'DeepSeek'),
    reasoning: reasoning(['low', 'high', 'max'], 'high'),
    knowledge_cutoff: '2025-05-01',
    hugging_face_id: 'deepseek-ai/DeepSeek-V4.1-Flash',
  }),

  // ---- Mistral ------------------------------------------------------------------
  // Sources (checked 2026-11): mistral.ai/pricing and docs.mistral.ai/models,
  // deepinfra.com/mistralai/Mistral-Small-3.2-24B-Instruct-2506, models.dev.
  model({
    id: 'mistralai/mistral-large-2512',
    canonical_slug: 'mistralai/mistral-large-2512',
    name: 'Mistral: Mistral Large 3 2512',
    created: unix('2025-12-02'),
    description: "Mistral's open-weight Mistral Large 3 mixture-of-experts flagship with vision and a 256K context.",
    context_length: 262_144,
    architecture: arch(TEXT_IMAGE, 'Mistral'),
    reasoning: null,
    knowledge_cutoff: null,
    hugging_face_id: 'mistralai/Mistral-Large-3-675B-Instruct-2512',
  }),
  model({
    id: 'mistralai/mistral-small-3.2-24b-instruct',
    canonical_slug: 'mistralai/mistral-small-3.2-24b-instruct-2506',
    name: 'Mistral: Mistral Small 3.2 24B',
    created: unix('2025-06-20'),
    description: "Mistral's open-weight 24B Small 3.2 model with improved instruction following and function calling.",
    context_length: 131_072,
    architecture: arch(TEXT_IMAGE, 'Mistral'),
    reasoning: null,
    knowledge_cutoff: '2025-03-01',
    hugging_face_id: 'mistralai/Mistral-Small-3.2-24B-Instruct-2506',
  }),

  // ---- Qwen ---------------------------------------------------------------------
  // Sources (checked 2026-11): deepinfra.com/Qwen/<model> pages, together.ai/pricing,
  // models.dev providers/{deepinfra,togetherai}/models/Qwen/*.toml.
  model({
    id: 'qwen/qwen3-235b-a22b-2507',
    canonical_slug: 'qwen/qwen3-235b-a22b-07-25',
    name: 'Qwen: Qwen3 235B A22B Instruct 2507',
    created: unix('2025-07-21'),
    description: "Alibaba's July 2025 non-thinking Qwen3 235B mixture-of-experts instruct model (22B active).",
    context_length: 262_144,
    architecture: arch(TEXT, 'Qwen3'),
    reasoning: null,
    knowledge_cutoff: null,
    hugging_face_id: 'Qwen/Qwen3-235B-A22B-Instruct-2507',
  }),
  model({
    id: 'qwen/qwen3.5-397b-a17b',
    canonical_slug: 'qwen/qwen3.5-397b-a17b-20260216',
    name: 'Qwen: Qwen3.5 397B A17B',
    created: unix('2026-02-16'),
    description: "Alibaba's open-weight Qwen3.5 397B mixture-of-experts multimodal model (17B active) with optional thinking.",
    context_length: 262_144,
    architecture: arch(TEXT_IMAGE, 'Qwen3'),
    reasoning: reasoning([], null),
    knowledge_cutoff: null,
    hugging_face_id: 'Qwen/Qwen3.5-397B-A17B',
  }),

  // ---- xAI ----------------------------------------------------------------------
  // Sources (checked 2026-11): docs.x.ai/developers/models and /pricing (≤200K-token
  // rates; cached input), docs.x.ai/developers/model-capabilities/text/reasoning.
  model({
    id: 'x-ai/grok-4.3',
    canonical_slug: 'x-ai/grok-4.3-20260417',
    name: 'xAI: Grok 4.3',
    created: unix('2026-04-17'),
    description: "xAI's Grok 4.3 reasoning model with a 1M-token context, vision and tool use.",
    context_length: 1_000_000,
    architecture: arch(TEXT_IMAGE, 'Grok'),
    reasoning: reasoning(['none', 'low', 'medium', 'high'], 'medium'),
    knowledge_cutoff: '2025-12-01',
  }),
];

// ---------------------------------------------------------------------------
// Endpoints (prices: USD per million tokens → per token via usdPerM)
// ---------------------------------------------------------------------------

export const DEFAULT_ENDPOINTS: EndpointDef[] = [
  // ---- OpenAI (developers.openai.com/api/docs/pricing, checked 2026-11) ----------
  endpoint({
    model: 'openai/gpt-4o',
    provider: 'openai',
    upstreamModel: 'gpt-4o',
    pricing: usdPerM('2.50', '10.00', { read: '1.25' }),
    context_length: 128_000,
    max_completion_tokens: 16_384,
    quantization: 'unknown',
    supported_parameters: OPENAI_CHAT,
  }),
  endpoint({
    model: 'openai/gpt-4o-mini',
    provider: 'openai',
    upstreamModel: 'gpt-4o-mini',
    pricing: usdPerM('0.15', '0.60', { read: '0.075' }),
    context_length: 128_000,
    max_completion_tokens: 16_384,
    quantization: 'unknown',
    supported_parameters: OPENAI_CHAT,
  }),
  endpoint({
    model: 'openai/gpt-4.1',
    provider: 'openai',
    upstreamModel: 'gpt-4.1',
    pricing: usdPerM('2.00', '8.00', { read: '0.50' }),
    context_length: 1_047_576,
    max_completion_tokens: 32_768,
    quantization: 'unknown',
    supported_parameters: OPENAI_CHAT,
  }),
  endpoint({
    model: 'openai/gpt-4.1-mini',
    provider: 'openai',
    upstreamModel: 'gpt-4.1-mini',
    pricing: usdPerM('0.40', '1.60', { read: '0.10' }),
    context_length: 1_047_576,
    max_completion_tokens: 32_768,
    quantization: 'unknown',
    supported_parameters: OPENAI_CHAT,
  }),
  endpoint({
    model: 'openai/o3',
    provider: 'openai',
    upstreamModel: 'o3',
    pricing: usdPerM('2.00', '8.00', { read: '0.50' }),
    context_length: 200_000,
    max_completion_tokens: 100_000,
    quantization: 'unknown',
    supported_parameters: OPENAI_REASONING,
  }),
  endpoint({
    model: 'openai/gpt-5',
    provider: 'openai',
    upstreamModel: 'gpt-5',
    pricing: usdPerM('1.25', '10.00', { read: '0.125' }),
    context_length: 400_000,
    max_prompt_tokens: 272_000,
    max_completion_tokens: 128_000,
    quantization: 'unknown',
    supported_parameters: OPENAI_GPT5,
  }),
  endpoint({
    model: 'openai/gpt-5-mini',
    provider: 'openai',
    upstreamModel: 'gpt-5-mini',
    pricing: usdPerM('0.25', '2.00', { read: '0.025' }),
    context_length: 400_000,
    max_prompt_tokens: 272_000,
    max_completion_tokens: 128_000,
    quantization: 'unknown',
    supported_parameters: OPENAI_GPT5,
  }),
  // GPT-5.5: prompts over 272K tokens are billed at $10/$45 (cached $1.00): capped.
  endpoint({
    model: 'openai/gpt-5.5',
    provider: 'openai',
    upstreamModel: 'gpt-5.5',
    pricing: usdPerM('5.00', '30.00', { read: '0.50' }),
    context_length: 1_050_000,
    max_prompt_tokens: 272_000,
    max_completion_tokens: 128_000,
    quantization: 'unknown',
    supported_parameters: OPENAI_GPT5,
  }),

  // ---- gpt-oss (console.groq.com/docs/models + groq.com/pricing,
  // docs.fireworks.ai/serverless/pricing, deepinfra.com/openai/*, together.ai/pricing;
  // checked 2026-11). Weights are natively MXFP4 and served as such. -------------
  endpoint({
    model: 'openai/gpt-oss-120b',
    provider: 'groq',
    upstreamModel: 'openai/gpt-oss-120b',
    pricing: usdPerM('0.15', '0.60', { read: '0.075' }),
    context_length: 131_072,
    max_completion_tokens: 65_536,
    quantization: 'fp4',
    supported_parameters: withReasoning(GROQ, true),
  }),
  endpoint({
    model: 'openai/gpt-oss-120b',
    provider: 'fireworks',
    upstreamModel: 'accounts/fireworks/models/gpt-oss-120b',
    pricing: usdPerM('0.15', '0.60', { read: '0.015' }),
    context_length: 131_072,
    max_completion_tokens: 32_768,
    quantization: 'fp4',
    supported_parameters: withReasoning(FIREWORKS, true),
  }),
  endpoint({
    model: 'openai/gpt-oss-120b',
    provider: 'deepinfra',
    upstreamModel: 'openai/gpt-oss-120b',
    pricing: usdPerM('0.05', '0.24'),
    context_length: 131_072,
    max_completion_tokens: 16_384,
    quantization: 'fp4',
    supported_parameters: withReasoning(DEEPINFRA, true),
  }),
  endpoint({
    model: 'openai/gpt-oss-120b',
    provider: 'together',
    upstreamModel: 'openai/gpt-oss-120b',
    pricing: usdPerM('0.15', '0.60'),
    context_length: 131_072,
    max_completion_tokens: null,
    quantization: 'fp4',
    supported_parameters: withReasoning(TOGETHER, true),
  }),
  endpoint({
    model: 'openai/gpt-oss-20b',
    provider: 'groq',
    upstreamModel: 'openai/gpt-oss-20b',
    pricing: usdPerM('0.075', '0.30', { read: '0.0375' }),
    context_length: 131_072,
    max_completion_tokens: 65_536,
    quantization: 'fp4',
    supported_parameters: withReasoning(GROQ, true),
  }),
  endpoint({
    model: 'openai/gpt-oss-20b',
    provider: 'fireworks',
    upstreamModel: 'accounts/fireworks/models/gpt-oss-20b',
    pricing: usdPerM('0.07', '0.30', { read: '0.035' }),
    context_length: 131_072,
    max_completion_tokens: 32_768,
    quantization: 'fp4',
    supported_parameters: withReasoning(FIREWORKS, true),
  }),
  endpoint({
    model: 'openai/gpt-oss-20b',
    provider: 'deepinfra',
    upstreamModel: 'openai/gpt-oss-20b',
    pricing: usdPerM('0.03', '0.14'),
    context_length: 131_072,
    max_completion_tokens: 16_384,
    quantization: 'fp4',
    supported_parameters: withReasoning(DEEPINFRA, true),
  }),

  // ---- Anthropic (platform.claude.com/docs/en/about-claude/pricing, checked 2026-11;
  // cache write = 5-minute write, 1.25× input; cache read = hit price) --------------
  endpoint({
    model: 'anthropic/claude-opus-4.6',
    provider: 'anthropic',
    upstreamModel: 'claude-opus-4-6',
    pricing: usdPerM('5.00', '25.00', { read: '0.50', write: '6.25' }),
    context_length: 1_000_000,
    max_completion_tokens: 128_000,
    quantization: 'unknown',
    supported_parameters: ANTHROPIC_4,
  }),
  endpoint({
    model: 'anthropic/claude-sonnet-4.6',
    provider: 'anthropic',
    upstreamModel: 'claude-sonnet-4-6',
    pricing: usdPerM('3.00', '15.00', { read: '0.30', write: '3.75' }),
    context_length: 1_000_000,
    max_completion_tokens: 128_000,
    quantization: 'unknown',
    supported_parameters: ANTHROPIC_4,
  }),
  endpoint({
    model: 'anthropic/claude-sonnet-4.5',
    provider: 'anthropic',
    upstreamModel: 'claude-sonnet-4-5-20250929',
    pricing: usdPerM('3.00', '15.00', { read: '0.30', write: '3.75' }),
    context_length: 200_000,
    max_completion_tokens: 64_000,
    quantization: 'unknown',
    supported_parameters: ANTHROPIC_4,
  }),
  endpoint({
    model: 'anthropic/claude-haiku-4.5',
    provider: 'anthropic',
    upstreamModel: 'claude-haiku-4-5-20251001',
    pricing: usdPerM('1.00', '5.00', { read: '0.10', write: '1.25' }),
    context_length: 200_000,
    max_completion_tokens: 64_000,
    quantization: 'unknown',
    supported_parameters: ANTHROPIC_4,
  }),
  endpoint({
    model: 'anthropic/claude-opus-5.5',
    provider: 'anthropic',
    upstreamModel: 'claude-opus-5-5',
    // Cache hits are 0.05× input on the 5.5 family.
    pricing: usdPerM('4.00', '20.00', { read: '0.20', write: '5.00' }),
    context_length: 1_000_000,
    max_completion_tokens: 128_000,
    quantization: 'unknown',
    supported_parameters: ANTHROPIC_5,
  }),
  endpoint({
    model: 'anthropic/claude-sonnet-5.5',
    provider: 'anthropic',
    upstreamModel: 'claude-sonnet-5-5',
    // Cache-hit price cut from $0.20 to $0.10/M on 2026-10-07.
    pricing: usdPerM('2.00', '10.00', { read: '0.10', write: '2.50' }),
    context_length: 1_000_000,
    max_completion_tokens: 128_000,
    quantization: 'unknown',
    supported_parameters: ANTHROPIC_5,
  }),
  // Haiku 5.5 is priced by prompt length: ≤100K tokens $0.10/$0.50 (cache write
  // $0.125, hit $0.01); above that $0.50/$2.50 for the whole request: capped at 100K.
  endpoint({
    model: 'anthropic/claude-haiku-5.5',
    provider: 'anthropic',
    upstreamModel: 'claude-haiku-5-5',
    pricing: usdPerM('0.10', '0.50', { read: '0.01', write: '0.125' }),
    context_length: 1_000_000,
    max_prompt_tokens: 100_000,
    max_completion_tokens: 128_000,
    quantization: 'unknown',
    supported_parameters: ANTHROPIC_5,
  }),

  // ---- Google AI Studio (ai.google.dev/gemini-api/docs/pricing, checked 2026-11) --
  // Pro models: prompts > 200K tokens are billed at a higher tier: capped at 200K.
  endpoint({
    model: 'google/gemini-2.5-pro',
    provider: 'google-ai-studio',
    upstreamModel: 'gemini-2.5-pro',
    pricing: usdPerM('1.25', '10.00', { read: '0.125' }),
    context_length: 1_048_576,
    max_prompt_tokens: 200_000,
    max_completion_tokens: 65_536,
    quantization: 'unknown',
    supported_parameters: GOOGLE,
  }),
  endpoint({
    model: 'google/gemini-2.5-flash',
    provider: 'google-ai-studio',
    upstreamModel: 'gemini-2.5-flash',
    pricing: usdPerM('0.30', '2.50', { read: '0.03' }),
    context_length: 1_048_576,
    max_completion_tokens: 65_536,
    quantization: 'unknown',
    supported_parameters: GOOGLE,
  }),
  endpoint({
    model: 'google/gemini-2.5-flash-lite',
    provider: 'google-ai-studio',
    upstreamModel: 'gemini-2.5-flash-lite',
    pricing: usdPerM('0.10', '0.40', { read: '0.01' }),
    context_length: 1_048_576,
    max_completion_tokens: 65_536,
    quantization: 'unknown',
    supported_parameters: GOOGLE,
  }),
  endpoint({
    model: 'google/gemini-3.5-flash',
    provider: 'google-ai-studio',
    upstreamModel: 'gemini-3.5-flash',
    pricing: usdPerM('1.50', '9.00', { read: '0.15' }),
    context_length: 1_048_576,
    max_completion_tokens: 65_536,
    quantization: 'unknown',
    supported_parameters: GOOGLE,
  }),
  endpoint({
    model: 'google/gemini-3.1-pro-preview',
    provider: 'google-ai-studio',
    upstreamModel: 'gemini-3.1-pro-preview',
    pricing: usdPerM('2.00', '12.00', { read: '0.20' }),
    context_length: 1_048_576,
    max_prompt_tokens: 200_000,
    max_completion_tokens: 65_536,
    quantization: 'unknown',
    supported_parameters: GOOGLE,
  }),

  // ---- Meta Llama (together.ai/pricing; deepinfra.com/meta-llama/*;
  // docs.fireworks.ai/serverless/pricing; checked 2026-11) --------------------------
  // "Turbo" endpoints are the providers' FP8 deployments.
  endpoint({
    model: 'meta-llama/llama-3.3-70b-instruct',
    provider: 'together',
    upstreamModel: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
    pricing: usdPerM('0.88', '0.88'),
    context_length: 131_072,
    max_completion_tokens: 8_192,
    quantization: 'fp8',
    supported_parameters: TOGETHER,
  }),
  endpoint({
    model: 'meta-llama/llama-3.3-70b-instruct',
    provider: 'deepinfra',
    upstreamModel: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
    pricing: usdPerM('0.10', '0.32'),
    context_length: 131_072,
    max_completion_tokens: 16_384,
    quantization: 'fp8',
    supported_parameters: DEEPINFRA,
  }),
  endpoint({
    model: 'meta-llama/llama-3.3-70b-instruct',
    provider: 'fireworks',
    upstreamModel: 'accounts/fireworks/models/llama-v3p3-70b-instruct',
    pricing: usdPerM('0.90', '0.90'),
    context_length: 131_072,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: FIREWORKS,
  }),
  endpoint({
    model: 'meta-llama/llama-4-maverick',
    provider: 'deepinfra',
    upstreamModel: 'meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8',
    pricing: usdPerM('0.15', '0.60'),
    context_length: 1_000_000,
    max_completion_tokens: 16_384,
    quantization: 'fp8',
    supported_parameters: DEEPINFRA,
  }),
  endpoint({
    model: 'meta-llama/llama-4-scout',
    provider: 'deepinfra',
    upstreamModel: 'meta-llama/Llama-4-Scout-17B-16E-Instruct',
    pricing: usdPerM('0.10', '0.30'),
    context_length: 327_680,
    max_completion_tokens: 16_384,
    quantization: 'bf16',
    supported_parameters: DEEPINFRA,
  }),

  // ---- DeepSeek (api-docs.deepseek.com/quick_start/pricing — PEAK rates, off-peak
  // is half; together.ai/pricing; docs.fireworks.ai/serverless/pricing;
  // deepinfra.com/deepseek-ai/*; checked 2026-11). DeepSeek V3/R1 weights are FP8. --
  endpoint({
    model: 'deepseek/deepseek-chat',
    provider: 'together',
    upstreamModel: 'deepseek-ai/DeepSeek-V3',
    pricing: usdPerM('1.25', '1.25'),
    context_length: 131_072,
    max_completion_tokens: null,
    quantization: 'fp8',
    supported_parameters: TOGETHER,
  }),
  endpoint({
    model: 'deepseek/deepseek-chat',
    provider: 'deepinfra',
    upstreamModel: 'deepseek-ai/DeepSeek-V3',
    pricing: usdPerM('0.32', '0.89'),
    context_length: 163_840,
    max_completion_tokens: 8_192,
    quantization: 'fp8',
    supported_parameters: DEEPINFRA,
  }),
  endpoint({
    model: 'deepseek/deepseek-r1-0528',
    provider: 'deepinfra',
    upstreamModel: 'deepseek-ai/DeepSeek-R1-0528',
    pricing: usdPerM('0.50', '2.15', { read: '0.35' }),
    context_length: 163_840,
    max_completion_tokens: 64_000,
    quantization: 'fp8',
    supported_parameters: withReasoning(DEEPINFRA),
  }),
  endpoint({
    model: 'deepseek/deepseek-r1-0528',
    provider: 'fireworks',
    upstreamModel: 'accounts/fireworks/models/deepseek-r1-0528',
    pricing: usdPerM('3.00', '8.00'),
    context_length: 163_840,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: withReasoning(FIREWORKS),
  }),
  endpoint({
    model: 'deepseek/deepseek-v4-pro',
    provider: 'deepseek',
    upstreamModel: 'deepseek-v4-pro',
    pricing: usdPerM('1.32', '3.96', { read: '0.044' }),
    context_length: 1_048_576,
    max_completion_tokens: 384_000,
    quantization: 'unknown',
    supported_parameters: DEEPSEEK,
  }),
  endpoint({
    model: 'deepseek/deepseek-v4-pro',
    provider: 'together',
    upstreamModel: 'deepseek-ai/DeepSeek-V4-Pro',
    pricing: usdPerM('2.10', '4.40', { read: '0.20' }),
    context_length: 512_000,
    max_completion_tokens: 384_000,
    quantization: 'unknown',
    supported_parameters: withReasoning(TOGETHER, true),
  }),
  endpoint({
    model: 'deepseek/deepseek-v4-pro',
    provider: 'fireworks',
    upstreamModel: 'accounts/fireworks/models/deepseek-v4-pro',
    pricing: usdPerM('1.74', '3.48', { read: '0.145' }),
    context_length: 1_000_000,
    max_completion_tokens: 131_072,
    quantization: 'unknown',
    supported_parameters: withReasoning(FIREWORKS, true),
  }),
  endpoint({
    model: 'deepseek/deepseek-v4-pro',
    provider: 'deepinfra',
    upstreamModel: 'deepseek-ai/DeepSeek-V4-Pro',
    pricing: usdPerM('1.30', '2.60', { read: '0.10' }),
    context_length: 1_048_576,
    max_completion_tokens: 16_384,
    quantization: 'unknown',
    supported_parameters: withReasoning(DEEPINFRA),
  }),
  endpoint({
    model: 'deepseek/deepseek-v4.1-flash',
    provider: 'deepseek',
    upstreamModel: 'deepseek-flash',
    pricing: usdPerM('0.30', '1.20', { read: '0.006' }),
    context_length: 1_000_000,
    max_completion_tokens: 384_000,
    quantization: 'unknown',
    supported_parameters: DEEPSEEK,
  }),
  endpoint({
    model: 'deepseek/deepseek-v4.1-flash',
    provider: 'together',
    upstreamModel: 'deepseek-ai/DeepSeek-V4.1-Flash',
    pricing: usdPerM('0.30', '1.20', { read: '0.006' }),
    context_length: 1_000_000,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: withReasoning(TOGETHER, true),
  }),
  endpoint({
    model: 'deepseek/deepseek-v4.1-flash',
    provider: 'deepinfra',
    upstreamModel: 'deepseek-ai/DeepSeek-V4.1-Flash',
    pricing: usdPerM('0.30', '1.20', { read: '0.006' }),
    context_length: 1_000_000,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: withReasoning(DEEPINFRA),
  }),

  // ---- Mistral (mistral.ai/pricing; deepinfra.com/mistralai/*; checked 2026-11) ----
  endpoint({
    model: 'mistralai/mistral-large-2512',
    provider: 'mistral',
    upstreamModel: 'mistral-large-2512',
    pricing: usdPerM('0.50', '1.50'),
    context_length: 262_144,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: MISTRAL,
  }),
  endpoint({
    model: 'mistralai/mistral-small-3.2-24b-instruct',
    provider: 'deepinfra',
    upstreamModel: 'mistralai/Mistral-Small-3.2-24B-Instruct-2506',
    pricing: usdPerM('0.075', '0.20'),
    context_length: 131_072,
    max_completion_tokens: 16_384,
    quantization: 'unknown',
    supported_parameters: DEEPINFRA,
  }),

  // ---- Qwen (deepinfra.com/Qwen/*; together.ai/pricing; checked 2026-11) ----------
  endpoint({
    model: 'qwen/qwen3-235b-a22b-2507',
    provider: 'deepinfra',
    upstreamModel: 'Qwen/Qwen3-235B-A22B-Instruct-2507',
    pricing: usdPerM('0.071', '0.10'),
    context_length: 262_144,
    max_completion_tokens: 81_920,
    quantization: 'fp8',
    supported_parameters: DEEPINFRA,
  }),
  endpoint({
    model: 'qwen/qwen3.5-397b-a17b',
    provider: 'together',
    upstreamModel: 'Qwen/Qwen3.5-397B-A17B',
    pricing: usdPerM('0.60', '3.60'),
    context_length: 262_144,
    max_completion_tokens: 130_000,
    quantization: 'unknown',
    supported_parameters: withReasoning(TOGETHER),
  }),
  endpoint({
    model: 'qwen/qwen3.5-397b-a17b',
    provider: 'deepinfra',
    upstreamModel: 'Qwen/Qwen3.5-397B-A17B',
    pricing: usdPerM('0.54', '3.40', { read: '0.27' }),
    context_length: 262_144,
    max_completion_tokens: 81_920,
    quantization: 'unknown',
    supported_parameters: withReasoning(DEEPINFRA),
  }),

  // ---- xAI (docs.x.ai/developers/pricing, checked 2026-11) ------------------------
  // Prompts over 200K tokens are billed at $2.50/$5.00 (cached $0.40): capped.
  endpoint({
    model: 'x-ai/grok-4.3',
    provider: 'xai',
    upstreamModel: 'grok-4.3',
    pricing: usdPerM('1.25', '2.50', { read: '0.20' }),
    context_length: 1_000_000,
    max_prompt_tokens: 200_000,
    max_completion_tokens: 30_000,
    quantization: 'unknown',
    supported_parameters: XAI_REASONING,
  }),
];

/** A fresh, deep copy of the default catalog (callers may mutate it freely). */
export function defaultCatalog(): Catalog {
  return structuredClone({
    providers: DEFAULT_PROVIDERS,
    models: DEFAULT_MODELS,
    endpoints: DEFAULT_ENDPOINTS,
  });
}

// ---------------------------------------------------------------------------
// Text-to-speech (POST /audio/speech; docs/speech.md)
// ---------------------------------------------------------------------------
// Kept apart from the chat lists above, whose invariants (token prices, chat parameters) speech endpoints do not
// share: `shippedCatalog()` is what the gateway loads. A speech endpoint names its speech API in `speech_protocol`
// and the formats it produces natively in `audio_formats`; `pricing.characters` is USD per input character.

const TEXT_TO_AUDIO = ['audio'];

/** OpenAI's built-in voices (developers.openai.com/api/docs/guides/text-to-speech, checked 2026-11). */
const OPENAI_TTS1_VOICES = ['alloy', 'ash', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer'];
const OPENAI_GPT_TTS_VOICES = [...OPENAI_TTS1_VOICES, 'ballad', 'verse', 'marin', 'cedar'];

/** Gemini's prebuilt voices (ai.google.dev/gemini-api/docs/speech-generation, checked 2026-11). */
const GEMINI_VOICES = [
  'Zephyr', 'Puck', 'Charon', 'Kore', 'Fenrir', 'Leda', 'Orus', 'Aoede', 'Callirrhoe', 'Autonoe',
  'Enceladus', 'Iapetus', 'Umbriel', 'Algieba', 'Despina', 'Erinome', 'Algenib', 'Rasalgethi', 'Laomedeia',
  'Achernar', 'Alnilam', 'Schedar', 'Gacrux', 'Pulcherrima', 'Achird', 'Zubenelgenubi', 'Vindemiatrix',
  'Sadachbia', 'Sadaltager', 'Sulafat',
];

/** USD per million characters → a per-character `Pricing` (no token prices). */
function usdPerMChars(perMillion: string): Pricing {
  return { prompt: '0', completion: '0', characters: perMillionToPerToken(perMillion) };
}

export const DEFAULT_SPEECH_MODELS: ModelDef[] = [
  // ---- OpenAI (developers.openai.com/api/docs/pricing, "Transcription and speech generation"; checked 2026-11) ----
  // tts-1 / tts-1-hd are billed per input character; gpt-4o-mini-tts per text-input and audio-output token.
  model({
    id: 'openai/tts-1',
    canonical_slug: 'openai/tts-1',
    name: 'OpenAI: TTS-1',
    created: unix('2023-11-06'),
    description: "OpenAI's low-latency text-to-speech model for real-time use.",
    context_length: 4096, // input limit: 4,096 characters
    architecture: arch(TEXT, 'GPT', TEXT_TO_AUDIO),
    reasoning: null,
    knowledge_cutoff: null,
    supported_voices: OPENAI_TTS1_VOICES,
  }),
  model({
    id: 'openai/tts-1-hd',
    canonical_slug: 'openai/tts-1-hd',
    name: 'OpenAI: TTS-1 HD',
    created: unix('2023-11-06'),
    description: "OpenAI's higher-quality text-to-speech model.",
    context_length: 4096,
    architecture: arch(TEXT, 'GPT', TEXT_TO_AUDIO),
    reasoning: null,
    knowledge_cutoff: null,
    supported_voices: OPENAI_TTS1_VOICES,
  }),
  model({
    id: 'openai/gpt-4o-mini-tts',
    canonical_slug: 'openai/gpt-4o-mini-tts-2025-12-15',
    name: 'OpenAI: GPT-4o mini TTS',
    created: unix('2025-03-20'),
    description: 'GPT-4o mini based text-to-speech model whose delivery can be steered with instructions.',
    context_length: 2000,
    architecture: arch(TEXT, 'GPT', TEXT_TO_AUDIO),
    reasoning: null,
    knowledge_cutoff: null,
    supported_voices: OPENAI_GPT_TTS_VOICES,
  }),
  // ---- Google (ai.google.dev/gemini-api/docs/pricing, checked 2026-11): text input and audio output tokens ----------
  model({
    id: 'google/gemini-2.5-flash-preview-tts',
    canonical_slug: 'google/gemini-2.5-flash-preview-tts',
    name: 'Google: Gemini 2.5 Flash Preview TTS',
    created: unix('2025-05-20'),
    description: 'Gemini 2.5 Flash text-to-speech model with controllable style, 24 kHz PCM output.',
    context_length: 8192,
    architecture: arch(TEXT, 'Gemini', TEXT_TO_AUDIO),
    reasoning: null,
    knowledge_cutoff: null,
    supported_voices: GEMINI_VOICES,
  }),
  model({
    id: 'google/gemini-2.5-pro-preview-tts',
    canonical_slug: 'google/gemini-2.5-pro-preview-tts',
    name: 'Google: Gemini 2.5 Pro Preview TTS',
    created: unix('2025-05-20'),
    description: 'Gemini 2.5 Pro text-to-speech model for high-fidelity narration, 24 kHz PCM output.',
    context_length: 8192,
    architecture: arch(TEXT, 'Gemini', TEXT_TO_AUDIO),
    reasoning: null,
    knowledge_cutoff: null,
    supported_voices: GEMINI_VOICES,
  }),
];

export const DEFAULT_SPEECH_ENDPOINTS: EndpointDef[] = [
  endpoint({
    model: 'openai/tts-1',
    provider: 'openai',
    upstreamModel: 'tts-1',
    pricing: usdPerMChars('15.00'),
    context_length: 4096,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: ['speed'],
    speech_protocol: 'openai-tts',
    audio_formats: ['mp3', 'pcm'],
  }),
  endpoint({
    model: 'openai/tts-1-hd',
    provider: 'openai',
    upstreamModel: 'tts-1-hd',
    pricing: usdPerMChars('30.00'),
    context_length: 4096,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: ['speed'],
    speech_protocol: 'openai-tts',
    audio_formats: ['mp3', 'pcm'],
  }),
  // `stream_format`: asked as SSE, whose final event reports the tokens billed (the raw byte stream carries none).
  endpoint({
    model: 'openai/gpt-4o-mini-tts',
    provider: 'openai',
    upstreamModel: 'gpt-4o-mini-tts',
    pricing: usdPerM('0.60', '12.00'),
    context_length: 2000,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: ['speed', 'instructions', 'stream_format'],
    speech_protocol: 'openai-tts',
    audio_formats: ['mp3', 'pcm'],
  }),
  // Gemini produces 24 kHz 16-bit PCM only: never routed for mp3 (no transcoding).
  endpoint({
    model: 'google/gemini-2.5-flash-preview-tts',
    provider: 'google-ai-studio',
    upstreamModel: 'gemini-2.5-flash-preview-tts',
    pricing: usdPerM('0.50', '10.00'),
    context_length: 8192,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: [],
    speech_protocol: 'gemini-tts',
    audio_formats: ['pcm'],
  }),
  endpoint({
    model: 'google/gemini-2.5-pro-preview-tts',
    provider: 'google-ai-studio',
    upstreamModel: 'gemini-2.5-pro-preview-tts',
    pricing: usdPerM('1.00', '20.00'),
    context_length: 8192,
    max_completion_tokens: null,
    quantization: 'unknown',
    supported_parameters: [],
    speech_protocol: 'gemini-tts',
    audio_formats: ['pcm'],
  }),
];

/** The catalog the gateway ships: the chat catalog plus the text-to-speech, video, embeddings, transcription and rerank models and endpoints (a fresh copy). */
export function shippedCatalog(): Catalog {
  const c = defaultCatalog();
  c.models.push(...structuredClone(DEFAULT_SPEECH_MODELS));
  c.endpoints.push(...structuredClone(DEFAULT_SPEECH_ENDPOINTS));
  // Video generation (POST /videos; src/catalog/video-catalog.ts, docs/videos.md).
  c.models.push(...structuredClone(DEFAULT_VIDEO_MODELS));
  c.endpoints.push(...structuredClone(DEFAULT_VIDEO_ENDPOINTS));
  // Embeddings (POST /embeddings; src/catalog/embedding-catalog.ts, docs/embeddings.md).
  c.models.push(...structuredClone(DEFAULT_EMBEDDING_MODELS));
  c.endpoints.push(...structuredClone(DEFAULT_EMBEDDING_ENDPOINTS));
  // Speech to text (POST /audio/transcriptions; src/catalog/transcription-catalog.ts, docs/transcriptions.md).
  c.models.push(...structuredClone(DEFAULT_TRANSCRIPTION_MODELS));
  c.endpoints.push(...structuredClone(DEFAULT_TRANSCRIPTION_ENDPOINTS));
  // Rerank (POST /rerank; src/catalog/rerank-catalog.ts, docs/rerank.md).
  c.models.push(...structuredClone(DEFAULT_RERANK_MODELS));
  c.endpoints.push(...structuredClone(DEFAULT_RERANK_ENDPOINTS));
  return c;
}
