/**
 * What one attempt reserves before its upstream call (docs/spend.md): an upper bound of its cost at the endpoint's
 * prices, and the wording of the 402 when a limit has no room for it. The prompt is bounded, not estimated: every
 * tokenizer the gateway meets (byte-level BPE, SentencePiece with byte fallback) spends at least one UTF-8 byte per
 * token, so the bytes of the request's text (with a few tokens of structure per JSON member) are never fewer than the
 * prompt tokens a provider bills — a reservation from it cannot be outgrown by the prompt.
 *
 * Pure logic: no I/O.
 */
import type { EndpointDef, Pricing } from './catalog-types.js';
import { lazyConversation, type LazyConversation } from './lazy-body.js';
import { formatNano, usdToNano } from './money.js';
import { computeCost, type CostOptions, type TokenUsage } from './pricing.js';
import { affordableOutputTokens, insufficientCreditsMessage, maxOutputTokens } from './spend.js';

/**
 * One attempt's reservation: its maximum cost (nano-dollars; null when the endpoint has no price — nothing to reserve,
 * but every limit must have room left), the tokens it may use at most (token rate limits reserve them) and the
 * refusal's message for the room left.
 */
export interface SpendAsk {
  nano: number | null;
  tokens: number;
  refusal(availableNano: number): string;
}

/** Tokens of framing per JSON object (a message's role markers and separators) and per request (reply priming). */
const OBJECT_TOKENS = 4;
const REQUEST_TOKENS = 8;
/** What a provider's tool-use template adds to the prompt when tools are offered (Anthropic documents up to ~350). */
const TOOLS_TOKENS = 512;
/** Media sent inline (a `data:` URL or base64 payload) counts as this many tokens per item, not per byte. */
export const MEDIA_TOKENS = 8_192;
/** Keys that frame messages and parts (their values count, the key names are not sent as text). */
const FRAMING_KEYS = new Set(['role', 'content', 'type', 'text', 'parts']);
/** The fields of a request body that reach the model as prompt (chat, messages, responses, Gemini). */
const PROMPT_FIELDS = ['messages', 'system', 'input', 'instructions', 'tools', 'functions', 'tool_choice', 'response_format', 'text', 'prompt', 'contents', 'systemInstruction', 'system_instruction', 'toolConfig'];

const isInlineMedia = (s: string) => s.length > 1024 && (s.startsWith('data:') || /^[A-Za-z0-9+/=\r\n]{1024}/.test(s.slice(0, 1024)));

/**
 * An upper bound of the prompt tokens of a value: the UTF-8 bytes of every string (and of every key that is not
 * message framing), a few tokens per object, inline media at a fixed allowance. Depth-limited by the body parser.
 */
export function valueTokensBound(value: unknown): number {
  if (typeof value === 'string') return isInlineMedia(value) ? MEDIA_TOKENS : Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number' || typeof value === 'boolean') return String(value).length;
  if (value === null || typeof value !== 'object') return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (const v of value) n += valueTokensBound(v);
    return n;
  }
  n += OBJECT_TOKENS;
  for (const k in value as Record<string, unknown>) n += (FRAMING_KEYS.has(k) ? 0 : Buffer.byteLength(k, 'utf8')) + valueTokensBound((value as Record<string, unknown>)[k]);
  return n;
}

/**
 * valueTokensBound of a conversation still as bytes (core/lazy-body.ts), from what its scan counted, without parsing
 * it: every message is `{role, content}` with both strings (the role ASCII), so a message is OBJECT_TOKENS plus the
 * UTF-8 bytes of its role and content (a Gemini content's text parts are objects too: OBJECT_TOKENS each). The one difference from the parsed array's bound: a long content that looks like inline media
 * counts its bytes here, not MEDIA_TOKENS — still a bound, since a string content reaches the model as text (at
 * least one byte per token).
 */
export function lazyTokensBound(c: Pick<LazyConversation, 'count' | 'contentBytes' | 'roleBytes' | 'texts'>): number {
  return (c.count + (c.texts ?? 0)) * OBJECT_TOKENS + c.roleBytes + c.contentBytes;
}

/**
 * An upper bound of the prompt tokens of a generation request body: its prompt-bearing fields (`PROMPT_FIELDS`). A
 * conversation still as bytes (`messages`, `input`) is bounded from its scan and stays unparsed.
 */
export function promptTokensBound(body: Record<string, unknown>): number {
  let n = REQUEST_TOKENS + (body.tools || body.functions ? TOOLS_TOKENS : 0);
  for (const f of PROMPT_FIELDS) {
    const lazy = f === 'messages' || f === 'input' || f === 'contents' ? lazyConversation(body, f) : null;
    if (lazy) n += lazyTokensBound(lazy);
    else if (body[f] !== undefined && body[f] !== null) n += valueTokensBound(body[f]);
  }
  return n;
}

/**
 * A generation's reservation at an endpoint: the prompt bound at the prompt price plus the most output it may
 * produce (what it asks for, capped by the endpoint; else the endpoint's maximum — with a prompt of zero, so that a
 * real prompt smaller than the bound cannot leave room for more output than reserved) plus the request fee.
 */
export function outputAsk(endpoint: Pick<EndpointDef, 'pricing' | 'max_completion_tokens' | 'context_length'>, promptBound: number, requested: number | null): SpendAsk {
  const pricing = endpoint.pricing;
  const out = maxOutputTokens(requested, endpoint, 0);
  const unpriced: SpendAsk = { nano: null, tokens: promptBound + out, refusal: () => 'Insufficient room' };
  if (!pricing) return unpriced;
  // Billed at the dearest rate each token may take: cache writes and reasoning can cost more than plain tokens.
  const dearer = (a: string | undefined, b: string) => a !== undefined && Number(a) > Number(b);
  const c = computeCost(pricing, {
    promptTokens: promptBound,
    completionTokens: out,
    cacheWriteTokens: dearer(pricing.input_cache_write, pricing.prompt) ? promptBound : 0,
    reasoningTokens: dearer(pricing.internal_reasoning, pricing.completion) ? out : 0,
  });
  if (c.cost === null) return unpriced;
  return {
    nano: usdToNano(c.cost),
    tokens: promptBound + out,
    refusal: (available) => insufficientCreditsMessage(out, affordableOutputTokens(pricing, promptBound, available)),
  };
}

/**
 * A reservation of a call whose billed quantities are known (or bounded) before it is sent — embeddings, rerank,
 * speech: the cost of `usage` (and `opts`) at the endpoint's prices. `what` names the call in the refusal.
 */
export function fixedAsk(pricing: Pricing | null | undefined, usage: TokenUsage, opts: CostOptions | undefined, what: string): SpendAsk {
  return costAsk(computeCost(pricing ?? null, usage, opts).cost, usage.promptTokens + usage.completionTokens, what);
}

/** A reservation of a known cost (USD; null: unpriced, nothing to reserve). */
export function costAsk(costUsd: number | null, tokens: number, what: string): SpendAsk {
  if (costUsd === null) return { nano: null, tokens, refusal: () => 'Insufficient room' };
  const nano = usdToNano(costUsd);
  return {
    nano,
    tokens,
    refusal: (available) => `This request requires more credits: ${what} can cost up to $${formatNano(nano)}, but only $${formatNano(available)} can be spent.`,
  };
}
