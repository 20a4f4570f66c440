/**
 * Helpers shared by the OpenAI chat protocol's IR translation (ir-request.ts, ir-answer.ts, ir-stream.ts) and by the
 * other OpenAI-style protocols (Responses, rerank, token counts): usage, finish reasons, image URLs, effort, JSON
 * answers and stream data.
 */
import { normalizeFinishReason } from '../../core/chat-shape.js';
import type { IrFinishReason, IrImage, IrRequest, IrUsage } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import { tokenUsage, type OpenAIUsage } from './chat.js';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

// ------------------------------------------------------------------------------------------------ shared helpers

/** OpenAI usage → IR usage (prompt includes cached tokens, completion includes reasoning), or null. */
export function irUsageFromOpenAI(u: unknown): IrUsage | null {
  const t = tokenUsage(isObj(u) ? (u as OpenAIUsage) : null);
  if (!t) return null;
  return {
    input: t.promptTokens,
    output: t.completionTokens,
    cache_read: t.cachedReadTokens ?? 0,
    cache_write: t.cacheWriteTokens ?? 0,
    reasoning: t.reasoningTokens ?? 0,
  };
}

/** A finish reason as the IR's (normalized; unknown values become `stop`). */
export function irFinish(native: unknown, hasToolCalls: boolean): IrFinishReason {
  const n = normalizeFinishReason(native);
  if (n === null) return hasToolCalls ? 'tool_calls' : 'stop';
  return n as IrFinishReason;
}

/** An image part as a URL (`data:` URL for inline data). */
export function imageUrl(img: IrImage): string {
  if (img.url) return img.url;
  return `data:${img.media_type ?? 'image/png'};base64,${img.data ?? ''}`;
}

/**
 * `max` is not an OpenAI effort; `xhigh` is the closest. `enabled: true` alone (OpenRouter's "enable reasoning with the
 * default parameters", Anthropic's `thinking: enabled`) is OpenAI's default effort, `medium`: without it an OpenAI
 * upstream would not be asked to reason at all.
 */
export function openaiEffort(req: IrRequest): string | undefined {
  const r = req.reasoning;
  if (!r) return undefined;
  if (r.effort) return r.effort === 'max' ? 'xhigh' : r.effort;
  if (r.enabled === false) return 'none';
  if (r.enabled === true) return 'medium';
  return undefined;
}

/** A 502 for an answer that is not a valid response. */
export function invalidResponse(message: string, raw: unknown): UpstreamError {
  return new UpstreamError(502, message, 'provider_unavailable', 200, raw);
}

/** A 2xx body parsed as a JSON object; a 502 (`invalidResponse`) for a body that is not JSON or not an object. */
export function parseJsonObject(text: string): Obj {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalidResponse('Provider returned an invalid (non-JSON) response', text.slice(0, 512));
  }
  if (!isObj(json)) throw invalidResponse('Provider returned an invalid response', json);
  return json;
}

/** A token count an upstream reported: a non-negative integer, else null. */
export function tokenCount(v: unknown): number | null {
  return Number.isInteger(v) && (v as number) >= 0 ? (v as number) : null;
}

/** The data of one stream event parsed as JSON; a 502 (`invalidResponse`) for data that is not JSON. */
export function parseStreamData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw invalidResponse('Provider sent an invalid stream event', data.slice(0, 512));
  }
}

/** Generated images of a chat answer or delta (`images[]` of base64 data URLs, the hosted router's shape) as IR parts. */
export function generatedImages(v: unknown): IrImage[] {
  const out: IrImage[] = [];
  if (!Array.isArray(v)) return out;
  for (const img of v) {
    const url = isObj(img) && isObj(img.image_url) ? str(img.image_url.url) : undefined;
    const m = url ? /^data:([^;,]+);base64,(.+)$/s.exec(url) : null;
    if (m) out.push({ type: 'image', data: m[2], media_type: m[1] });
  }
  return out;
}
