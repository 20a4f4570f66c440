/**
 * The headers of a provider's own Files API (uploads and deletes by the files service, `POST /files?provider=`):
 * OpenAI's bearer key, or Anthropic's key, API version and Files API beta — the same values the Anthropic adapter sends.
 */
import { FILES_BETA } from './anthropic/request.js';
import { ANTHROPIC_VERSION } from './anthropic/wire.js';

export type FilesApiProtocol = 'openai' | 'anthropic';

export const filesApiHeaders = (protocol: FilesApiProtocol, secret: string): Record<string, string> =>
  protocol === 'openai' ? { authorization: `Bearer ${secret}` } : { 'x-api-key': secret, 'anthropic-version': ANTHROPIC_VERSION, 'anthropic-beta': FILES_BETA };
