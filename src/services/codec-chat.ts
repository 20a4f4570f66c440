/**
 * The fast path, chat completions to an OpenAI-protocol upstream: the client body passes through (gateway fields
 * removed, unsupported parameters dropped, unknown fields kept, large `messages` spliced in as received) and the
 * stream is relayed as bytes with ids, model and usage rewritten (chat-relay.ts).
 */
import type { EndpointDef } from '../core/catalog-types.js';
import { normalizeChoices } from '../core/chat-shape.js';
import { openaiBody } from '../core/params.js';
import { rawMessages, withRawMessages, without } from '../core/raw-json.js';
import { sameConversation } from '../core/lazy-body.js';
import { UpstreamError } from '../core/provider-errors.js';
import { openaiChatWire, type OpenAIUsage } from '../providers/registry.js';
import type { AttemptCodec } from './codec-types.js';
import { chatUsageView } from './codec-usage.js';
import { chatRelay, mirrorReasoning } from './chat-relay.js';

/** The OpenAI chat wire of the fast path (providers/registry.ts). */
const { url: chatUrl, headers: chatHeaders, parseError: openaiError, streamError, tokenUsage, checkResponse: checkChatResponse } = openaiChatWire;

/**
 * The same-protocol upstream body as bytes: the client's `messages` spliced in as received when the body is the one
 * the JSON parser checked (the large part, neither re-serialized, re-encoded nor copied: undici writes the parts in
 * turn, with their total as the content-length; core/raw-json.ts), the rest serialized; else the whole body
 * serialized, encoded once here (undici would encode a string itself).
 */
function upstreamBody(body: Record<string, unknown>, out: Record<string, unknown>, headers: Record<string, string>): { body: Buffer | Buffer[]; headers: Record<string, string> } {
  const raw = sameConversation(out, body, 'messages') ? rawMessages(body) : null;
  if (!raw) return { body: Buffer.from(JSON.stringify(out)), headers };
  const parts = withRawMessages(without(out, 'messages'), raw);
  // Copied, then the length set: a property after an object spread costs about a microsecond on this V8.
  const sized: Record<string, string> = {};
  for (const k in headers) sized[k] = headers[k]!;
  sized['content-length'] = String(parts.reduce((n, b) => n + b.length, 0));
  return { body: parts, headers: sized };
}

export function openaiPassthrough(body: Record<string, unknown>, endpoint: EndpointDef): AttemptCodec {
  return {
    request(ctx, stream) {
      const { body: out, dropped } = openaiBody(body, endpoint, stream);
      const url = chatUrl(ctx.provider);
      const sent = upstreamBody(body, out, chatHeaders(ctx.provider, ctx.apiKey, stream));
      // An explicit literal: a spread in a literal costs more on this V8 than naming the two fields.
      return { req: { url, body: sent.body, headers: sent.headers }, dropped };
    },
    parseError: openaiError,
    parse(text) {
      let json: Record<string, unknown>;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new UpstreamError(502, 'Provider returned an invalid (non-JSON) response', 'provider_unavailable', 200, text.slice(0, 512));
      }
      if (!json || !Array.isArray(json.choices)) {
        if ((json as { error?: unknown })?.error) throw streamError(json as { error?: { message?: string } });
        throw new UpstreamError(502, 'Provider returned an invalid response (no choices)', 'provider_unavailable', 200, json);
      }
      checkChatResponse(json);
      mirrorReasoning(json.choices, 'message');
      const native = (json.choices as Array<{ finish_reason?: string }>)[0]?.finish_reason ?? null;
      const finish = normalizeChoices(json.choices);
      const raw = (json.usage as OpenAIUsage | undefined) ?? null;
      const usage = tokenUsage(raw);
      return {
        usage,
        finish,
        native,
        upstreamId: typeof json.id === 'string' ? json.id : null,
        render(meta) {
          // The parsed upstream answer is ours: fields are set in place (unknown upstream fields stay as they are).
          json.id = meta.id;
          json.object = 'chat.completion';
          json.model = meta.model;
          json.provider = meta.provider;
          json.system_fingerprint ??= null;
          json.usage = chatUsageView(usage, raw, meta);
          if (meta.gateway_metadata) json.gateway_metadata = meta.gateway_metadata;
          return json;
        },
      };
    },
    openStream: (meta) => chatRelay(meta),
  };
}
