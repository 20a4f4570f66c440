/**
 * Azure OpenAI (docs/clouds.md): the OpenAI wire on Azure's URL shape and authentication.
 *
 *   chat completions  POST {resource}/openai/deployments/{deployment}/chat/completions?api-version=…
 *   embeddings        POST {resource}/openai/deployments/{deployment}/embeddings?api-version=…
 *   responses         POST {resource}/openai/responses?api-version=…   (the deployment is the body's `model`)
 *   images            POST {resource}/openai/deployments/{deployment}/images/generations?api-version=…
 *   speech            POST {resource}/openai/deployments/{deployment}/audio/speech?api-version=…
 *
 * The provider's `base_url` is the resource endpoint (`https://<resource>.openai.azure.com`); an endpoint's
 * `upstream_model` is the deployment name serving the catalog model. `cloud.api_version` picks the API version
 * (defaults below); `cloud.auth` is `api-key` (the `api-key` header, default) or `entra` (the key is a Microsoft
 * Entra ID access token, sent as `Authorization: Bearer`).
 *
 * The request bodies and answers are OpenAI's: the registry composes these functions with the OpenAI adapters
 * (this folder never imports another protocol's internals).
 */
import type { UpstreamAdapter, UpstreamContext, UpstreamHttpRequest } from '../../core/adapters.js';
import type { ImageAdapter } from '../images.js';
import type { SpeechAdapter } from '../speech.js';
import type { EndpointDef, ProviderDef } from '../../core/catalog-types.js';
import { mapUpstreamStatus, parseRetryAfter, rawBody, type UpstreamError } from '../../core/provider-errors.js';

/** The GA data-plane version for chat completions and embeddings. */
export const AZURE_CHAT_API_VERSION = '2024-10-21';
/** The Responses API needs a preview version (or `v1`). */
export const AZURE_RESPONSES_API_VERSION = '2025-04-01-preview';

/** Images (gpt-image-1 needs a preview version; DALL·E 3 takes it too) and speech (gpt-4o-mini-tts, tts-1). */
export const AZURE_IMAGES_API_VERSION = '2025-04-01-preview';
export const AZURE_SPEECH_API_VERSION = '2025-03-01-preview';

export type AzureApi = 'chat/completions' | 'embeddings' | 'responses' | 'images/generations' | 'audio/speech';

const DEFAULT_VERSION: Record<AzureApi, string> = {
  'chat/completions': AZURE_CHAT_API_VERSION,
  embeddings: AZURE_CHAT_API_VERSION,
  responses: AZURE_RESPONSES_API_VERSION,
  'images/generations': AZURE_IMAGES_API_VERSION,
  'audio/speech': AZURE_SPEECH_API_VERSION,
};

/** The Azure URL of an API call: per deployment, except the Responses API (resource-wide, deployment in the body). */
export function azureUrl(provider: ProviderDef, api: AzureApi, deployment: string): URL {
  const version = provider.cloud?.api_version ?? DEFAULT_VERSION[api];
  const base = provider.baseUrl.replace(/\/openai$/, '');
  if (version === 'v1' || version === 'preview' || version === 'latest') {
    // The v1 API: one path for every model, the deployment in the body.
    const u = new URL(`${base}/openai/v1/${api}`);
    if (version !== 'v1') u.searchParams.set('api-version', version);
    return u;
  }
  const path = api === 'responses' ? `${base}/openai/responses` : `${base}/openai/deployments/${encodeURIComponent(deployment)}/${api}`;
  const u = new URL(path);
  u.searchParams.set('api-version', version);
  return u;
}

/** The OpenAI headers made Azure's: `api-key` (or an Entra bearer token) instead of OpenAI's bearer key. */
export function azureHeaders(provider: ProviderDef, apiKey: string | null, openaiHeaders: Record<string, string>): Record<string, string> {
  const h = { ...openaiHeaders };
  delete h.authorization;
  if (apiKey) {
    if (provider.cloud?.auth === 'entra') h.authorization = `Bearer ${apiKey}`;
    else h['api-key'] = apiKey;
  }
  return h;
}

/**
 * Azure's errors: OpenAI's envelope, with Azure codes — `DeploymentNotFound` (404), `content_filter` (400, a refusal
 * of the request), `401` for a wrong key or endpoint, `429` with `retry-after` (and `retry-after-ms`).
 */
export function azureError(status: number, text: string, headers: Record<string, string | string[] | undefined>): UpstreamError {
  const raw = rawBody(text);
  const err = (raw as { error?: { message?: unknown; code?: unknown } } | null)?.error;
  const message = typeof err?.message === 'string' ? err.message : '';
  const contextTooLong = err?.code === 'context_length_exceeded' || /maximum context length/i.test(message);
  const ms = headers['retry-after-ms'];
  const retryMs = typeof ms === 'string' && /^\d+$/.test(ms) ? Math.ceil(Number(ms) / 1000) : null;
  return mapUpstreamStatus(status, message, raw, parseRetryAfter(headers['retry-after']) ?? retryMs, contextTooLong);
}

/** The body's `model` set to the deployment (the Responses API and the v1 API route by it). */
function withDeployment(body: string, deployment: string): string {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  parsed.model = deployment;
  return JSON.stringify(parsed);
}

function onAzureRequest(req: UpstreamHttpRequest, ctx: UpstreamContext, api: AzureApi): UpstreamHttpRequest {
  const deployment = ctx.endpoint.upstreamModel;
  return { url: azureUrl(ctx.provider, api, deployment), headers: azureHeaders(ctx.provider, ctx.apiKey, req.headers), body: withDeployment(req.body, deployment) };
}

/** An OpenAI chat (or Responses) adapter on Azure: same bodies and answers, Azure's URL, auth and errors. */
export function onAzure(openai: UpstreamAdapter, protocol: 'azure-openai' | 'azure-openai-responses'): UpstreamAdapter {
  const api: AzureApi = protocol === 'azure-openai' ? 'chat/completions' : 'responses';
  return {
    protocol,
    buildRequest: (req, ctx) => onAzureRequest(openai.buildRequest(req, ctx), ctx, api),
    parseResponse: (text) => openai.parseResponse(text),
    parseError: azureError,
    createStreamDecoder: () => openai.createStreamDecoder(),
  };
}

/** A request builder of the OpenAI wire (embeddings, images) moved onto Azure. */
export function azureBuilder<A extends unknown[], R extends { req: UpstreamHttpRequest }>(
  build: (body: Record<string, unknown>, endpoint: EndpointDef, provider: ProviderDef, apiKey: string | null, ...rest: A) => R,
  api: AzureApi,
) {
  return (body: Record<string, unknown>, endpoint: EndpointDef, provider: ProviderDef, apiKey: string | null, ...rest: A): R => {
    const built = build(body, endpoint, provider, apiKey, ...rest);
    const req = built.req;
    return { ...built, req: { url: azureUrl(provider, api, endpoint.upstreamModel), headers: azureHeaders(provider, apiKey, req.headers), body: withDeployment(String(req.body), endpoint.upstreamModel) } };
  };
}

/** An upstream request of the OpenAI wire moved onto Azure's deployment URL, headers and body `model`. */
function moved(req: UpstreamHttpRequest, ctx: UpstreamContext, api: AzureApi): UpstreamHttpRequest {
  const deployment = ctx.endpoint.upstreamModel;
  return { url: azureUrl(ctx.provider, api, deployment), headers: azureHeaders(ctx.provider, ctx.apiKey, req.headers), body: withDeployment(String(req.body), deployment) };
}

/**
 * OpenAI's images API on an Azure deployment (DALL·E 3, gpt-image-1): the same JSON body and answer. Reference
 * images are not offered: Azure's `images/edits` takes multipart form data only, so edits route to other endpoints.
 */
export function azureImages(openai: ImageAdapter): ImageAdapter {
  return {
    protocol: 'azure-openai-images',
    acceptsReferences: (refs) => refs.length === 0,
    buildRequest(req, ctx) {
      const built = openai.buildRequest(req, ctx);
      return { ...built, req: moved(built.req, ctx, 'images/generations') };
    },
    parseError: azureError,
    parse: (text) => openai.parse(text),
  };
}

/** OpenAI's speech API on an Azure deployment (gpt-4o-mini-tts, tts-1): the same body, audio answer and formats. */
export function azureSpeech(openai: SpeechAdapter): SpeechAdapter {
  return {
    protocol: 'azure-openai-tts',
    formats: openai.formats,
    buildRequest(req, ctx) {
      const built = openai.buildRequest(req, ctx);
      return { ...built, req: moved(built.req, ctx, 'audio/speech') };
    },
    parseError: azureError,
    openStream: (format, headers) => openai.openStream(format, headers),
  };
}
