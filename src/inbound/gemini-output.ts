/**
 * The Gemini skin's answers: IR response → `GenerateContentResponse`, IR stream events → `streamGenerateContent`
 * chunks (each a `GenerateContentResponse`, framed as SSE `data:` events; the HTTP layer re-frames them as one JSON
 * array when the client did not ask for `alt=sse`), and Google's error shape `{error: {code, message, status}}`.
 *
 * - Parts: reasoning → `{text, thought: true}` with its signature as `thoughtSignature`; a signature-only reasoning (the
 *   Gemini convention of a signature riding on the next part) → `thoughtSignature` on the next part, or on an empty text
 *   part when nothing follows; redacted reasoning → a thought part whose signature is `gateway-redacted:<data>` (sent
 *   back, it is redacted reasoning again); text and refusals → text; tool calls → `functionCall {id, name, args}` (whole
 *   calls: streamed arguments are gathered until the call ends); generated images → `inlineData {mimeType, data}`.
 * - finishReason: stop and tool_calls → STOP, length → MAX_TOKENS, content_filter → the upstream's Gemini reason when it
 *   gave one (SAFETY, RECITATION, …) else SAFETY, error → the upstream's Gemini reason else OTHER.
 * - usageMetadata: promptTokenCount = input (cache reads and writes included), cachedContentTokenCount = cache reads,
 *   candidatesTokenCount = output without reasoning, thoughtsTokenCount = reasoning (Gemini counts thoughts apart),
 *   totalTokenCount; the gateway adds `cost` (USD, null when the price is unknown) and `cost_details`. Gemini has no
 *   cache-write count: such tokens are in promptTokenCount only.
 * - `responseId` is the gateway's generation id, `modelVersion` the catalog model that served.
 */
import type { IrFinishReason, IrPart, IrResponse, IrStreamEvent, IrUsage } from '../core/ir.js';
import type { AnswerMeta, RawDelta, StreamEncoder } from '../core/adapters.js';
import { latin1 } from '../core/json-scan.js';
import { parseArguments, type Json } from './common.js';

/** Signature prefix of redacted (encrypted) reasoning handed to Gemini clients as a thought part. */
export const REDACTED_PREFIX = 'gateway-redacted:';
/**
 * An Anthropic signature handed to a Gemini client is tagged with its origin, so that coming back it goes to Anthropic
 * upstreams only (and a Google signature, untagged, to Google upstreams only): see gemini.ts.
 */
export const ANTHROPIC_SIGNATURE_PREFIX = 'gateway-anthropic:';

/** A reasoning signature as a Gemini client gets it (tagged when Anthropic made it). */
const tagged = (signature: string, origin: string | undefined) => (origin === 'anthropic' ? ANTHROPIC_SIGNATURE_PREFIX + signature : signature);
const REDACTED = REDACTED_PREFIX;

const GEMINI_FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION', 'LANGUAGE']);
const GEMINI_OTHER = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS', 'OTHER', 'FINISH_REASON_UNSPECIFIED']);

/** Gemini `finishReason` of an IR finish (the upstream's own value when it is a Gemini one that agrees). */
export function geminiFinishReason(finish: IrFinishReason, native: string | null): string {
  switch (finish) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return native && GEMINI_FILTERED.has(native) ? native : 'SAFETY';
    case 'error':
      return native && GEMINI_OTHER.has(native) ? native : 'OTHER';
    default:
      return 'STOP';
  }
}

/** `usageMetadata` of an IR usage, with the gateway's cost when known. */
export function usageMetadata(u: IrUsage | null, meta: AnswerMeta | null): Json {
  const usage = u ?? { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 };
  const out: Json = { promptTokenCount: usage.input, candidatesTokenCount: Math.max(0, usage.output - usage.reasoning), totalTokenCount: usage.input + usage.output };
  if (usage.cache_read > 0) out.cachedContentTokenCount = usage.cache_read;
  if (usage.reasoning > 0) out.thoughtsTokenCount = usage.reasoning;
  if (meta) {
    out.cost = meta.cost;
    out.cost_details = meta.cost_details;
  }
  return out;
}

/** Whole IR output parts → Gemini parts. */
export function partsOut(content: IrPart[]): Json[] {
  const out: Json[] = [];
  let pending: string | undefined;
  const push = (p: Json) => {
    if (pending !== undefined) p.thoughtSignature = pending;
    pending = undefined;
    out.push(p);
  };
  for (const p of content) {
    switch (p.type) {
      case 'reasoning':
        if (p.text === '' && p.signature) {
          if (pending !== undefined) out.push({ text: '', thoughtSignature: pending });
          pending = tagged(p.signature, p.origin);
        } else if (p.text !== '') out.push(p.signature ? { text: p.text, thought: true, thoughtSignature: tagged(p.signature, p.origin) } : { text: p.text, thought: true });
        break;
      case 'redacted_reasoning':
        out.push({ text: '', thought: true, thoughtSignature: `${REDACTED}${p.data}` });
        break;
      case 'text':
      case 'refusal':
        if (p.text !== '') push({ text: p.text });
        break;
      case 'tool_call':
        push({ functionCall: { id: p.id, name: p.name, args: parseArguments(p.arguments) } });
        break;
      case 'image':
        // A generated image (image-output models, docs/images.md).
        if (p.data) push({ inlineData: { mimeType: p.media_type ?? 'image/png', data: p.data } });
        break;
      default:
        break; // tool results are not model output
    }
  }
  if (pending !== undefined) out.push({ text: '', thoughtSignature: pending });
  return out;
}

function withMeta(body: Json, meta: AnswerMeta): Json {
  body.modelVersion = meta.model;
  body.responseId = meta.id;
  if (meta.gateway_metadata) body.gateway_metadata = meta.gateway_metadata;
  return body;
}

export function geminiFromIr(res: IrResponse, meta: AnswerMeta): Json {
  const hasRefusal = res.content.some((p) => p.type === 'refusal');
  const finish = hasRefusal && res.finish_reason === 'stop' ? 'content_filter' : res.finish_reason;
  const candidate: Json = { content: { role: 'model', parts: partsOut(res.content) }, finishReason: geminiFinishReason(finish, res.native_finish_reason), index: 0 };
  return withMeta({ candidates: [candidate], usageMetadata: usageMetadata(res.usage, meta) }, meta);
}

// ---- errors ------------------------------------------------------------------------------------------------------

/** google.rpc.Code name of a gateway status. */
export function googleStatus(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 402:
      return 'FAILED_PRECONDITION';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 405:
      return 'UNIMPLEMENTED';
    case 408:
    case 504:
    case 524:
      return 'DEADLINE_EXCEEDED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 502:
    case 503:
    case 529:
      return 'UNAVAILABLE';
    default:
      return status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT';
  }
}

/** `{error: {code, message, status, metadata?}}`: Google's shape, with the gateway's metadata (error_type, provider, …). */
export function geminiErrorBody(status: number, message: string, metadata: Record<string, unknown> | null): Json {
  const error: Json = { code: status, message, status: googleStatus(status) };
  if (metadata && Object.keys(metadata).length > 0) error.metadata = metadata;
  return { error };
}

// ---- stream ------------------------------------------------------------------------------------------------------

const frame = (chunk: Json): string => `data: ${JSON.stringify(chunk)}\n\n`;
/** The common chunk, one text part, up to its string (ASCII: the same as text or as Latin-1 text of its bytes). */
const TEXT_HEAD = 'data: {"candidates":[{"content":{"role":"model","parts":[{"text":';

/**
 * IR events → `streamGenerateContent` chunks (SSE). Text and thought deltas go out as they come, one chunk each;
 * function calls when whole (at their `part_end`); the last chunk carries finishReason and usageMetadata.
 */
export class GeminiStreamEncoder implements StreamEncoder {
  private done = false;
  private finishReason: IrFinishReason | null = null;
  private native: string | null = null;
  private usage: IrUsage | null = null;
  private sawTool = false;
  private sawRefusal = false;
  /** Reasoning parts that had text (a signature on them goes on a thought part). */
  private thoughtText = new Set<number>();
  /** A signature waiting for the next part (Gemini puts it on the part that follows the thinking). */
  private pending: string | undefined;
  private calls = new Map<number, { id: string; name: string; args: string }>();
  private textTail: string | undefined;
  /** The template's tail as Latin-1 text of its bytes (rawDelta). */
  private rawTail: string | undefined;

  constructor(private readonly meta: AnswerMeta) {}

  /** What follows a text part's string in the common chunk (`chunk` with one text part, no signature). */
  private tail(): string {
    return `}]},"index":0}],"modelVersion":${JSON.stringify(this.meta.model)},"responseId":${JSON.stringify(this.meta.id)}}\n\n`;
  }

  /**
   * The fast path (services/codec-ir-bytes.ts): a text delta's chunk from the template, its string as it came
   * (Latin-1 text of bytes). Tool arguments are gathered until the call ends, reasoning has its own form: null.
   */
  rawDelta(d: RawDelta): string | null {
    if (this.done || d.kind !== 'text_delta' || this.pending !== undefined) return null;
    return `${TEXT_HEAD}${d.buf.slice(d.from, d.to)}${(this.rawTail ??= latin1(this.textTail ??= this.tail()))}`;
  }

  start(): string {
    return '';
  }

  private chunk(parts: Json[]): string {
    if (this.pending !== undefined && parts.length > 0 && parts[0].thought !== true) {
      parts[0].thoughtSignature = this.pending;
      this.pending = undefined;
    }
    return frame(withMeta({ candidates: [{ content: { role: 'model', parts }, index: 0 }] }, { ...this.meta, gateway_metadata: undefined }));
  }

  private flushCall(index: number): string {
    const c = this.calls.get(index);
    if (!c) return '';
    this.calls.delete(index);
    return this.chunk([{ functionCall: { id: c.id, name: c.name, args: parseArguments(c.args) } }]);
  }

  event(ev: IrStreamEvent): string {
    if (this.done) return '';
    switch (ev.type) {
      case 'text_delta':
      case 'refusal_delta':
        if (ev.type === 'refusal_delta') this.sawRefusal = true;
        if (ev.text === '') return '';
        // The common chunk, text alone, from a template: what `chunk` serializes, without building it (one per token).
        if (this.pending === undefined) return `${TEXT_HEAD}${JSON.stringify(ev.text)}${(this.textTail ??= this.tail())}`;
        return this.chunk([{ text: ev.text }]);
      case 'reasoning_delta':
        if (ev.text === '') return '';
        this.thoughtText.add(ev.index);
        return this.chunk([{ text: ev.text, thought: true }]);
      case 'reasoning_signature':
        if (this.thoughtText.has(ev.index)) return this.chunk([{ text: '', thought: true, thoughtSignature: tagged(ev.signature, ev.origin) }]);
        {
          const before = this.pending !== undefined ? this.chunk([{ text: '', thoughtSignature: this.pending }]) : '';
          this.pending = tagged(ev.signature, ev.origin);
          return before;
        }
      case 'redacted_reasoning':
        return this.chunk([{ text: '', thought: true, thoughtSignature: `${REDACTED}${ev.data}` }]);
      case 'tool_call_start':
        this.sawTool = true;
        this.calls.set(ev.index, { id: ev.id, name: ev.name, args: '' });
        return '';
      case 'tool_call_delta': {
        this.sawTool = true;
        const c = this.calls.get(ev.index);
        if (c) c.args += ev.arguments;
        else this.calls.set(ev.index, { id: `call_${ev.index}`, name: '', args: ev.arguments });
        return '';
      }
      case 'part_end':
        return this.flushCall(ev.index);
      case 'finish':
        this.finishReason = ev.finish_reason;
        this.native = ev.native_finish_reason;
        return '';
      case 'usage':
        this.usage = ev.usage;
        return '';
      case 'start':
        return '';
      case 'image_partial': // previews of a generated image: the Responses API's only (docs/images.md)
        return '';
      case 'image': // a generated image (docs/images.md): one chunk with its inlineData part
        return this.chunk([{ inlineData: { mimeType: ev.media_type, data: ev.data } }]);
      case 'error':
        return this.error(ev.status, ev.message, ev.error_type, this.meta);
    }
  }

  finish(usage: IrUsage | null, meta: AnswerMeta): string {
    if (this.done) return '';
    let out = '';
    for (const index of [...this.calls.keys()]) out += this.flushCall(index);
    this.done = true;
    let finish: IrFinishReason = this.finishReason ?? (this.sawTool ? 'tool_calls' : 'stop');
    if (finish === 'stop' && this.sawRefusal) finish = 'content_filter';
    const parts: Json[] = this.pending !== undefined ? [{ text: '', thoughtSignature: this.pending }] : [];
    this.pending = undefined;
    const last = { candidates: [{ content: { role: 'model', parts }, finishReason: geminiFinishReason(finish, this.native), index: 0 }], usageMetadata: usageMetadata(usage ?? this.usage, meta) };
    return out + frame(withMeta(last, meta));
  }

  error(status: number, message: string, errorType: string, meta: AnswerMeta): string {
    if (this.done) return '';
    this.done = true;
    const body = geminiErrorBody(status, message, { error_type: errorType });
    if (meta.gateway_metadata) body.gateway_metadata = meta.gateway_metadata;
    return frame(body);
  }
}
