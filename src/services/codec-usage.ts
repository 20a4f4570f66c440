/** Usage as the client APIs show it: IR usage as token counts, and the chat API's `usage` object. */
import type { IrUsage } from '../core/ir.js';
import type { AnswerMeta } from '../core/adapters.js';
import type { TokenUsage } from '../core/pricing.js';
import type { OpenAIUsage } from '../providers/registry.js';

export function irToTokens(u: IrUsage | null): TokenUsage | null {
  if (!u) return null;
  return { promptTokens: u.input, completionTokens: u.output, cachedReadTokens: u.cache_read, cacheWriteTokens: u.cache_write, reasoningTokens: u.reasoning };
}

/** The OpenAI-style `usage` object of chat answers: the upstream's fields, normalized counts, cost. */
export function chatUsageView(u: TokenUsage | null, raw: OpenAIUsage | null, meta: AnswerMeta): Record<string, unknown> {
  const t = u ?? { promptTokens: 0, completionTokens: 0 };
  // Copied key by key: object spreads followed by overwrites cost several times more on this path.
  const out = copyOf(raw);
  out.prompt_tokens = t.promptTokens;
  out.completion_tokens = t.completionTokens;
  out.total_tokens = t.promptTokens + t.completionTokens;
  const prompt = copyOf(raw?.prompt_tokens_details);
  prompt.cached_tokens = t.cachedReadTokens ?? 0;
  prompt.cache_write_tokens = t.cacheWriteTokens ?? 0;
  out.prompt_tokens_details = prompt;
  const completion = copyOf(raw?.completion_tokens_details);
  completion.reasoning_tokens = t.reasoningTokens ?? 0;
  out.completion_tokens_details = completion;
  out.cost = meta.cost;
  out.is_byok = meta.is_byok === true;
  out.cost_details = meta.cost_details;
  return out;
}

/** A shallow copy of an object (anything else: a new empty object). */
function copyOf(x: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (x !== null && typeof x === 'object' && !Array.isArray(x)) for (const k in x as Record<string, unknown>) out[k] = (x as Record<string, unknown>)[k];
  return out;
}
