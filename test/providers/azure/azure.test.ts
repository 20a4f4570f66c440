/**
 * Azure OpenAI (providers/azure/): Azure's URL shape, api-version, api-key or Entra bearer auth and error mapping,
 * composed with the OpenAI bodies through the registry.
 */
import { describe, expect, it } from 'vitest';
import type { EndpointDef, ProviderDef } from '../../../src/core/catalog-types.js';
import type { IrRequest } from '../../../src/core/ir.js';
import { azureError, azureUrl } from '../../../src/providers/azure/index.js';
import { PROTOCOLS, embeddingsWire } from '../../../src/providers/registry.js';

const provider = (cloud?: Record<string, string>, protocol: ProviderDef['protocol'] = 'azure-openai'): ProviderDef => ({
  slug: 'azure',
  name: 'Azure',
  protocol,
  baseUrl: 'https://contoso.openai.azure.com',
  dataPolicy: { training: false, retainsPrompts: false, zdr: true },
  ...(cloud ? { cloud } : {}),
});
const endpoint = { model: 'openai/gpt-4o', provider: 'azure', tag: 'azure', upstreamModel: 'gpt4o-prod', pricing: null, context_length: 128000, max_prompt_tokens: null, max_completion_tokens: 16384, quantization: 'unknown', supported_parameters: ['max_tokens', 'temperature'], is_moderated: false, supports_implicit_caching: false } as EndpointDef;
const ir = { model: 'openai/gpt-4o', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, max_tokens: 10 } as unknown as IrRequest;

describe('Azure OpenAI adapter', () => {
  it('chat completions go to the deployment path with the default GA api-version and the api-key header', () => {
    const r = PROTOCOLS['azure-openai'].chat.buildRequest(ir, { provider: provider(), endpoint, apiKey: 'azure-key-1' });
    expect(r.url.toString()).toBe('https://contoso.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
    expect(r.headers['api-key']).toBe('azure-key-1');
    expect(r.headers.authorization).toBeUndefined();
    expect(JSON.parse(r.body)).toMatchObject({ model: 'gpt4o-prod', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('Entra ID: the key is a bearer token; a configured api-version is used', () => {
    const r = PROTOCOLS['azure-openai'].chat.buildRequest(ir, { provider: provider({ auth: 'entra', api_version: '2025-01-01-preview' }), endpoint, apiKey: 'eyJ0eXAi.token' });
    expect(r.url.searchParams.get('api-version')).toBe('2025-01-01-preview');
    expect(r.headers.authorization).toBe('Bearer eyJ0eXAi.token');
    expect(r.headers['api-key']).toBeUndefined();
  });

  it('the Responses API is resource-wide, the deployment in the body; the v1 API has no api-version', () => {
    const r = PROTOCOLS['azure-openai-responses'].chat.buildRequest(ir, { provider: provider(undefined, 'azure-openai-responses'), endpoint, apiKey: 'k' });
    expect(r.url.toString()).toBe('https://contoso.openai.azure.com/openai/responses?api-version=2025-04-01-preview');
    expect(JSON.parse(r.body).model).toBe('gpt4o-prod');
    expect(azureUrl(provider({ api_version: 'v1' }), 'chat/completions', 'd').toString()).toBe('https://contoso.openai.azure.com/openai/v1/chat/completions');
    expect(azureUrl({ ...provider(), baseUrl: 'https://contoso.openai.azure.com/openai' }, 'embeddings', 'emb 1').toString()).toBe('https://contoso.openai.azure.com/openai/deployments/emb%201/embeddings?api-version=2024-10-21');
  });

  it('embeddings go to the deployment path', () => {
    const wire = embeddingsWire(provider());
    const { req } = wire.build({ model: 'x', input: 'hello' }, { ...endpoint, upstreamModel: 'emb-small' }, provider(), 'k2');
    expect(req.url.toString()).toBe('https://contoso.openai.azure.com/openai/deployments/emb-small/embeddings?api-version=2024-10-21');
    expect(req.headers['api-key']).toBe('k2');
    expect(JSON.parse(String(req.body))).toEqual({ model: 'emb-small', input: 'hello' });
  });

  it("maps Azure's errors: DeploymentNotFound, content_filter, 401, 429 with retry-after-ms", () => {
    const notFound = azureError(404, JSON.stringify({ error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } }), {});
    expect(notFound).toMatchObject({ status: 502, type: 'provider_unavailable', providerCode: 404 });
    expect(notFound.message).toContain('deployment');
    const filtered = azureError(400, JSON.stringify({ error: { code: 'content_filter', message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.", param: 'prompt', status: 400 } }), {});
    expect(filtered).toMatchObject({ status: 400, type: 'invalid_request' });
    expect(azureError(401, JSON.stringify({ error: { code: '401', message: 'Access denied due to invalid subscription key' } }), {})).toMatchObject({ status: 502, type: 'authentication' });
    expect(azureError(429, JSON.stringify({ error: { code: '429', message: 'Requests … exceeded token rate limit' } }), { 'retry-after-ms': '2500' })).toMatchObject({ status: 429, retryAfter: 3 });
    expect(azureError(400, JSON.stringify({ error: { code: 'context_length_exceeded', message: "This model's maximum context length is 128000 tokens." } }), {})).toMatchObject({ type: 'context_length_exceeded' });
  });
});
