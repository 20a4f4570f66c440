/**
 * Anthropic Message (non-streaming 2xx body) → IR response.
 *
 * `{id, type:'message', role, model, content:[text|thinking|redacted_thinking|tool_use|…], stop_reason,
 * stop_sequence, usage:{input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens}}`.
 * Server-tool blocks (server_tool_use, web_search_tool_result, …) have no IR equivalent and are skipped; the
 * JSON_TOOL_NAME tool_use (emulated JSON output, see request.ts) becomes a text part holding its input as JSON.
 */
import type { IrPart, IrResponse } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import { anthropicStreamError } from './errors.js';
import { checkMessage } from './schemas.js';
import { finishReason, irUsage, isObj, JSON_TOOL_NAME, type AnthropicUsage, type Obj } from './wire.js';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function part(b: Obj): IrPart | null {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: str(b.text) };
    case 'thinking': {
      const p: IrPart = { type: 'reasoning', text: str(b.thinking) };
      if (typeof b.signature === 'string' && b.signature !== '') Object.assign(p, { signature: b.signature, origin: 'anthropic' });
      return p;
    }
    case 'redacted_thinking':
      return { type: 'redacted_reasoning', data: str(b.data) };
    case 'tool_use': {
      const input = JSON.stringify(b.input ?? {});
      if (b.name === JSON_TOOL_NAME) return { type: 'text', text: input };
      return { type: 'tool_call', id: str(b.id), name: str(b.name), arguments: input };
    }
    default:
      return null;
  }
}

export function parseResponse(text: string): IrResponse {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UpstreamError(502, 'Provider returned an invalid (non-JSON) response', 'provider_unavailable', 200, text.slice(0, 512));
  }
  if (isObj(json) && json.type === 'error') throw anthropicStreamError(json);
  if (!isObj(json) || !Array.isArray(json.content)) {
    throw new UpstreamError(502, 'Provider returned an invalid response (no content)', 'provider_unavailable', 200, json);
  }
  checkMessage(json);
  const content: IrPart[] = [];
  let userTools = 0;
  let jsonTools = 0;
  for (const b of json.content) {
    if (!isObj(b)) continue;
    const p = part(b);
    if (!p) continue;
    if (b.type === 'tool_use') {
      if (b.name === JSON_TOOL_NAME) jsonTools++;
      else userTools++;
    }
    content.push(p);
  }
  const stop = typeof json.stop_reason === 'string' ? json.stop_reason : null;
  let finish = finishReason(stop);
  // The model "called" only the emulated JSON-output tool: for the caller that is a finished text answer.
  if (finish === 'tool_calls' && jsonTools > 0 && userTools === 0) finish = 'stop';
  const usage = isObj(json.usage) ? (json.usage as AnthropicUsage) : null;
  return {
    id: typeof json.id === 'string' ? json.id : null,
    model: typeof json.model === 'string' ? json.model : null,
    content,
    finish_reason: finish,
    native_finish_reason: stop,
    usage: usage ? irUsage(usage) : null,
    service_tier: typeof usage?.service_tier === 'string' ? usage.service_tier : null,
  };
}
