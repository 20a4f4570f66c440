/**
 * Anthropic Messages upstream protocol (`POST {baseUrl}/messages`, `anthropic-version: 2023-06-01`): IR request →
 * Messages request, Message / SSE stream → IR, Anthropic error envelope → UpstreamError. See request.ts for the
 * mapping choices (max_tokens default, thinking budgets, JSON output).
 */
import type { UpstreamAdapter } from '../../core/adapters.js';
import { anthropicError } from './errors.js';
import { buildRequest } from './request.js';
import { parseResponse } from './response.js';
import { createStreamDecoder } from './stream.js';

export const anthropicAdapter: UpstreamAdapter = {
  protocol: 'anthropic',
  buildRequest,
  parseResponse,
  parseError: anthropicError,
  createStreamDecoder,
};

export { anthropicError, anthropicStreamError, isContextTooLong, statusOfErrorType } from './errors.js';
export { anthropicHeaders, anthropicUrl, buildRequest, DEFAULT_MAX_TOKENS, EFFORT_BUDGET, MIN_THINKING_BUDGET, requestBody, thinkingBudget } from './request.js';
export { parseResponse } from './response.js';
export { AnthropicStreamDecoder, createStreamDecoder } from './stream.js';
export { SseParser } from '../sse.js';
export { ANTHROPIC_VERSION, irUsage, finishReason, JSON_TOOL_NAME } from './wire.js';
