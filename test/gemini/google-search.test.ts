/**
 * Gemini's built-in tools on the Gemini-native API (issue 15): `googleSearch` is the gateway's web search server tool
 * (docs/server-tools.md), run in its loop whatever the upstream protocol, plain and streamed; without a search engine
 * it is a 400 naming the field. `codeExecution` and `cachedContent` are 400s naming theirs.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isolatedEnv, upstreamBodies, type ClockedEnv } from '../chat/util.js';

const MODEL = 'test%2Fbeta'; // one endpoint: sim-c (OpenAI chat protocol)

async function generate(env: ClockedEnv, body: object, method = 'generateContent', query = ''): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(`${env.t.url}/api/v1beta/models/${MODEL}:${method}${query}`, { method: 'POST', headers: { 'x-goog-api-key': env.key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* a stream */
  }
  return { status: res.status, text, json };
}

const ASK = { contents: [{ role: 'user', parts: [{ text: 'What is new?' }] }] };

describe('googleSearch with a search engine', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach }, { env: (simUrl) => ({ GATEWAY_WEB_SEARCH_URL: `${simUrl}/sim-search` }) });
  let env: ClockedEnv;
  beforeEach(() => {
    env = isolated();
  });

  it('runs as the gateway’s web search: the model calls it, the gateway searches, the answer comes in Gemini’s shape', async () => {
    const r = await generate(env, { ...ASK, tools: [{ googleSearch: {} }] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.candidates[0].content.parts.map((p: any) => p.text).join('')).toMatch(/^Simulated reply using tool result:/);
    expect(r.json.candidates[0].finishReason).toBe('STOP');
    const [first, second] = upstreamBodies(env, 'sim-c');
    expect(first.tools).toEqual([expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'web_search' }) })]);
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool' });
    expect(env.sim.stats('sim-search').requests).toBe(1);
  });

  it('streamed (alt=sse), beside the client’s own function declarations', async () => {
    const tools = [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }, { google_search: {} }];
    const r = await generate(env, { ...ASK, tools, toolConfig: { functionCallingConfig: { mode: 'AUTO' } } }, 'streamGenerateContent', '?alt=sse');
    expect(r.status).toBe(200);
    const events = r.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    expect(events.length).toBeGreaterThan(0);
    const turns = upstreamBodies(env, 'sim-c');
    expect(turns[0].tools.map((t: any) => t.function.name).sort()).toEqual(['get_weather', 'web_search']);
  });
});

describe('Gemini built-in tools without a search engine', () => {
  const isolated = isolatedEnv({ beforeAll, afterAll, beforeEach });

  it('googleSearch is a 400 naming the field and the setting; codeExecution and cachedContent are 400s naming theirs', async () => {
    const env = isolated();
    const search = await generate(env, { ...ASK, tools: [{ googleSearch: {} }] });
    expect(search.status).toBe(400);
    expect(search.json.error.message).toMatch(/^tools\[0\]\.googleSearch: web search needs a search engine.*GATEWAY_WEB_SEARCH_URL/);
    const code = await generate(env, { ...ASK, tools: [{ codeExecution: {} }] });
    expect(code.status).toBe(400);
    expect(code.json.error.message).toMatch(/tools\[0\]\.codeExecution is not supported/);
    const cached = await generate(env, { ...ASK, cachedContent: 'cachedContents/abc' });
    expect(cached.status).toBe(400);
    expect(cached.json.error.message).toMatch(/cachedContent is not supported/);
    expect(upstreamBodies(env, 'sim-c')).toHaveLength(0);
  });
});
