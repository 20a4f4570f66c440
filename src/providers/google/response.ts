/**
 * Gemini `GenerateContentResponse` → IR response, and the mappings shared with the stream decoder (finish reasons,
 * usage, tool-call ids, thought signatures).
 *
 * - Parts, in order: `thought: true` parts → IR reasoning (consecutive unsigned thought parts merge; a signature on a
 *   thought part becomes that reasoning's signature and closes it); a `thoughtSignature` on any other part (text,
 *   functionCall, even an empty text part) → an empty-text IR reasoning carrying the signature, placed right before the
 *   part, so that request.ts puts it back on the same part; text → IR text (adjacent unsigned text parts merge);
 *   functionCall → IR tool_call with `arguments = JSON.stringify(args)`.
 * - Tool-call ids: Gemini sends none, so ids are generated deterministically from the response: `call_<responseId>_<n>`
 *   (`call_<n>` when the response has no id), n counting function calls from 0. The response id keeps ids unique
 *   across turns (some client APIs reject duplicate tool ids in one conversation); an upstream `functionCall.id`, when
 *   present, is used as is.
 * - Usage: input = promptTokenCount (cached tokens included) + toolUsePromptTokenCount; cache_read =
 *   cachedContentTokenCount; output = candidatesTokenCount + thoughtsTokenCount (Gemini counts thoughts apart; IR output
 *   includes reasoning); reasoning = thoughtsTokenCount.
 * - Finish: STOP → stop (tool_calls when the answer has function calls); MAX_TOKENS → length; SAFETY, RECITATION,
 *   BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_* safety reasons, LANGUAGE → content_filter; other reasons
 *   (MALFORMED_FUNCTION_CALL, OTHER, …) → error. A prompt blocked by `promptFeedback.blockReason` (no candidates) →
 *   content_filter with empty content, native = the block reason. The native reason is always kept.
 */
import type { IrFinishReason, IrPart, IrReasoning, IrResponse, IrText, IrUsage } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import { googleErrorBody, mapGoogleError } from './errors.js';
import { checkGeminiResponse } from './schemas.js';
import { isObj, type GeminiPart, type GeminiResponse, type GeminiUsageMetadata } from './types.js';

const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
  'LANGUAGE',
]);

export function mapFinishReason(native: string | null | undefined, hasToolCalls: boolean): IrFinishReason {
  if (!native || native === 'STOP') return hasToolCalls ? 'tool_calls' : 'stop';
  if (native === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(native)) return 'content_filter';
  return 'error';
}

export function mapUsage(u: GeminiUsageMetadata | undefined | null): IrUsage | null {
  if (!u || typeof u !== 'object') return null;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const thoughts = n(u.thoughtsTokenCount);
  return {
    input: n(u.promptTokenCount) + n(u.toolUsePromptTokenCount),
    output: n(u.candidatesTokenCount) + thoughts,
    cache_read: n(u.cachedContentTokenCount),
    cache_write: 0,
    reasoning: thoughts,
  };
}

/** Deterministic tool-call ids for one response. */
export class CallIds {
  private n = 0;
  private base: string | null;
  constructor(responseId: string | null | undefined) {
    this.base = responseId ? responseId.replace(/[^A-Za-z0-9_-]/g, '') || null : null;
  }
  /** Sets the response id if none was known yet (streams may carry it late). */
  seen(responseId: string | null | undefined): void {
    if (this.base === null && this.n === 0 && responseId) this.base = responseId.replace(/[^A-Za-z0-9_-]/g, '') || null;
  }
  next(upstreamId?: string): string {
    const n = this.n++;
    if (upstreamId) return upstreamId;
    return this.base === null ? `call_${n}` : `call_${this.base}_${n}`;
  }
}

const signatureOf = (p: GeminiPart): string | undefined =>
  typeof p.thoughtSignature === 'string' && p.thoughtSignature !== '' ? p.thoughtSignature : undefined;

/** Candidate parts → IR output parts (see the module docs for the rules). */
export function partsToIr(parts: GeminiPart[], ids: CallIds): IrPart[] {
  const out: IrPart[] = [];
  let thought: IrReasoning | null = null; // open (unsigned) thought run
  let text: IrText | null = null; // open text run
  for (const p of parts) {
    if (!isObj(p)) continue;
    const sig = signatureOf(p);
    if (p.thought === true) {
      const t = typeof p.text === 'string' ? p.text : '';
      if (t === '' && !sig) continue;
      text = null;
      if (thought) thought.text += t;
      else out.push((thought = { type: 'reasoning', text: t }));
      if (sig) {
        Object.assign(thought, { signature: sig, origin: 'google' });
        thought = null;
      }
      continue;
    }
    thought = null;
    if (sig) {
      out.push({ type: 'reasoning', text: '', signature: sig, origin: 'google' });
      text = null;
    }
    if (isObj(p.functionCall)) {
      text = null;
      const fc = p.functionCall;
      out.push({
        type: 'tool_call',
        id: ids.next(typeof fc.id === 'string' && fc.id !== '' ? fc.id : undefined),
        name: typeof fc.name === 'string' ? fc.name : '',
        arguments: JSON.stringify(isObj(fc.args) ? fc.args : {}),
      });
    } else if (isObj(p.inlineData) && typeof p.inlineData.data === 'string' && p.inlineData.data !== '') {
      // A generated image (image output models): kept whole, as an image part.
      text = null;
      out.push({ type: 'image', data: p.inlineData.data, media_type: typeof p.inlineData.mimeType === 'string' ? p.inlineData.mimeType : 'image/png' });
    } else if (typeof p.text === 'string' && p.text !== '') {
      if (text) text.text += p.text;
      else out.push((text = { type: 'text', text: p.text }));
    } else if (typeof p.text !== 'string') {
      text = null; // another kind of part (inline data, code execution…) breaks the text run
    }
  }
  return out;
}

function invalid(message: string, raw: unknown): UpstreamError {
  return new UpstreamError(502, message, 'server', null, raw);
}

/** Parses a 2xx non-streaming body. */
export function parseGeminiResponse(text: string): IrResponse {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw invalid('Provider returned an invalid response (not JSON)', text.slice(0, 4096));
  }
  if (!isObj(body)) throw invalid('Provider returned an invalid response', body);
  const err = googleErrorBody(body);
  if (err) throw mapGoogleError(typeof err.code === 'number' ? err.code : 502, err, body, null);
  const r = checkGeminiResponse(body) as GeminiResponse;
  const id = typeof r.responseId === 'string' ? r.responseId : null;
  const model = typeof r.modelVersion === 'string' ? r.modelVersion : null;
  const usage = mapUsage(r.usageMetadata);
  const candidate = Array.isArray(r.candidates) ? r.candidates[0] : undefined;

  if (!isObj(candidate)) {
    const block = r.promptFeedback?.blockReason;
    if (typeof block === 'string') {
      return { id, model, content: [], finish_reason: 'content_filter', native_finish_reason: block, usage };
    }
    throw invalid('Provider returned no candidates', body);
  }
  const parts = isObj(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
  const content = partsToIr(parts, new CallIds(id));
  const native = typeof candidate.finishReason === 'string' ? candidate.finishReason : null;
  const hasCalls = content.some((p) => p.type === 'tool_call');
  return { id, model, content, finish_reason: mapFinishReason(native, hasCalls), native_finish_reason: native, usage };
}
