/**
 * OpenAI Chat Completions protocol (OpenAI and every OpenAI-compatible server): request URL and headers,
 * error mapping, and usage extraction from responses and stream chunks.
 */
import type { ProviderDef } from '../../core/catalog-types.js';
import type { TokenUsage } from '../../core/pricing.js';
import { mapUpstreamStatus, parseRetryAfter, rawBody, type UpstreamError } from '../../core/provider-errors.js';

// Built once per provider (the hot path asks for them on every attempt); frozen because they are shared.
/** The headers of a provider per API key: [non-streamed, streamed], built once. */
const headerSets = new WeakMap<ProviderDef, Map<string, [Readonly<Record<string, string>> | null, Readonly<Record<string, string>> | null]>>();

/** `{base}/<path>` of a provider's OpenAI-style API, built once per provider. */
export function providerUrl(path: string): (provider: ProviderDef) => URL {
  const urls = new WeakMap<ProviderDef, URL>();
  return (provider) => {
    let url = urls.get(provider);
    if (!url) {
      url = Object.freeze(new URL(`${provider.baseUrl}/${path}`));
      urls.set(provider, url);
    }
    return url;
  };
}

export const chatUrl = providerUrl('chat/completions');

export function chatHeaders(provider: ProviderDef, apiKey: string | null, stream: boolean): Record<string, string> {
  let byKey = headerSets.get(provider);
  if (!byKey) {
    byKey = new Map();
    headerSets.set(provider, byKey);
  }
  // Keyed by the API key string itself (the same string every request, its hash kept), not a key built per request.
  let pair = byKey.get(apiKey ?? '');
  if (!pair) byKey.set(apiKey ?? '', (pair = [null, null]));
  const at = stream ? 1 : 0;
  let h = pair[at];
  if (!h) {
    const built: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      'user-agent': 'model-gateway/0.1',
      ...provider.headers,
    };
    if (apiKey) built.authorization = `Bearer ${apiKey}`;
    h = Object.freeze(built);
    pair[at] = h;
  }
  return h as Record<string, string>;
}

/** An upstream error response (status and body text) as the gateway's error. */
export function openaiError(status: number, text: string, headers: Record<string, string | string[] | undefined>): UpstreamError {
  const raw = rawBody(text);
  const err = (raw as { error?: { message?: string; code?: string | number; type?: string } } | null)?.error;
  const message = typeof err?.message === 'string' ? err.message : '';
  const contextTooLong = err?.code === 'context_length_exceeded' || /context length|maximum context/i.test(message);
  return mapUpstreamStatus(status, message, raw, parseRetryAfter(headers['retry-after']), contextTooLong);
}

export interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number; audio_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  /** Some compatible servers report cache writes at the top level. */
  cache_creation_input_tokens?: number;
}

/** OpenAI usage → the pricing module's token counts (prompt includes cached; completion includes reasoning). */
export function tokenUsage(u: OpenAIUsage | null | undefined): TokenUsage | null {
  if (!u || typeof u.prompt_tokens !== 'number') return null;
  return {
    promptTokens: u.prompt_tokens,
    completionTokens: u.completion_tokens ?? 0,
    cachedReadTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: u.prompt_tokens_details?.cache_write_tokens ?? u.cache_creation_input_tokens ?? 0,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** An in-stream error event (`data: {"error": {...}}`) as the gateway's error. */
export function streamError(payload: { error?: { message?: string; code?: unknown; type?: string } }): UpstreamError {
  const e = payload.error ?? {};
  const code = typeof e.code === 'number' ? e.code : e.type === 'rate_limit_exceeded' || e.code === 'rate_limit_exceeded' ? 429 : 502;
  return mapUpstreamStatus(code, e.message ?? 'Provider returned error', payload, null);
}
