/**
 * Google Gemini API upstream (`generateContent`, `streamGenerateContent?alt=sse`, API-key auth via `x-goog-api-key`).
 * The provider's `baseUrl` includes the version, e.g. `https://generativelanguage.googleapis.com/v1beta`.
 *
 * Design notes live with the code: request mapping (roles, tool ids, thought signatures, JSON Schema, thinking budgets)
 * in request.ts, response mapping (parts, ids, usage, finish reasons) in response.ts, streaming in stream.ts, error
 * mapping in errors.ts.
 */
import type { UpstreamAdapter } from '../../core/adapters.js';
import { parseGoogleError } from './errors.js';
import { buildGeminiRequest } from './request.js';
import { parseGeminiResponse } from './response.js';
import { createGeminiStreamDecoder } from './stream.js';

export const googleAdapter: UpstreamAdapter = {
  protocol: 'google',
  buildRequest: buildGeminiRequest,
  parseResponse: parseGeminiResponse,
  parseError: parseGoogleError,
  createStreamDecoder: createGeminiStreamDecoder,
};

export { EFFORT_BUDGET, cleanSchema, geminiUrl, toContents, toGeminiBody, toThinkingConfig } from './request.js';
export { CallIds, mapFinishReason, mapUsage, partsToIr } from './response.js';
export { googleErrorBody, mapGoogleError, retryDelaySeconds, streamErrorEvent } from './errors.js';
export type * from './types.js';
