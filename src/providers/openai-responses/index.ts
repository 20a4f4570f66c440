/** OpenAI Responses API upstream adapter: requests and answers in upstream.ts, the event stream in stream.ts. */
import type { UpstreamAdapter } from '../../core/adapters.js';
import { openaiError } from '../openai/chat.js';
import { ResponsesStreamDecoder } from './stream.js';
import { buildResponsesRequest, parseResponsesResponse } from './upstream.js';

export { buildResponsesBody, buildResponsesRequest, irUsageFromResponses, parseResponsesResponse, responsesError } from './upstream.js';
export { ResponsesStreamDecoder } from './stream.js';

export const openaiResponsesAdapter: UpstreamAdapter = {
  protocol: 'openai-responses',
  buildRequest: buildResponsesRequest,
  parseResponse: parseResponsesResponse,
  parseError: openaiError,
  createStreamDecoder: () => new ResponsesStreamDecoder(),
};
