/**
 * Reasoning signatures keep their origin (issue 15): an upstream gets back only signatures it can verify.
 * - Messages API, Google upstream: Gemini's thoughtSignature never reaches the Claude client bare; its thinking leaves
 *   re-signed with the gateway's HMAC, the Google signature carried inside (covered by the MAC): sent back, it goes
 *   to a Google upstream restored and is left out for an Anthropic one.
 * - Gemini API: an Anthropic signature is handed out tagged (`gateway-anthropic:`) and goes back to Anthropic raw; a
 *   Google thoughtSignature sent on to an Anthropic upstream is left out, never sent as an Anthropic signature.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGatewaySignature } from '../../src/core/reasoning-signature.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

let env: ChatEnv;
beforeAll(async () => {
  env = await startChatEnv('sqlite', { env: { GATEWAY_REASONING_SECRET: 's'.repeat(40) } });
});
afterAll(async () => env?.close());

const WEATHER = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

async function messages(body: object): Promise<any> {
  const res = await fetch(`${env.t.api}/messages`, { method: 'POST', headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-sim-tool-call': 'true' }, body: JSON.stringify(body) });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

async function gemini(model: string, body: object): Promise<any> {
  const res = await fetch(`${env.t.url}/api/v1beta/models/${encodeURIComponent(model)}:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': env.key, 'content-type': 'application/json', 'x-sim-tool-call': 'true' }, body: JSON.stringify(body) });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

const lastSent = (provider: string) => env.sim.stats(provider).lastBody as any;
const thinkingBlocks = (body: any) => (body.messages as any[]).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b.type === 'thinking');

describe('signature origins', () => {
  it('Messages API from a Google upstream: no Google signature leaves; the history goes to Anthropic without one', async () => {
    const ask = { model: 'test/gemini', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [WEATHER], messages: [{ role: 'user', content: 'Weather in Paris?' }] };
    const first = await messages(ask);
    // The simulator's Gemini signs its call (a thoughtSignature on the functionCall part): no block carries it.
    const thinking = first.content.filter((b: any) => b.type === 'thinking');
    expect(thinking.length).toBeGreaterThan(0);
    for (const b of thinking) expect(isGatewaySignature(b.signature), JSON.stringify(b)).toBe(true);
    // The Gemini signature rides inside the gateway's (covered by its MAC), for Google upstreams only.
    const carrying = thinking.find((b: any) => /^gwsig1\.[A-Za-z0-9_-]+\.google\./.test(b.signature));
    expect(carrying, JSON.stringify(thinking)).toBeDefined();
    const googleSig = carrying.signature.split('.').slice(3).join('.');
    const call = first.content.find((b: any) => b.type === 'tool_use');
    expect(call).toBeDefined();
    const history = [...ask.messages, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny' }] }];

    // Back to Google: its signature is restored on the call.
    await messages({ ...ask, messages: history });
    expect(JSON.stringify(lastSent('sim-google'))).toContain(googleSig);
    // A tampered carried signature is refused.
    const forged = first.content.map((b: any) => (b === carrying ? { ...b, signature: carrying.signature.replace('.google.', '.anthropic.') } : b));
    const refused = await fetch(`${env.t.api}/messages`, { method: 'POST', headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ ...ask, model: 'test/claude', messages: [...ask.messages, { role: 'assistant', content: forged }, history[2]] }) });
    expect(refused.status).toBe(400);

    // Claude Code sends the turn back, routed to an Anthropic upstream.
    await messages({ ...ask, model: 'test/claude', messages: history });
    const sent = lastSent('sim-anthropic');
    expect(thinkingBlocks(sent)).toEqual([]); // gateway-signed thinking is left out for Anthropic, and no Google signature went
    expect(JSON.stringify(sent)).not.toContain(googleSig);
  });

  it('Gemini API: an Anthropic signature comes back raw to Anthropic; a Google one is never sent to Anthropic', async () => {
    const ask = { contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }], tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }], generationConfig: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } } };

    // From Anthropic: the thought part's signature is tagged.
    const fromClaude = await gemini('test/claude', ask);
    const parts = fromClaude.candidates[0].content.parts as any[];
    const signed = parts.find((p) => p.thoughtSignature);
    expect(signed.thoughtSignature).toMatch(/^gateway-anthropic:/);
    const anthropicSig = signed.thoughtSignature.slice('gateway-anthropic:'.length);
    const call = parts.find((p) => p.functionCall);
    const back = (model: string, modelParts: any[]) => gemini(model, { ...ask, contents: [...ask.contents, { role: 'model', parts: modelParts }, { role: 'user', parts: [{ functionResponse: { id: call?.functionCall.id, name: 'get_weather', response: { output: 'Sunny' } } }] }] });
    await back('test/claude', parts);
    expect(thinkingBlocks(lastSent('sim-anthropic')).map((b: any) => b.signature)).toEqual([anthropicSig]);

    // From Google: the thoughtSignature passes untagged, and goes back to Google as it was…
    const fromGemini = await gemini('test/gemini', ask);
    const gparts = fromGemini.candidates[0].content.parts as any[];
    const gsig = gparts.find((p) => p.thoughtSignature)?.thoughtSignature as string;
    expect(gsig).toBeDefined();
    expect(gsig.startsWith('gateway-')).toBe(false);
    const gcall = gparts.find((p) => p.functionCall);
    const gback = (model: string) => gemini(model, { ...ask, contents: [...ask.contents, { role: 'model', parts: gparts }, { role: 'user', parts: [{ functionResponse: { id: gcall?.functionCall.id, name: 'get_weather', response: { output: 'Sunny' } } }] }] });
    await gback('test/gemini');
    expect(JSON.stringify(lastSent('sim-google'))).toContain(gsig);
    // …but never to Anthropic.
    await gback('test/claude');
    expect(JSON.stringify(lastSent('sim-anthropic'))).not.toContain(gsig);
    // Nor does an Anthropic signature go to Google.
    await back('test/gemini', parts);
    expect(JSON.stringify(lastSent('sim-google'))).not.toContain(anthropicSig);
  });
});
