/**
 * How one upstream attempt is encoded and decoded, whatever the pair of client API and upstream protocol:
 * - the fast path, chat completions in and an OpenAI-protocol upstream: the client body passes through (gateway
 *   fields removed, unsupported parameters dropped, unknown fields kept) and the stream is relayed as bytes with ids,
 *   model and usage rewritten (codec-chat.ts, chat-relay.ts);
 * - every other pair goes through the internal representation: inbound adapter → IR → upstream adapter, and back
 *   (codec-ir.ts). When client and upstream speak the same protocol (messages → Anthropic, responses → OpenAI
 *   Responses), the request body still passes through untouched except for what routing changes.
 * The codec's types are in codec-types.ts, usage views in codec-usage.ts.
 */
import type { EndpointDef, Protocol } from '../core/catalog-types.js';
import type { IrRequest } from '../core/ir.js';
import { chatInbound } from '../inbound/chat.js';
import { geminiInbound } from '../inbound/gemini.js';
import { messagesInbound } from '../inbound/messages.js';
import { responsesInbound } from '../inbound/responses.js';
import { chatAdapter } from '../providers/registry.js';
import type { CompiledFilter } from '../core/content-filters/index.js';
import type { StreamHealer } from './plugins/healing.js';
import type { InboundAdapter } from '../core/adapters.js';
import type { AttemptCodec } from './codec-types.js';
import { openaiPassthrough } from './codec-chat.js';
import { irCodec, type InboundApi } from './codec-ir.js';

export type { AttemptCodec, AttemptRequest, ParsedAnswer, StreamSession } from './codec-types.js';
export { chatUsageView, irToTokens } from './codec-usage.js';
export { irForEndpoint, irParams, withoutGatewayThinking, type InboundApi } from './codec-ir.js';
export { isPlainContentChunk, plainChunkRest } from '../providers/openai/chunk-scan.js';

export const INBOUND: Record<InboundApi, InboundAdapter> = { chat: chatInbound, responses: responsesInbound, messages: messagesInbound, gemini: geminiInbound };

/** The codec for one attempt. `ir` is required unless the pair is chat → OpenAI protocol. */
/** The `X-Gateway-Dropped-Fields` header of an answer: what the serving attempt dropped (docs/chat.md), if anything. */
export function droppedFieldsHeader(dropped: string[] | undefined): Record<string, string> {
  return dropped && dropped.length > 0 ? { 'x-gateway-dropped-fields': dropped.join(', ').replace(/[^\x20-\x7e]/g, '?').slice(0, 4000) } : {};
}

/**
 * `outputFilters`: content guardrails on a streamed reply — the stream then goes through the IR (also chat → OpenAI
 * protocol), where text deltas are redacted as they pass. `outputHealing`: the response-healing plugin on a streamed
 * reply (services/plugins/healing.ts), in the IR as well.
 */
export function codecFor(api: InboundApi, body: Record<string, unknown>, ir: Omit<IrRequest, 'model'> | null, endpoint: EndpointDef, protocol: Protocol, outputFilters: CompiledFilter[] | null = null, outputHealing: (() => StreamHealer) | null = null): AttemptCodec {
  if (api === 'chat' && protocol === 'openai' && !outputFilters && !outputHealing) return openaiPassthrough(body, endpoint);
  if (!ir) throw new Error('IR request missing for a translated attempt');
  return irCodec(api, INBOUND[api], body, ir, endpoint, chatAdapter(protocol), outputFilters, outputHealing);
}
