/**
 * The Response object of the OpenAI Responses skin, shared by the non-streaming answer and the stream's lifecycle
 * events (`response.created`, `response.completed`, …): the request fields the object echoes, the output items, the
 * status, and usage with the gateway's cost.
 */
import { callItem, flatOfCall, type ResponsesToolMap } from './responses-tools.js';
import type { IrFinishReason, IrPart, IrUsage } from '../core/ir.js';
import type { AnswerMeta } from '../core/adapters.js';
import { idSuffix, isObject, type Json } from './common.js';

/** Output-item id: `<prefix>_<gen suffix>_<output index>`, stable for a generation (the stream and replays agree). */
export const itemId = (prefix: 'msg' | 'rs' | 'fc' | 'ig', meta: AnswerMeta, outputIndex: number): string => `${prefix}_${idSuffix(meta.id)}_${outputIndex}`;

/**
 * The request fields a Response object echoes (OpenAI's documented object; defaults as OpenAI reports them).
 * Without the request (the adapter was not given it) every field takes its default.
 */
export function responsesEcho(body: Json | undefined): Json {
  const b = body ?? {};
  const nn = (v: unknown, dflt: unknown = null) => (v === undefined ? dflt : v);
  const reasoning = isObject(b.reasoning) ? { effort: nn(b.reasoning.effort), summary: nn(b.reasoning.summary) } : null;
  const text = isObject(b.text) ? { format: isObject(b.text.format) ? b.text.format : { type: 'text' }, ...(b.text.verbosity != null ? { verbosity: b.text.verbosity } : {}) } : { format: { type: 'text' } };
  return {
    instructions: nn(b.instructions),
    max_output_tokens: nn(b.max_output_tokens),
    max_tool_calls: nn(b.max_tool_calls),
    metadata: nn(b.metadata),
    parallel_tool_calls: b.parallel_tool_calls === false ? false : true,
    previous_response_id: null,
    reasoning,
    safety_identifier: nn(b.safety_identifier),
    prompt_cache_key: nn(b.prompt_cache_key),
    store: false,
    background: false,
    temperature: nn(b.temperature),
    text,
    tool_choice: nn(b.tool_choice, 'auto'),
    tools: Array.isArray(b.tools) ? b.tools : [],
    top_p: nn(b.top_p),
    presence_penalty: nn(b.presence_penalty),
    frequency_penalty: nn(b.frequency_penalty),
    truncation: nn(b.truncation, 'disabled'),
    user: nn(b.user),
  };
}

/** Responses usage: `input_tokens` INCLUDES cached tokens (OpenAI convention, same as the IR), plus the gateway cost. */
export function usageBody(u: IrUsage, meta: AnswerMeta): Json {
  const out: Json = {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cache_read, cache_write_tokens: u.cache_write },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: u.input + u.output,
    cost: meta.cost,
    is_byok: meta.is_byok === true,
    cost_details: {
      upstream_inference_cost: meta.cost_details.upstream_inference_cost,
      upstream_inference_input_cost: meta.cost_details.upstream_inference_prompt_cost,
      upstream_inference_output_cost: meta.cost_details.upstream_inference_completions_cost,
    },
  };
  if (meta.server_tools) out.server_tool_use_details = meta.server_tools;
  return out;
}

/** `error.code` of the Response object (the reference's ResponsesErrorField enum) for a gateway status. */
export function responseErrorCode(status: number, errorType?: string): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (errorType === 'invalid_image') return 'invalid_image';
  if (errorType === 'image_download_failed') return 'failed_to_download_image';
  if (status === 400 || status === 413 || status === 422) return 'invalid_prompt';
  return 'server_error';
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** Status and incomplete/error details of a finished answer. */
export function finishStatus(finish: IrFinishReason): { status: ResponseStatus; incomplete_details: Json | null; error: Json | null } {
  switch (finish) {
    case 'length':
      return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, error: null };
    case 'content_filter':
      return { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, error: null };
    case 'error':
      return { status: 'failed', incomplete_details: null, error: { code: 'server_error', message: 'The provider ended the response with an error' } };
    default:
      return { status: 'completed', incomplete_details: null, error: null };
  }
}

/** Concatenated `output_text` parts of the message items (the SDKs' `response.output_text`). */
export function outputText(output: Json[]): string {
  let s = '';
  for (const item of output) {
    if (item.type !== 'message' || !Array.isArray(item.content)) continue;
    for (const c of item.content as Json[]) if (c.type === 'output_text' && typeof c.text === 'string') s += c.text;
  }
  return s;
}

export interface ResponseObjectInput {
  meta: AnswerMeta;
  echo: Json;
  status: ResponseStatus;
  output: Json[];
  usage: IrUsage | null;
  incomplete_details?: Json | null;
  error?: Json | null;
  error_type?: string;
  service_tier?: string | null;
}

/** The full Response object. `usage` and `gateway_metadata` appear only on terminal states. */
export function responseObject(i: ResponseObjectInput): Json {
  const terminal = i.status !== 'in_progress';
  const body: Json = {
    id: i.meta.id,
    object: 'response',
    created_at: i.meta.created,
    status: i.status,
    completed_at: i.status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    error: i.error ?? null,
    incomplete_details: i.incomplete_details ?? null,
    model: i.meta.model,
    provider: i.meta.provider,
    output: i.output,
    output_text: outputText(i.output),
    ...i.echo,
    service_tier: i.service_tier ?? null,
    usage: terminal && i.usage ? usageBody(i.usage, i.meta) : null,
  };
  if (i.error_type) body.error_type = i.error_type;
  if (terminal && i.meta.gateway_metadata) body.gateway_metadata = i.meta.gateway_metadata;
  return body;
}

/** An `image_generation_call` output item (OpenAI's and the reference's shape: the image's base64 bytes in `result`). */
export function imageItem(id: string, b64: string | null, status: 'in_progress' | 'generating' | 'completed'): Json {
  return { id, type: 'image_generation_call', status, result: b64 };
}

/**
 * IR answer parts → Response output items, in order: reasoning items (summary text, the signature when known, an
 * encrypted part folded into the reasoning item just before it), one message item per run of text/refusal parts,
 * function_call items, and an image_generation_call item per generated image.
 */
export function outputItems(parts: IrPart[], meta: AnswerMeta, tools: ResponsesToolMap | null = null): Json[] {
  const out: Json[] = [];
  let message: Json | null = null;
  let lastReasoning: Json | null = null;
  for (const p of parts) {
    if (p.type !== 'text' && p.type !== 'refusal') message = null;
    if (p.type !== 'redacted_reasoning') {
      // Only a redacted part directly after a reasoning part joins its item.
      if (p.type !== 'reasoning') lastReasoning = null;
    }
    switch (p.type) {
      case 'reasoning': {
        const item: Json = { id: itemId('rs', meta, out.length), type: 'reasoning', summary: p.text === '' ? [] : [{ type: 'summary_text', text: p.text }] };
        if (p.signature) item.signature = p.signature;
        out.push(item);
        lastReasoning = item;
        break;
      }
      case 'redacted_reasoning':
        if (lastReasoning && lastReasoning.encrypted_content === undefined) lastReasoning.encrypted_content = p.data;
        else out.push({ id: itemId('rs', meta, out.length), type: 'reasoning', summary: [], encrypted_content: p.data });
        lastReasoning = null;
        break;
      case 'text':
      case 'refusal': {
        if (!message) {
          message = { id: itemId('msg', meta, out.length), type: 'message', role: 'assistant', status: 'completed', content: [] };
          out.push(message);
        }
        (message.content as Json[]).push(p.type === 'text' ? { type: 'output_text', text: p.text, annotations: [] } : { type: 'refusal', refusal: p.text });
        break;
      }
      case 'tool_call':
        // Namespaced and custom tools are named back (responses-tools.ts).
        out.push(callItem(tools, itemId('fc', meta, out.length), p.id, flatOfCall(tools, p.name, p.namespace), p.arguments, 'completed'));
        break;
      case 'image':
        // A generated image (image-output models, docs/images.md): OpenAI's image_generation_call item, base64 result.
        if (p.data) out.push(imageItem(itemId('ig', meta, out.length), p.data, 'completed'));
        break;
      default:
        break;
    }
  }
  return out;
}
