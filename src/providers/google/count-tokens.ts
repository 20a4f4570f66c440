/** Gemini's `:countTokens`: the request as generateContent would get it (system, tools and contents translated alike). */
import type { TokenCounter } from '../../core/adapters.js';
import { countIn } from '../count-tokens.js';
import { parseGoogleError } from './errors.js';
import { geminiHeaders, geminiMethodUrl, geminiModelPath, toGeminiBody } from './request.js';

export const googleCounter: TokenCounter = ({ ir }, ctx) => {
  const model = ctx.endpoint.upstreamModel;
  const g = toGeminiBody({ ...ir(), model, stream: false });
  delete g.generationConfig;
  return {
    url: geminiMethodUrl(ctx.provider.baseUrl, model, 'countTokens'),
    headers: geminiHeaders(ctx, false),
    body: JSON.stringify({ generateContentRequest: { model: geminiModelPath(model), ...g } }),
    parse: (t) => countIn(t, 'totalTokens'),
    parseError: parseGoogleError,
  };
};
