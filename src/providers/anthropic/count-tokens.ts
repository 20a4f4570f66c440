/** Anthropic's `/messages/count_tokens`: the caller's fields with the upstream model id, and its `anthropic-beta`. */
import type { TokenCounter } from '../../core/adapters.js';
import { countIn } from '../count-tokens.js';
import { anthropicError } from './errors.js';
import { anthropicHeaders, anthropicUrl } from './request.js';

/** Fields of an Anthropic count_tokens request (everything else of a Messages body is left out upstream). */
const ANTHROPIC_COUNT_FIELDS = ['messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers'] as const;

export const anthropicCounter: TokenCounter = ({ body, beta }, ctx) => {
  const out: Record<string, unknown> = { model: ctx.endpoint.upstreamModel };
  for (const f of ANTHROPIC_COUNT_FIELDS) if (body[f] !== undefined && body[f] !== null) out[f] = body[f];
  const headers = anthropicHeaders(ctx, false);
  if (beta) headers['anthropic-beta'] = beta;
  return { url: anthropicUrl(ctx.provider, 'messages/count_tokens'), headers, body: JSON.stringify(out), parse: (t) => countIn(t, 'input_tokens'), parseError: anthropicError };
};
