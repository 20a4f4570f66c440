/**
 * Anthropic Messages wire shapes (the subset the gateway reads and writes) and the helpers shared by the request,
 * response and stream translations: stop-reason mapping, usage normalization, the reserved JSON-output tool.
 *
 * Reference: https://docs.anthropic.com/en/api/messages, https://docs.anthropic.com/en/api/messages-streaming,
 * https://docs.anthropic.com/en/build-with-claude/prompt-caching, https://docs.anthropic.com/en/api/errors.
 */
import type { IrFinishReason, IrUsage } from '../../core/ir.js';

export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Name of the tool used to emulate JSON output (IR `response_format`) on endpoints without native structured outputs.
 * Its `tool_use` block comes back to the caller as TEXT (the JSON of its input), never as a tool call — in responses
 * and streams alike, since a decoder cannot see the request. The name is therefore reserved: `buildRequest` rejects
 * a caller tool with this name.
 */
export const JSON_TOOL_NAME = 'json_output';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  service_tier?: string | null;
}

/** Maps Anthropic's `stop_reason` to the IR finish reason (unknown reasons → `stop`). */
export function finishReason(stop: string | null | undefined): IrFinishReason {
  switch (stop) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn (a server-tool turn paused; the caller may continue it), null.
      return 'stop';
  }
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * Anthropic usage → IR usage. Anthropic's `input_tokens` EXCLUDES cached tokens: the documented total is
 * `cache_read_input_tokens + cache_creation_input_tokens + input_tokens`, which is what the IR's `input` holds.
 * Anthropic does not report thinking tokens separately (they are inside `output_tokens`), so `reasoning` is 0.
 */
export function irUsage(u: AnthropicUsage): IrUsage {
  const read = num(u.cache_read_input_tokens);
  const write = num(u.cache_creation_input_tokens);
  return { input: num(u.input_tokens) + read + write, output: num(u.output_tokens), cache_read: read, cache_write: write, reasoning: 0 };
}
