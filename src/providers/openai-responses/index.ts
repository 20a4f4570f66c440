/** OpenAI Responses API upstream adapter (see upstream.ts). */
export {
  buildResponsesBody,
  buildResponsesRequest,
  irUsageFromResponses,
  openaiResponsesAdapter,
  parseResponsesResponse,
  responsesError,
  ResponsesStreamDecoder,
} from './upstream.js';
