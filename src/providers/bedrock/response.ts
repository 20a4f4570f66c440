/**
 * Converse answers → IR: the JSON answer of `converse`, and the shared pieces of the stream decoder (stop reasons,
 * usage). https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_ResponseSyntax
 */
import type { IrFinishReason, IrPart, IrResponse, IrUsage } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

const malformed = (what: string) => new UpstreamError(502, `Provider returned an invalid answer: ${what}`, 'provider_unavailable', 200, null);

/** Converse `stopReason` → the IR finish reason. */
export function converseFinish(stop: unknown, sawToolCall: boolean): IrFinishReason {
  switch (stop) {
    case 'end_turn':
    case 'stop_sequence':
      return sawToolCall ? 'tool_calls' : 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return sawToolCall ? 'tool_calls' : 'stop';
  }
}

/** Converse usage: `inputTokens` excludes the cache reads and writes, which the IR's `input` includes. */
export function converseUsage(u: unknown): IrUsage | null {
  if (!isObj(u)) return null;
  const read = num(u.cacheReadInputTokens);
  const write = num(u.cacheWriteInputTokens);
  return { input: num(u.inputTokens) + read + write, output: num(u.outputTokens), cache_read: read, cache_write: write, reasoning: 0 };
}

function part(b: Obj): IrPart | null {
  if (typeof b.text === 'string') return { type: 'text', text: b.text };
  if (isObj(b.toolUse)) {
    const t = b.toolUse;
    if (typeof t.toolUseId !== 'string' || typeof t.name !== 'string') throw malformed('toolUse without toolUseId or name');
    return { type: 'tool_call', id: t.toolUseId, name: t.name, arguments: JSON.stringify(t.input ?? {}) };
  }
  if (isObj(b.reasoningContent)) {
    const r = b.reasoningContent;
    if (isObj(r.reasoningText)) {
      const out: IrPart = { type: 'reasoning', text: typeof r.reasoningText.text === 'string' ? r.reasoningText.text : '' };
      if (typeof r.reasoningText.signature === 'string') out.signature = r.reasoningText.signature;
      return out;
    }
    if (typeof r.redactedContent === 'string') return { type: 'redacted_reasoning', data: r.redactedContent };
  }
  return null; // citations, guardrail traces and other blocks the IR does not carry
}

export function parseConverseResponse(text: string): IrResponse {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch {
    throw malformed('not JSON');
  }
  if (!isObj(j) || !isObj(j.output) || !isObj(j.output.message) || !Array.isArray(j.output.message.content)) throw malformed('no output.message.content');
  const content: IrPart[] = [];
  for (const b of j.output.message.content) if (isObj(b)) {
    const p = part(b);
    if (p) content.push(p);
  }
  const calls = content.some((p) => p.type === 'tool_call');
  return {
    id: null,
    model: null,
    content,
    finish_reason: converseFinish(j.stopReason, calls),
    native_finish_reason: typeof j.stopReason === 'string' ? j.stopReason : null,
    usage: converseUsage(j.usage),
  };
}
