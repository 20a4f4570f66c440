/**
 * OpenAI Chat Completions as an upstream protocol, through the IR: IR request → `POST {baseUrl}/chat/completions`
 * body (ir-request.ts, where the mapping choices are listed), chat completion → IR response (ir-answer.ts), SSE
 * chunks → IR stream events (ir-stream.ts). Works for OpenAI and for every OpenAI-compatible server (vLLM, Together,
 * Groq, DeepSeek, OpenRouter-style hubs, the simulator).
 */
import type { IrRequest } from '../../core/ir.js';
import type { UpstreamAdapter, UpstreamContext } from '../../core/adapters.js';
import { chatHeaders, chatUrl, openaiError } from './chat.js';
import { buildChatBody, type ChatBodyOptions } from './ir-request.js';
import { parseChatResponse } from './ir-answer.js';
import { ChatStreamDecoder } from './ir-stream.js';

export { imageUrl, invalidResponse, irFinish, irUsageFromOpenAI, openaiEffort, parseJsonObject, parseStreamData, tokenCount } from './ir-shared.js';
export { buildChatBody, reasoningDetails, type ChatBodyOptions } from './ir-request.js';
export { parseChatResponse } from './ir-answer.js';
export { ChatStreamDecoder } from './ir-stream.js';

// ------------------------------------------------------------------------------------------------ adapter

export function buildChatRequest(req: IrRequest, ctx: UpstreamContext, opts: ChatBodyOptions = {}) {
  const sp = ctx.endpoint.supported_parameters;
  const legacyMaxTokens = opts.legacyMaxTokens ?? (sp.includes('max_tokens') && !sp.includes('max_completion_tokens'));
  return {
    url: chatUrl(ctx.provider),
    headers: chatHeaders(ctx.provider, ctx.apiKey, req.stream),
    body: JSON.stringify(buildChatBody(req, { ...opts, legacyMaxTokens })),
  };
}

export const openaiChatAdapter: UpstreamAdapter = {
  protocol: 'openai',
  buildRequest: (req, ctx) => buildChatRequest(req, ctx),
  parseResponse: parseChatResponse,
  parseError: openaiError,
  createStreamDecoder: () => new ChatStreamDecoder(),
};
