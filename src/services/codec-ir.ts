/**
 * Every pair but the chat fast path goes through the internal representation: inbound adapter → IR → upstream
 * adapter, and back. When client and upstream speak the same protocol (messages → Anthropic, responses → OpenAI
 * Responses), the request body still passes through untouched except for what routing changes.
 */
import type { EndpointDef } from '../core/catalog-types.js';
import type { IrPart, IrRequest, IrResponse, IrStreamEvent, IrUsage } from '../core/ir.js';
import { GATEWAY_FIELDS, MODEL_PARAMS } from '../core/params.js';
import { partsLength, spliceRaw } from '../core/raw-json.js';
import { isGatewaySignature } from '../core/reasoning-signature.js';
import { UpstreamError } from '../core/provider-errors.js';
import { responsesInbound } from '../inbound/responses.js';
import { IrStreamGuard, type CompiledFilter } from '../core/content-filters/index.js';
import type { StreamHealer } from './plugins/healing.js';
import type { AnswerMeta, InboundAdapter, UpstreamAdapter, UpstreamContext, UpstreamHttpRequest } from '../core/adapters.js';
import type { AttemptCodec, AttemptRequest } from './codec-types.js';
import { irToTokens } from './codec-usage.js';
import { deltaTokens } from './chat-relay.js';

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
  const out: IrRequest = { ...ir, model: endpoint.upstreamModel, stream };
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

const REASONING_EVENTS = new Set(['reasoning_delta', 'reasoning_signature', 'redacted_reasoning']);
const CONTENT_EVENTS = new Set(['text_delta', 'reasoning_delta', 'reasoning_signature', 'redacted_reasoning', 'refusal_delta', 'tool_call_start', 'tool_call_delta', 'image']);

function withoutReasoning(res: IrResponse): IrResponse {
  return { ...res, content: res.content.filter((p: IrPart) => p.type !== 'reasoning' && p.type !== 'redacted_reasoning') };
}

/** The client body, passed through to an upstream that speaks the same protocol (`raw`: its large field as received). */
function passthroughBody(body: Record<string, unknown>, endpoint: EndpointDef, stream: boolean, extraDrop: string[], raw = false): string | Buffer[] {
  const out: Record<string, unknown> = {};
  for (const k in body) {
    if (GATEWAY_FIELDS.has(k) && k !== 'messages' && k !== 'stream') continue;
    if (extraDrop.includes(k)) continue;
    if (MODEL_PARAMS.has(k) && !endpoint.supported_parameters.includes(k) && k !== 'max_tokens') continue;
    out[k] = body[k];
  }
  out.model = endpoint.upstreamModel;
  out.stream = stream;
  if (Array.isArray(out.messages)) out.messages = withoutGatewayThinking(out.messages);
  return raw ? spliceRaw(body, out, out.messages !== undefined ? 'messages' : 'input') : JSON.stringify(out);
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
      const req: AttemptRequest = upstream.buildRequest(passthrough ? { ...forEndpoint, messages: [] } : forEndpoint, ctx);
      if (passthrough) {
        // The client's `messages` (`input`) bytes as received when the body is the parsed one (core/raw-json.ts); a
        // signed request (authorize) keeps a string body.
        const sent = passthroughBody(body, endpoint, stream, api === 'messages' ? ['fallbacks', 'models'] : ['models'], upstream.authorize === undefined);
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
      const decoder = upstream.createStreamDecoder();
      const encoder = api === 'responses' ? responsesInbound.createStreamEncoder(meta, request) : inbound.createStreamEncoder(meta);
      let usage: IrUsage | null = null;
      let pending: IrStreamEvent[] = [];
      // Content guardrails on the output (core/content-filters/ir-stream.ts): deltas redacted as they pass.
      const guard = filters ? new IrStreamGuard(filters) : null;
      // response-healing (services/plugins/healing.ts): after the guardrails, on what the client receives.
      const healer = healing ? healing() : null;
      const s = {
        binary: decoder.pushBytes !== undefined,
        get blocked() {
          return guard?.blocked ?? null;
        },
        outputPipeline: () => [...(guard?.pipeline() ?? []), ...(healer?.pipeline() ?? [])],
        contentStarted: false,
        failure: null as UpstreamError | null,
        producedTokens: 0,
        finish: null as string | null,
        native: null as string | null,
        upstreamId: null as string | null,
        /** Output produced upstream, counted before the guardrails hold back or drop any (what a cut stream bills). */
        count(events: IrStreamEvent[]): IrStreamEvent[] {
          for (const ev of events) if (CONTENT_EVENTS.has(ev.type)) s.producedTokens += deltaTokens(irDeltaChars(ev));
          return events;
        },
        handle(events: IrStreamEvent[]): string {
          let out = '';
          for (const ev of events) {
            switch (ev.type) {
              case 'error': {
                const err = new UpstreamError(ev.status, ev.message, ev.error_type as UpstreamError['type'], null, ev.raw ?? null);
                if (out === '') throw err;
                s.failure = err;
                return out;
              }
              case 'usage':
                usage = ev.usage;
                continue; // reported once, by finishOut
              case 'start':
                s.upstreamId = ev.id;
                break;
              case 'finish':
                s.finish = ev.finish_reason;
                s.native = ev.native_finish_reason;
                break;
            }
            if (exclude && REASONING_EVENTS.has(ev.type)) continue;
            if (!s.contentStarted) {
              // Nothing goes to the client before content: a failure until then may still fall back.
              pending.push(ev);
              if (!CONTENT_EVENTS.has(ev.type)) continue;
              s.contentStarted = true;
              out += encoder.start();
              for (const p of pending) out += encoder.event(p);
              pending = [];
              continue;
            }
            out += encoder.event(ev);
          }
          return out;
        },
        push(input: string | Uint8Array): string {
          let events: IrStreamEvent[];
          try {
            events = typeof input === 'string' ? decoder.push(input) : decoder.pushBytes!(input);
          } catch (err) {
            throw err instanceof UpstreamError ? err : new UpstreamError(502, 'Provider sent an invalid stream', 'provider_unavailable', 200, String(err));
          }
          const out = guard ? guard.events(s.count(events)) : s.count(events);
          return s.handle(healer && !guard?.blocked ? healer.events(out) : out);
        },
        end(): string {
          const events = s.count(decoder.end());
          const out = guard ? [...guard.events(events), ...guard.end()] : events;
          return s.handle(healer && !guard?.blocked ? [...healer.events(out), ...healer.end()] : out);
        },
        finishOut(m: AnswerMeta): string {
          let out = '';
          if (!s.contentStarted) {
            out += encoder.start();
            for (const p of pending) out += encoder.event(p);
            pending = [];
          }
          return out + encoder.finish(usage, m);
        },
        errorOut(status: number, message: string, errorType: string, m: AnswerMeta): string {
          return encoder.error(status, message, errorType, m);
        },
        usage: () => irToTokens(usage),
      };
      return s;
    },
  };
}

/** Characters of output in an IR stream event. */
function irDeltaChars(ev: IrStreamEvent): number {
  const e = ev as { text?: unknown; arguments?: unknown; name?: unknown; delta?: unknown };
  return [e.text, e.arguments, e.name, e.delta].reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 0), 0);
}
