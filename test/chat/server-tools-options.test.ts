/**
 * Web search options given on the tool (issue 15): OpenAI's `filters.allowed_domains` and `search_context_size` on
 * the Responses API, Anthropic's `allowed_domains` / `blocked_domains` on the Messages API, applied by the gateway's
 * web search whatever the upstream (here an OpenAI chat endpoint): results outside the lists never reach the model.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isolatedEnv, upstreamBodies, type ClockedEnv } from './util.js';

const MODEL = 'test/beta'; // one endpoint: sim-c

describe('web search options', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { env: (simUrl) => ({ GATEWAY_WEB_SEARCH_URL: `${simUrl}/sim-search` }) });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });

  async function post(path: string, body: object, headers: Record<string, string> = {}): Promise<number> {
    const res = await fetch(`${env.t.api}${path}`, { method: 'POST', headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    await res.text();
    return res.status;
  }
  /** The search results the model was given (the tool message of the second turn). */
  const given = () => JSON.parse(upstreamBodies(env, 'sim-c')[1].messages.at(-1).content).results as Array<{ url: string }>;

  it('Responses: search_context_size low → 3 results; filters.allowed_domains keeps only those domains', async () => {
    expect(await post('/responses', { model: MODEL, input: 'What is new?', tools: [{ type: 'web_search', search_context_size: 'low', filters: { allowed_domains: ['example.org'] } }] })).toBe(200);
    expect(given().map((r) => new URL(r.url).hostname)).toEqual(['example.org', 'example.org', 'example.org']);
    env.sim.resetStats();
    expect(await post('/responses', { model: MODEL, input: 'What is new?', tools: [{ type: 'web_search', filters: { allowed_domains: ['other.com'] } }] })).toBe(200);
    expect(given()).toEqual([]);
  });

  it('Messages: blocked_domains drops those results', async () => {
    const body = { model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'What is new?' }], tools: [{ type: 'web_search_20250305', name: 'web_search', blocked_domains: ['example.org'] }] };
    expect(await post('/messages', body, { 'anthropic-version': '2023-06-01' })).toBe(200);
    expect(given()).toEqual([]);
    expect(env.sim.stats('sim-search').requests).toBe(1);
  });
});
