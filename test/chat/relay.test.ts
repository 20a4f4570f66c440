/**
 * The chat → OpenAI-protocol stream relay, unit by unit: ordinary chunks are relayed with only id, created and model
 * replaced and the provider added (without re-serializing them when they start with the usual prefix); every chunk
 * that must change otherwise — usage, finish reason, reasoning_content, a provider field of its own, another key
 * order or spacing — is re-serialized. Either way the client sees the same JSON.
 */
import { describe, expect, it } from 'vitest';
import { codecFor } from '../../src/services/codecs.js';
import type { EndpointDef } from '../../src/core/catalog-types.js';
import type { AnswerMeta } from '../../src/providers/types.js';

const endpoint = { tag: 'sim', provider: 'sim', upstreamModel: 'up-model', supported_parameters: [], pricing: null } as unknown as EndpointDef;
const meta: AnswerMeta = { id: 'gen-1-abc', model: 'test/alpha', provider: 'Sim "A"', created: 1700000000, cost: null, cost_details: { upstream_inference_prompt_cost: null, upstream_inference_completions_cost: null, upstream_inference_cost: null } };

function relay(events: string[]): Array<Record<string, unknown>> {
  const s = codecFor('chat', { model: 'test/alpha', messages: [] }, null, endpoint, 'openai').openStream(meta);
  let out = s.push(events.map((e) => `data: ${e}\n\n`).join('') + 'data: [DONE]\n\n');
  s.end();
  out += s.finishOut(meta);
  return out
    .split('\n\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

const chunk = (rest: string, head = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1699999999,"model":"up-model",') => head + rest;
const ours = { id: 'gen-1-abc', object: 'chat.completion.chunk', created: 1700000000, model: 'test/alpha', provider: 'Sim "A"' };

describe('chat stream relay (OpenAI protocol upstream)', () => {
  it('ordinary chunks keep every upstream field, with our id, created, model and provider', () => {
    const [role, text] = relay([
      chunk('"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}'),
      chunk('"system_fingerprint":"fp_1","x_new_field":{"a":[1,2]},"choices":[{"index":0,"delta":{"content":"Hi \\"there\\" \\u00e9"},"logprobs":null,"finish_reason":null}]}'),
    ]);
    expect(role).toEqual({ ...ours, system_fingerprint: 'fp_1', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    expect(text).toEqual({ ...ours, system_fingerprint: 'fp_1', x_new_field: { a: [1, 2] }, choices: [{ index: 0, delta: { content: 'Hi "there" é' }, logprobs: null, finish_reason: null }] });
  });

  it('a finish reason is normalized, usage inside a content chunk moves to the final chunk, reasoning_content is mirrored', () => {
    const out = relay([
      chunk('"choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}'),
      chunk('"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}'),
      chunk('"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'),
    ]);
    expect(out[0]).toMatchObject({ ...ours, choices: [{ delta: { reasoning_content: 'think', reasoning: 'think' } }] });
    expect(out[1]).toEqual({ ...ours, choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: null }] });
    expect(out[2]).toEqual({ ...ours, choices: [{ index: 0, delta: {}, finish_reason: 'stop', native_finish_reason: 'stop' }] });
    expect(out[3]).toMatchObject({ ...ours, choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
  });

  it('an upstream provider field, another key order or spacing: the same JSON through re-serialization', () => {
    const out = relay([
      chunk('"provider":"Upstream","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}'),
      '{"object":"chat.completion.chunk","id":"chatcmpl-1","created":1699999999,"model":"up-model","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":null}]}',
      '{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1699999999, "model": "up-model", "choices": [{"index": 0, "delta": {"content": "c"}, "finish_reason": null}]}',
    ]);
    for (const [i, text] of ['a', 'b', 'c'].entries()) expect(out[i]).toEqual({ ...ours, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
  });
});
