/**
 * Every pair but the chat fast path goes through the internal representation: inbound adapter → IR → upstream
 * adapter, and back. When client and upstream speak the same protocol (messages → Anthropic, responses → OpenAI
 * Responses), the request body still passes through untouched except for what routing changes.
 */
import type { EndpointDef } from '../core/catalog-types.js';
import type { IrPart, IrRequest, IrResponse } from '../core/ir.js';
import { GATEWAY_FIELDS, MODEL_PARAMS } from '../core/params.js';
import { partsLength, spliceRaw, withRawField } from '../core/raw-json.js';
import { conversationBytes, lazyConversation, shareLazy, type LazyKey } from '../core/lazy-body.js';
import { copyIr, withoutConversation } from './chat/lazy-ir.js';
import { isGatewaySignature } from '../core/reasoning-signature.js';
import { responsesInbound } from '../inbound/responses.js';
import { withImageTool } from '../providers/registry.js';
import type { CompiledFilter } from '../core/content-filters/index.js';
import type { StreamHealer } from './plugins/healing.js';
import type { InboundAdapter, UpstreamAdapter, UpstreamContext, UpstreamHttpRequest } from '../core/adapters.js';
import type { AttemptCodec, AttemptRequest } from './codec-types.js';
import { irToTokens } from './codec-usage.js';
import { IrStreamSession } from './codec-ir-stream.js';
import { hasRawPath, IrByteStreamSession } from './codec-ir-bytes.js';

export type InboundApi = 'chat' | 'responses' | 'messages' | 'gemini';

/** IR fields and the `supported_parameters` names that allow them. */
const IR_PARAMS: Array<[Exclude<keyof IrRequest, 'model'>, string[]]> = [
  ['temperature', ['temperature']],
  ['top_p', ['top_p']],
  ['top_k', ['top_k']],
  ['frequency_penalty', ['frequency_penalty']],
  ['presence_penalty', ['presence_penalty']],
  ['seed', ['seed']],
  ['stop', ['stop']],
  ['response_format', ['response_format', 'structured_outputs']],
  ['tools', ['tools']],
  ['tool_choice', ['tool_choice', 'tools']],
  ['parallel_tool_calls', ['parallel_tool_calls', 'tools']],
  ['reasoning', ['reasoning', 'reasoning_effort', 'include_reasoning']],
  // Image output (docs/images.md): only to endpoints that list `modalities` (image-output models).
  ['modalities', ['modalities']],
];

/** The model parameters an IR request sets, by catalog name (for routing's `require_parameters`). */
export function irParams(ir: Omit<IrRequest, 'model'>): string[] {
  const out: string[] = [];
  for (const [field, names] of IR_PARAMS) if (ir[field] !== undefined && ir[field] !== null) out.push(names[0]);
  if (ir.max_tokens !== undefined) out.push('max_tokens');
  return out;
}

/** The IR for one endpoint: its model id, and the parameters it does not support removed. */
export function irForEndpoint(ir: Omit<IrRequest, 'model'>, endpoint: EndpointDef, stream: boolean): { ir: IrRequest; dropped: string[] } {
  // A lazy IR's conversation stays unread (chat/lazy-ir.ts).
  const out = copyIr(ir) as IrRequest;
  out.model = endpoint.upstreamModel;
  out.stream = stream;
  const dropped: string[] = [];
  for (const [field, names] of IR_PARAMS) {
    if (out[field] === undefined) continue;
    if (!names.some((n) => endpoint.supported_parameters.includes(n))) {
      delete out[field];
      dropped.push(names[0]);
    }
  }
  return { ir: out, dropped: [...new Set(dropped)] };
}

function withoutReasoning(res: IrResponse): IrResponse {
  return { ...res, content: res.content.filter((p: IrPart) => p.type !== 'reasoning' && p.type !== 'redacted_reasoning') };
}

/** The client body, passed through to an upstream that speaks the same protocol (`raw`: its large field as received). */
function passthroughBody(body: Record<string, unknown>, endpoint: EndpointDef, stream: boolean, extraDrop: string[], raw = false, adjust?: (out: Record<string, unknown>) => void): string | Buffer[] {
  // A lazy conversation (core/lazy-body.ts) is shared unread: its messages' contents are strings (no thinking blocks).
  const lazy: LazyKey | null = lazyConversation(body, 'messages') ? 'messages' : lazyConversation(body, 'input') ? 'input' : null;
  const out: Record<string, unknown> = {};
  for (const k in body) {
    if (GATEWAY_FIELDS.has(k) && k !== 'messages' && k !== 'stream') continue;
    if (extraDrop.includes(k)) continue;
    if (MODEL_PARAMS.has(k) && !endpoint.supported_parameters.includes(k) && k !== 'max_tokens') continue;
    if (k === lazy) shareLazy(body, out, k);
    else out[k] = body[k];
  }
  out.model = endpoint.upstreamModel;
  out.stream = stream;
  if (lazy !== 'messages' && Array.isArray(out.messages)) out.messages = withoutGatewayThinking(out.messages);
  adjust?.(out);
  return raw ? spliceRaw(body, out, lazy ?? (out.messages !== undefined ? 'messages' : 'input')) : JSON.stringify(out);
}

/**
 * Anthropic messages without the thinking blocks the gateway signed (core/reasoning-signature.ts): Anthropic verifies
 * its own signatures only, and accepts earlier turns without their thinking. The same array when there is none.
 */
export function withoutGatewayThinking(messages: unknown[]): unknown[] {
  const signed = (b: unknown) => typeof b === 'object' && b !== null && (b as { type?: unknown }).type === 'thinking' && isGatewaySignature((b as { signature?: unknown }).signature);
  const has = (m: unknown) => typeof m === 'object' && m !== null && Array.isArray((m as { content?: unknown }).content) && ((m as { content: unknown[] }).content).some(signed);
  if (!messages.some(has)) return messages;
  return messages.map((m) => (has(m) ? { ...(m as object), content: (m as { content: unknown[] }).content.filter((b) => !signed(b)) } : m));
}

/**
 * The client's bytes of a Gemini body's `contents` for a Google upstream, when they are still the lazy conversation
 * (core/lazy-body.ts: text parts only) and the IR path would send the same contents: roles user and model only, no
 * two neighbours of one role (the IR merges them). Null otherwise, and for a signed request (a string body).
 */
function geminiContents(api: InboundApi, body: Record<string, unknown>, upstream: UpstreamAdapter): Buffer | Buffer[] | null {
  if (api !== 'gemini' || upstream.protocol !== 'google' || upstream.authorize !== undefined) return null;
  const c = lazyConversation(body, 'contents');
  if (!c || c.repeats || c.roles.some((r) => r !== 'user' && r !== 'model')) return null;
  return conversationBytes(body, 'contents');
}

/** OpenAI's Responses API has no `modalities`: image output is asked with its hosted image_generation tool. */
function responsesModalities(out: Record<string, unknown>): void {
  if (out.modalities === undefined) return;
  if (Array.isArray(out.modalities) && out.modalities.includes('image')) out.tools = withImageTool(out.tools);
  delete out.modalities;
}

/** The codec of a translated (or same-protocol Messages / Responses) attempt; `inbound` is the adapter of `api`. */
export function irCodec(api: InboundApi, inbound: InboundAdapter, body: Record<string, unknown>, ir: Omit<IrRequest, 'model'>, endpoint: EndpointDef, upstream: UpstreamAdapter, filters: CompiledFilter[] | null, healing: (() => StreamHealer) | null): AttemptCodec {
  const exclude = ir.reasoning?.exclude === true;
  const request = api === 'responses' ? body : undefined;
  // Same protocol on both sides: the body passes through (Anthropic needs max_tokens, so only when the client sent it).
  const passthrough = (api === 'messages' && upstream.protocol === 'anthropic' && typeof body.max_tokens === 'number') || (api === 'responses' && upstream.protocol === 'openai-responses');
  return {
    request(ctx, stream) {
      const { ir: forEndpoint, dropped } = irForEndpoint(ir, endpoint, stream);
      // Passing through, the IR's messages are not serialized only to be replaced: the request's URL and headers do not
      // depend on them (issue 18: a 1 MB conversation was serialized twice).
      const contents = passthrough ? null : geminiContents(api, body, upstream);
      const req: AttemptRequest = upstream.buildRequest(passthrough || contents ? withoutConversation(forEndpoint) : forEndpoint, ctx);
      if (contents) {
        // Gemini to a Google upstream: the request as the adapter builds it from the IR, the client's contents bytes in it.
        const fields = JSON.parse(req.body as string) as Record<string, unknown>;
        delete fields.contents;
        const sent = withRawField(fields, 'contents', contents);
        req.body = sent;
        req.headers = { ...req.headers, 'content-length': String(partsLength(sent)) };
        if (ir.dropped_fields) dropped.push(...ir.dropped_fields);
      } else if (passthrough) {
        // The client's `messages` (`input`) bytes as received when the body is the parsed one (core/raw-json.ts); a
        // signed request (authorize) keeps a string body.
        const sent = passthroughBody(body, endpoint, stream, api === 'messages' ? ['fallbacks', 'models'] : ['models'], upstream.authorize === undefined, api === 'responses' ? responsesModalities : undefined);
        req.body = sent;
        if (typeof sent !== 'string') req.headers = { ...req.headers, 'content-length': String(partsLength(sent)) };
      }
      // What the IR could not carry reaches a same-protocol upstream only (X-Gateway-Dropped-Fields lists it otherwise).
      else if (ir.dropped_fields) dropped.push(...ir.dropped_fields);
      return { req, dropped };
    },
    // The adapters' requests (`request` above) have string bodies: what reaches authorize is one of them.
    ...(upstream.authorize ? { authorize: (req: AttemptRequest, ctx: UpstreamContext) => upstream.authorize!(req as UpstreamHttpRequest, ctx) } : {}),
    parseError: (status, text, headers) => upstream.parseError(status, text, headers),
    parse(text) {
      let res = upstream.parseResponse(text);
      if (exclude) res = withoutReasoning(res);
      return {
        usage: irToTokens(res.usage),
        finish: res.finish_reason,
        native: res.native_finish_reason,
        upstreamId: res.id,
        render: (meta) => (api === 'responses' ? responsesInbound.fromIr(res, meta, request) : inbound.fromIr(res, meta)),
      };
    },
    openStream(meta) {
      const encoder = api === 'responses' ? responsesInbound.createStreamEncoder(meta, request) : inbound.createStreamEncoder(meta);
      const decoder = upstream.createStreamDecoder();
      // The byte-level fast path when both sides have it and nothing must see each delta's text (codec-ir-bytes.ts).
      if (!filters && !healing && hasRawPath(decoder, encoder)) return new IrByteStreamSession(decoder, encoder, exclude);
      return new IrStreamSession(decoder, encoder, { exclude, filters, healer: healing ? healing() : null });
    },
  };
}

