/**
 * Amazon Bedrock runtime, the Converse API (docs/clouds.md): `converse` (JSON) and `converse-stream` (AWS event
 * stream), one request shape for every Bedrock model family (Anthropic, Llama, Mistral, Nova, …). The provider's
 * `base_url` is the runtime endpoint (`https://bedrock-runtime.<region>.amazonaws.com`); an endpoint's
 * `upstream_model` is the model id or inference profile (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`).
 */
import type { UpstreamAdapter } from '../../core/adapters.js';
import { authorizeBedrock } from './auth.js';
import { bedrockError } from './errors.js';
import { buildConverseBody, converseUrl } from './request.js';
import { parseConverseResponse } from './response.js';
import { ConverseStreamDecoder } from './stream.js';

export { authorizeBedrock, awsCredentialProblem, parseAwsCredentials } from './auth.js';
export { bedrockError } from './errors.js';
export { EVENT_STREAM } from './stream.js';

export const bedrockAdapter: UpstreamAdapter = {
  protocol: 'bedrock',
  buildRequest(req, ctx) {
    return {
      url: converseUrl(ctx.provider.baseUrl, ctx.endpoint.upstreamModel, req.stream),
      headers: { 'content-type': 'application/json', accept: req.stream ? 'application/vnd.amazon.eventstream' : 'application/json', 'user-agent': 'model-gateway/0.1', ...ctx.provider.headers },
      body: JSON.stringify(buildConverseBody(req, ctx)),
    };
  },
  parseResponse: parseConverseResponse,
  parseError: bedrockError,
  createStreamDecoder: () => new ConverseStreamDecoder(),
  authorize: authorizeBedrock,
};
