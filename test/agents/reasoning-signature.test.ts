/**
 * Reasoning round trips for Claude Code (core/reasoning-signature.ts): thinking from an upstream that does not sign it
 * leaves the Messages API with the gateway's HMAC signature (JSON and stream), comes back verified (a forged one is a
 * 400) and reaches the upstream unsigned; an Anthropic upstream never sees the gateway's signatures; a configured
 * GATEWAY_REASONING_SECRET and the stored generated one are used as documented.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGatewaySignature, reasoningKey, signReasoning, verifyReasoning } from '../../src/core/reasoning-signature.js';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { parseSse } from '../chat/util.js';
import { openStore } from '../../src/store/sql-store.js';

const PARAMS = ['max_tokens', 'tools', 'tool_choice', 'reasoning', 'include_reasoning', 'temperature'];
const CATALOG = {
  models: [{ id: 'agents/thinker', name: 'Thinker', context_length: 100000 }],
  endpoints: [{ model: 'agents/thinker', provider: 'sim-c', upstream_model: 'thinker', pricing: { prompt: '0.000001', completion: '0.000002' }, supported_parameters: PARAMS }],
};

describe('core/reasoning-signature', () => {
  it('signs, verifies, and refuses another text or key', () => {
    const key = reasoningKey('x'.repeat(32));
    const sig = signReasoning(key, 'I think');
    expect(sig).toMatch(/^gwsig1\.[A-Za-z0-9_-]{43}$/);
    expect(isGatewaySignature(sig)).toBe(true);
    expect(isGatewaySignature('EqQBCkgIARABGAIiQL2…')).toBe(false);
    expect(verifyReasoning(key, 'I think', sig)).toBe(true);
    expect(verifyReasoning(key, 'I think!', sig)).toBe(false);
    expect(verifyReasoning(reasoningKey('y'.repeat(32)), 'I think', sig)).toBe(false);
    expect(verifyReasoning(key, 'I think', 'gwsig1.short')).toBe(false);
  });
});

describe('thinking from an OpenAI-protocol upstream through the Messages API', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', { catalog: CATALOG, env: { GATEWAY_REASONING_SECRET: 's'.repeat(40) } });
  });
  afterAll(async () => env?.close());

  const ask = (body: Record<string, unknown>) =>
    env.t.call('POST', '/messages', { key: env.key, body: { model: 'agents/thinker', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 }, ...body } });

  it('is signed by the gateway, verified when sent back, and reaches the upstream unsigned', async () => {
    const first = await ask({ messages: [{ role: 'user', content: 'How many r in strawberry?' }] });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const thinking = first.body.content.find((b: any) => b.type === 'thinking');
    expect(thinking.thinking.length).toBeGreaterThan(0);
    // The configured secret keys the signature.
    expect(thinking.signature).toBe(signReasoning(reasoningKey('s'.repeat(40)), thinking.thinking));

    const text = first.body.content.find((b: any) => b.type === 'text');
    const history = [{ role: 'user', content: 'How many r in strawberry?' }, { role: 'assistant', content: [thinking, text] }, { role: 'user', content: 'Sure?' }];
    const again = await ask({ messages: history });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const up = env.sim.requests.filter((r) => r.provider === 'sim-c').at(-1)!.body as any;
    const assistant = up.messages.find((m: any) => m.role === 'assistant');
    expect(assistant.reasoning).toBe(thinking.thinking);
    expect(JSON.stringify(up)).not.toContain('gwsig1.');

    const forged = await ask({ messages: [history[0], { role: 'assistant', content: [{ ...thinking, thinking: 'edited' }, text] }, history[2]] });
    expect(forged.status).toBe(400);
    expect(forged.body.error.message).toBe('messages[1].content[0].signature is not a valid signature of this thinking block');
  });

  it('streams a signature_delta for the thinking block before it closes', async () => {
    const res = await fetch(`${env.t.api}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': env.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'agents/thinker', max_tokens: 4000, stream: true, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [{ role: 'user', content: 'Think.' }] }),
    });
    const { chunks } = parseSse(await res.text());
    const start = chunks.find((c) => c.type === 'content_block_start' && c.content_block.type === 'thinking');
    const thought = chunks.filter((c) => c.type === 'content_block_delta' && c.index === start.index && c.delta.type === 'thinking_delta').map((c) => c.delta.thinking).join('');
    const sigAt = chunks.findIndex((c) => c.type === 'content_block_delta' && c.index === start.index && c.delta.type === 'signature_delta');
    const stopAt = chunks.findIndex((c) => c.type === 'content_block_stop' && c.index === start.index);
    expect(sigAt).toBeGreaterThan(-1);
    expect(sigAt).toBeLessThan(stopAt);
    expect(verifyReasoning(reasoningKey('s'.repeat(40)), thought, chunks[sigAt].delta.signature)).toBe(true);
  });

  it('an Anthropic upstream gets the history without the gateway-signed thinking', async () => {
    const thinking = { type: 'thinking', thinking: 'Earlier thoughts', signature: signReasoning(reasoningKey('s'.repeat(40)), 'Earlier thoughts') };
    const real = { type: 'thinking', thinking: 'Anthropic thoughts', signature: 'EqQBCkgIARABGAIiQL2realAnthropicSignature' };
    const res = await env.t.call('POST', '/messages', {
      key: env.key,
      body: { model: 'test/claude', max_tokens: 100, messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [thinking, real, { type: 'text', text: 'b' }] }, { role: 'user', content: 'c' }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const up = env.sim.requests.filter((r) => r.provider === 'sim-anthropic').at(-1)!.body as any;
    expect(up.messages[1].content).toEqual([real, { type: 'text', text: 'b' }]);
  });
});

describe('the generated secret', () => {
  it('is generated once and kept in the database (every instance and restart uses it)', async () => {
    const env = await startChatEnv('sqlite', { catalog: CATALOG });
    try {
      const first = await env.t.call('POST', '/messages', { key: env.key, body: { model: 'agents/thinker', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [{ role: 'user', content: 'x' }] } });
      const thinking = first.body.content.find((b: any) => b.type === 'thinking');
      expect(isGatewaySignature(thinking.signature)).toBe(true);
      // The stored secret (the first writer's; a candidate is ignored) keys the signature.
      const store = openStore(env.t.databaseUrl);
      try {
        const stored = await store.serverSecret('reasoning_signatures', 'ignored-candidate');
        expect(stored).not.toBe('ignored-candidate');
        expect(verifyReasoning(reasoningKey(stored), thinking.thinking, thinking.signature)).toBe(true);
      } finally {
        await store.close();
      }
    } finally {
      await env.close();
    }
  });
});
