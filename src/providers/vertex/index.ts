/**
 * Google Vertex AI (docs/clouds.md): Gemini models (`generateContent` / `streamGenerateContent` on Vertex) and
 * Anthropic models (`rawPredict` / `streamRawPredict`), authenticated with a service account (auth.ts).
 *
 *   {base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent
 *   {base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent?alt=sse
 *   {base}/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict | :streamRawPredict
 *
 * The provider's `base_url` is the regional endpoint (`https://us-east5-aiplatform.googleapis.com`, or
 * `https://aiplatform.googleapis.com` for `global`); `cloud.project` (else the key file's `project_id`),
 * `cloud.location` (else the region in the host name, else `global`) and `cloud.token_url` complete it. The key is the
 * service account's JSON key file. Bodies and answers are Gemini's and Anthropic's: the registry composes these
 * functions with those adapters (this folder never imports another protocol's internals). Anthropic bodies lose
 * `model` (it is in the URL) and gain `anthropic_version: vertex-2023-10-16`.
 */
import type { UpstreamAdapter, UpstreamContext, UpstreamHttpRequest } from '../../core/adapters.js';
import type { ProviderDef } from '../../core/catalog-types.js';
import { accessToken, GOOGLE_TOKEN_URL, parseServiceAccount } from './auth.js';

export { serviceAccountProblem, parseServiceAccount, tokenExchanges } from './auth.js';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

const REGIONAL_HOST = /^([a-z]+-[a-z]+\d+)-aiplatform\.googleapis\.com$/;

function locationOf(provider: ProviderDef): string {
  return provider.cloud?.location ?? REGIONAL_HOST.exec(new URL(provider.baseUrl).hostname)?.[1] ?? 'global';
}

function projectOf(provider: ProviderDef, apiKey: string | null): string {
  const p = provider.cloud?.project ?? (apiKey ? parseServiceAccount(apiKey).project_id : undefined);
  return p ?? 'unknown-project';
}

export function vertexUrl(provider: ProviderDef, apiKey: string | null, publisher: 'google' | 'anthropic', model: string, method: string): URL {
  const base = provider.baseUrl.replace(/\/v1$/, '');
  return new URL(`${base}/v1/projects/${encodeURIComponent(projectOf(provider, apiKey))}/locations/${encodeURIComponent(locationOf(provider))}/publishers/${publisher}/models/${model.replace(/[^A-Za-z0-9._@-]/g, encodeURIComponent)}:${method}`);
}

/** Adds the service account's access token (exchanged or cached). */
export async function authorizeVertex(req: UpstreamHttpRequest, ctx: UpstreamContext): Promise<UpstreamHttpRequest> {
  const sa = parseServiceAccount(ctx.apiKey ?? '');
  const token = await accessToken(sa, ctx.provider.cloud?.token_url ?? GOOGLE_TOKEN_URL);
  return { ...req, headers: { ...req.headers, authorization: `Bearer ${token}` } };
}

function withoutKeys(h: Record<string, string>): Record<string, string> {
  const out = { ...h };
  for (const k of ['authorization', 'x-goog-api-key', 'x-api-key', 'anthropic-version']) delete out[k];
  return out;
}

/** A Gemini (or Anthropic) adapter on Vertex: same bodies and answers, Vertex's URLs and service-account auth. */
export function onVertex(inner: UpstreamAdapter, protocol: 'vertex' | 'vertex-anthropic'): UpstreamAdapter {
  const publisher = protocol === 'vertex' ? 'google' : 'anthropic';
  return {
    protocol,
    buildRequest(req, ctx) {
      const built = inner.buildRequest(req, { ...ctx, apiKey: null });
      const model = ctx.endpoint.upstreamModel;
      if (publisher === 'google') {
        return { url: vertexUrl(ctx.provider, ctx.apiKey, 'google', model, req.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'), headers: withoutKeys(built.headers), body: built.body };
      }
      const body = JSON.parse(built.body) as Record<string, unknown>;
      delete body.model;
      body.anthropic_version = VERTEX_ANTHROPIC_VERSION;
      const url = vertexUrl(ctx.provider, ctx.apiKey, 'anthropic', model, req.stream ? 'streamRawPredict' : 'rawPredict');
      return { url, headers: withoutKeys(built.headers), body: JSON.stringify(body) };
    },
    parseResponse: (text) => inner.parseResponse(text),
    parseError: (status, text, headers) => inner.parseError(status, text, headers),
    createStreamDecoder: () => inner.createStreamDecoder(),
    authorize: authorizeVertex,
  };
}
