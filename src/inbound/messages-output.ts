/**
 * The Messages skin's answer side: IR answer → Message object, and the Anthropic error envelope
 * `{type:'error', error:{type, message, error_type}, request_id}`.
 *
 * Usage in the answer follows Anthropic's convention: `input_tokens` EXCLUDES cache reads and writes (the IR counts
 * them in), which are reported in `cache_read_input_tokens` / `cache_creation_input_tokens`.
 */
import type { IrFinishReason, IrPart, IrResponse, IrUsage } from '../core/ir.js';
import type { AnswerMeta } from '../core/adapters.js';
import { defaultErrorType, parseArguments, uncachedInput, type Json } from './common.js';
import { signatureOf } from './messages-signing.js';

// ---- IR → Message ------------------------------------------------------------------------------------------------

const ANTHROPIC_STOP_REASONS = new Set(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']);

/** Anthropic `stop_reason` of an IR finish: the upstream's own value when it is already an Anthropic one. */
export function stopReason(finish: IrFinishReason, native: string | null): string {
  if (native && ANTHROPIC_STOP_REASONS.has(native)) {
    // Keep the native value only when it agrees with the normalized reason (a proxy may relabel, e.g. error).
    const agrees =
      (finish === 'stop' && (native === 'end_turn' || native === 'stop_sequence' || native === 'pause_turn')) ||
      (finish === 'length' && (native === 'max_tokens' || native === 'model_context_window_exceeded')) ||
      (finish === 'tool_calls' && native === 'tool_use') ||
      (finish === 'content_filter' && native === 'refusal');
    if (agrees) return native;
  }
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Anthropic usage object (input excluding cache), with the gateway's cost when known. */
export function usageBody(u: IrUsage, meta: AnswerMeta | null, serviceTier: string | null | undefined): Json {
  const out: Json = {
    input_tokens: uncachedInput(u),
    output_tokens: u.output,
    cache_creation_input_tokens: u.cache_write,
    cache_read_input_tokens: u.cache_read,
    cache_creation: null,
    inference_geo: null,
    output_tokens_details: u.reasoning > 0 ? { thinking_tokens: u.reasoning } : null,
    server_tool_use: null,
    service_tier: serviceTier === 'priority' || serviceTier === 'batch' ? serviceTier : 'standard',
  };
  if (meta) {
    out.cost = meta.cost;
    out.cost_details = meta.cost_details;
    if (meta.server_tools) {
      out.server_tool_use = { web_search_requests: meta.server_tools.web_search_requests };
      out.server_tool_use_details = meta.server_tools;
    }
  }
  return out;
}

function contentOut(parts: IrPart[]): Json[] {
  const out: Json[] = [];
  for (const p of parts) {
    switch (p.type) {
      case 'reasoning':
        out.push({ type: 'thinking', thinking: p.text, signature: signatureOf(p.text, p.signature, p.origin) });
        break;
      case 'redacted_reasoning':
        out.push({ type: 'redacted_thinking', data: p.data });
        break;
      case 'text':
        out.push({ type: 'text', text: p.text, citations: null });
        break;
      case 'refusal':
        // Anthropic has no refusal block: the text is the answer and stop_reason says `refusal`.
        out.push({ type: 'text', text: p.text, citations: null });
        break;
      case 'tool_call':
        out.push({ type: 'tool_use', id: p.id, name: p.name, input: parseArguments(p.arguments), caller: { type: 'direct' } });
        break;
      default:
        // Images and tool results are not assistant output in this API.
        break;
    }
  }
  return out;
}

export function fromIr(res: IrResponse, meta: AnswerMeta): Json {
  const hasRefusal = res.content.some((p) => p.type === 'refusal');
  const finish = hasRefusal && res.finish_reason === 'stop' ? 'content_filter' : res.finish_reason;
  const body: Json = {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    provider: meta.provider,
    content: contentOut(res.content),
    stop_reason: stopReason(finish, res.native_finish_reason),
    stop_sequence: null,
    stop_details: null,
    container: null,
    usage: usageBody(res.usage ?? { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 }, meta, res.service_tier),
  };
  if (meta.gateway_metadata) body.gateway_metadata = meta.gateway_metadata;
  return body;
}

// ---- errors ------------------------------------------------------------------------------------------------------

/** Anthropic `error.type` of a gateway status. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 408:
      return 'timeout_error';
    case 429:
      return 'rate_limit_error';
    // The reference documents 503 as `overloaded_error` ("Service temporarily overloaded"), like 529.
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * `{type:'error', error:{type, message, error_type}, request_id}`; the rest of the gateway metadata (provider_code,
 * raw, …) goes in the top-level `metadata` the reference allows.
 */
export function errorBody(status: number, message: string, metadata: Record<string, unknown> | null, requestId: string | null = null): Json {
  const { error_type: et, ...rest } = metadata ?? {};
  const body: Json = {
    type: 'error',
    error: { type: anthropicErrorType(status), message, error_type: typeof et === 'string' ? et : defaultErrorType(status) },
    request_id: requestId,
  };
  if (Object.keys(rest).length > 0) body.metadata = rest;
  return body;
}
