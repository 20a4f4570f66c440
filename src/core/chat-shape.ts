/** Shaping OpenAI-format chat responses and chunks as the gateway returns them. Pure functions. */

/** finish_reason normalized to stop | length | tool_calls | content_filter | error. */
export function normalizeFinishReason(r: unknown): string | null {
  if (r === null || r === undefined) return null;
  switch (r) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
    case 'error':
      return r as string;
    case 'function_call':
      return 'tool_calls';
    case 'eos':
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
      return 'length';
    default:
      return 'stop';
  }
}

/** Rewrites each choice's finish_reason in place, keeping the provider's value as native_finish_reason. */
export function normalizeChoices(choices: unknown): string | null {
  let last: string | null = null;
  if (!Array.isArray(choices)) return last;
  for (const c of choices as Array<Record<string, unknown>>) {
    if (c && c.finish_reason !== undefined && c.finish_reason !== null) {
      c.native_finish_reason = c.finish_reason;
      c.finish_reason = normalizeFinishReason(c.finish_reason);
      last = c.finish_reason as string;
    }
  }
  return last;
}

/** Rough prompt size in tokens (characters / 4) for context-length filtering; never used for billing. */
export function estimatePromptTokens(messages: unknown): number {
  let chars = 0;
  if (!Array.isArray(messages)) return 0;
  for (const m of messages as Array<{ content?: unknown }>) {
    const c = m?.content;
    if (typeof c === 'string') chars += c.length;
    else if (Array.isArray(c)) for (const p of c as Array<{ text?: unknown }>) if (typeof p?.text === 'string') chars += p.text.length;
  }
  return Math.ceil(chars / 4);
}

/**
 * Whether stream chunk choices carry output (text, tool calls, reasoning, refusal, audio, images or a finish reason),
 * as opposed to an opening chunk that only announces the role. Nothing is committed to the client before output.
 */
export function carriesOutput(choices: unknown): boolean {
  if (!Array.isArray(choices)) return false;
  for (const c of choices as Array<{ delta?: Record<string, unknown> | null; finish_reason?: unknown }>) {
    if (!c) continue;
    if (c.finish_reason !== null && c.finish_reason !== undefined) return true;
    const d = c.delta;
    if (!d) continue;
    for (const k of OUTPUT_FIELDS) if (present(d[k])) return true;
  }
  return false;
}

const OUTPUT_FIELDS = ['content', 'tool_calls', 'function_call', 'reasoning', 'reasoning_content', 'reasoning_details', 'refusal', 'audio', 'images'];
const present = (v: unknown) => (typeof v === 'string' ? v.length > 0 : Array.isArray(v) ? v.length > 0 : v !== null && v !== undefined);

/** The same rough prompt size for a request in the internal representation. */
export function irPromptTokens(ir: { system: Array<{ text: string }>; messages: Array<{ content: Array<{ type: string; text?: string; content?: unknown }> }> }): number {
  let chars = 0;
  for (const p of ir.system) chars += p.text.length;
  for (const m of ir.messages) {
    for (const part of m.content) {
      if (typeof part.text === 'string') chars += part.text.length;
      else if (typeof part.content === 'string') chars += part.content.length;
    }
  }
  return Math.ceil(chars / 4);
}
