/**
 * The Anthropic Messages skin (POST /messages) as an inbound adapter: request body → IR (messages-request.ts), IR answer
 * → Message object and the Anthropic error envelope (messages-output.ts), IR stream events → Anthropic SSE
 * (messages-stream.ts); thinking signatures in messages-signing.ts.
 */
import type { InboundAdapter } from '../core/adapters.js';
import { errorBody, fromIr } from './messages-output.js';
import { toIr } from './messages-request.js';
import { MessagesStreamEncoder } from './messages-stream.js';

export { useReasoningKey } from './messages-signing.js';
export { checkMessagesBody, checkMessagesFallbacks, MAX_MESSAGES_FALLBACKS, messagesFallbackModels } from './messages-request.js';
export { anthropicErrorType, stopReason } from './messages-output.js';

export interface MessagesInboundAdapter extends InboundAdapter {
  /** `requestId` (the generation id, when one was assigned) fills the envelope's `request_id`. */
  errorBody(status: number, message: string, metadata: Record<string, unknown> | null, requestId?: string | null): Record<string, unknown>;
}

export const messagesInbound: MessagesInboundAdapter = {
  api: 'messages',
  toIr,
  fromIr,
  createStreamEncoder: (meta) => new MessagesStreamEncoder(meta),
  errorBody,
};
