/**
 * Provider simulator, Azure OpenAI: Azure's URL shape, api-version, api-key / Entra bearer and error bodies, through
 * the official `AzureOpenAI` client of the `openai` SDK and raw HTTP. Local only.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AzureOpenAI } from 'openai';
import { createSimulator, type Simulator } from '../../src/sim/server.js';

type AzErr = { error: { code: string; message: string } };
let sim: Simulator;
beforeAll(async () => {
  sim = await createSimulator();
});
afterAll(async () => sim.close());
beforeEach(() => {
  sim.resetKnobs();
  sim.resetStats();
});

const azure = (opts: Partial<ConstructorParameters<typeof AzureOpenAI>[0]> = {}) =>
  new AzureOpenAI({ endpoint: `${sim.url}/az`, apiKey: 'azure-key', apiVersion: '2024-10-21', deployment: 'gpt4o-prod', maxRetries: 0, ...opts });

describe('Azure OpenAI simulator', () => {
  it("answers the SDK's chat completions on the deployment path, with Azure's filter results", async () => {
    const c = await azure().chat.completions.create({ model: 'ignored', messages: [{ role: 'user', content: 'hello azure' }] });
    expect(c.choices[0].message.content).toMatch(/^Simulated reply to: hello azure/);
    expect((c as unknown as { prompt_filter_results: unknown[] }).prompt_filter_results).toHaveLength(1);
    const req = sim.requests.at(-1)!;
    expect(req.path).toBe('/openai/deployments/gpt4o-prod/chat/completions');
    expect(req.headers['api-key']).toBe('azure-key');
  });

  it('streams, starting with the empty-choices chunk of prompt filter results', async () => {
    const s = await azure().chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'stream please' }], stream: true, stream_options: { include_usage: true } });
    const chunks: Array<{ choices: unknown[]; usage?: unknown }> = [];
    for await (const c of s) chunks.push(c as never);
    expect(chunks[0].choices).toEqual([]);
    expect(chunks.some((c) => c.usage)).toBe(true);
  });

  it('embeddings and the Responses API; Entra tokens as bearer', async () => {
    const e = await azure({ deployment: 'emb-small' }).embeddings.create({ model: 'x', input: 'vector me' });
    expect(e.data[0].embedding.length).toBeGreaterThan(0);
    expect(sim.requests.at(-1)!.path).toBe('/openai/deployments/emb-small/embeddings');
    const entra = azure({ apiKey: undefined, azureADTokenProvider: async () => 'entra-token', apiVersion: '2025-04-01-preview' });
    const r = await entra.responses.create({ model: 'gpt4o-prod', input: 'hello responses' });
    expect(r.output_text).toMatch(/^Simulated reply/);
    expect(sim.requests.at(-1)!.headers.authorization).toBe('Bearer entra-token');
  });

  it("Azure's errors: no credential 401, no api-version 404, unknown deployment DeploymentNotFound, 429 with retry-after-ms", async () => {
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${sim.url}/az${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }) });
    const noKey = await post('/openai/deployments/d/chat/completions?api-version=2024-10-21', {});
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as AzErr).error.message).toContain('Access denied due to invalid subscription key');
    const noVersion = await post('/openai/deployments/d/chat/completions', { 'api-key': 'k' });
    expect(noVersion.status).toBe(404);
    expect(await noVersion.json()).toEqual({ error: { code: '404', message: 'Resource not found' } });
    sim.setKnobs('az', { models: ['gpt4o-prod'] });
    const missing = await post('/openai/deployments/other/chat/completions?api-version=2024-10-21', { 'api-key': 'k' });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as AzErr).error.code).toBe('DeploymentNotFound');
    sim.setKnobs('az', { models: null, errorStatus: 429, retryAfter: 2 });
    const limited = await post('/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21', { 'api-key': 'k' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after-ms')).toBe('2000');
    expect(((await limited.json()) as AzErr).error.message).toContain('Azure OpenAI API version 2024-10-21');
  });
});
