/**
 * Chat request parameters: which fields are the gateway's own (never sent upstream), which are model parameters
 * that an endpoint may or may not support (dropped when unsupported), and which are unknown (passed through to
 * upstreams of the same protocol, so new provider parameters keep working). Pure functions.
 */
import type { EndpointDef } from './catalog-types.js';
import { shareLazy } from './lazy-body.js';

/** Fields that steer the gateway itself. */
export const GATEWAY_FIELDS = new Set([
  'model',
  'models',
  'provider',
  'route',
  'preset',
  'plugins',
  'trace',
  'debug',
  'session_id',
  'usage',
  'transforms',
  'stop_server_tools_when',
  'cache_enabled',
  'cache_ttl_seconds',
  'metadata',
  'image_config',
  'cache_control',
  'prompt_cache_options',
  'messages',
  'stream',
  'stream_options',
]);

/** Model parameters the catalog describes per endpoint (`supported_parameters`). */
export const MODEL_PARAMS = new Set([
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'top_a',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'seed',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'stop',
  'max_tokens',
  'max_completion_tokens',
  'response_format',
  'structured_outputs',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'reasoning',
  'reasoning_effort',
  'include_reasoning',
  'verbosity',
  'web_search_options',
  'prediction',
  'modalities',
]);

/** Names of the model parameters a request sets (null and undefined values do not count). */
export function requestParams(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const k in body) if (MODEL_PARAMS.has(k) && body[k] !== null && body[k] !== undefined) out.push(k);
  return out;
}

const supports = (e: EndpointDef, p: string) => e.supported_parameters.includes(p);

/**
 * The body for an OpenAI-protocol endpoint: gateway fields removed, unsupported model parameters dropped (listed in
 * `dropped`), `max_tokens`/`max_completion_tokens` and `reasoning`/`reasoning_effort` spelled the way the endpoint
 * takes them, unknown fields kept, and usage requested on streams.
 */
export function openaiBody(body: Record<string, unknown>, endpoint: EndpointDef, stream: boolean): { body: Record<string, unknown>; dropped: string[] } {
  // `messages` shared without reading it: a large conversation may still be bytes (core/lazy-body.ts).
  const out: Record<string, unknown> = { model: endpoint.upstreamModel };
  shareLazy(body, out, 'messages');
  const dropped: string[] = [];
  for (const k in body) {
    if (k === 'messages') continue;
    const v = body[k];
    if (v === undefined || GATEWAY_FIELDS.has(k) || k === 'max_tool_calls') continue; // max_tool_calls: the chat loop's (a Responses parameter)
    if (MODEL_PARAMS.has(k) && !supports(endpoint, k)) {
      if (v !== null) dropped.push(k);
      continue;
    }
    // Spelled the endpoint's way below (skipped here rather than deleted after: `delete` makes the object slow).
    if (k === 'max_tokens' || k === 'max_completion_tokens' || k === 'reasoning' || k === 'reasoning_effort') continue;
    out[k] = v;
  }
  // Output length: one name in, the endpoint's name out.
  const maxOut = body.max_completion_tokens ?? body.max_tokens;
  if (maxOut !== undefined && maxOut !== null) {
    if (supports(endpoint, 'max_completion_tokens')) out.max_completion_tokens = maxOut;
    else if (supports(endpoint, 'max_tokens')) out.max_tokens = maxOut;
    else dropped.push('max_tokens');
  }
  // Reasoning: the gateway's `reasoning.effort` becomes OpenAI's `reasoning_effort`.
  const reasoning = body.reasoning as { effort?: string | null; enabled?: boolean | null } | undefined;
  const effort = (body.reasoning_effort as string | null | undefined) ?? reasoning?.effort ?? (reasoning?.enabled === false ? 'none' : undefined);
  if (effort) {
    if (supports(endpoint, 'reasoning_effort') || supports(endpoint, 'reasoning')) out.reasoning_effort = effort;
    else dropped.push('reasoning');
  }
  if (stream) {
    out.stream = true;
    out.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
  }
  return { body: out, dropped: dropped.length > 1 ? [...new Set(dropped)] : dropped };
}
