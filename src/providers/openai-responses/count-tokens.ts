/** OpenAI's `/responses/input_tokens`: the request as the Responses API would get it (translated alike). */
import type { TokenCounter } from '../../core/adapters.js';
import { countIn } from '../count-tokens.js';
import { chatHeaders, openaiError } from '../openai/chat.js';
import { buildResponsesBody } from './upstream.js';

/** Fields of a Responses body that `/responses/input_tokens` takes (it refuses the others, e.g. `store`, `max_output_tokens`). */
const RESPONSES_COUNT_FIELDS = ['model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'reasoning', 'text'] as const;

export const responsesCounter: TokenCounter = ({ ir }, ctx) => {
  const full = buildResponsesBody({ ...ir(), model: ctx.endpoint.upstreamModel, stream: false });
  const out: Record<string, unknown> = {};
  for (const f of RESPONSES_COUNT_FIELDS) if (full[f] !== undefined) out[f] = full[f];
  return {
    url: new URL(`${ctx.provider.baseUrl}/responses/input_tokens`),
    headers: chatHeaders(ctx.provider, ctx.apiKey, false),
    body: JSON.stringify(out),
    parse: (t) => countIn(t, 'input_tokens'),
    parseError: openaiError,
  };
};
