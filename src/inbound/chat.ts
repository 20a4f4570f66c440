/**
 * The chat completions API (`POST /chat/completions`) as an inbound adapter: client body → IR, IR answer → chat
 * completion, IR events → `chat.completion.chunk` SSE. The mapping lives in src/providers/openai/ir-inbound.ts.
 */
import { ChatStreamEncoder, chatErrorBody, chatFromIr, chatToIr } from '../providers/openai/ir-inbound.js';
import type { InboundAdapter } from '../core/adapters.js';

export const chatInbound: InboundAdapter = {
  api: 'chat',
  toIr: chatToIr,
  fromIr: chatFromIr,
  createStreamEncoder: (meta) => new ChatStreamEncoder(meta),
  errorBody: chatErrorBody,
};
