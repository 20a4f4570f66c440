/**
 * Content guardrails on STREAMED replies, for every inbound API (chat, responses, messages, gemini): the simulator
 * streams a fixed reply in chunks of a few characters, so every marker (an email, an SSN) is split across chunks; the
 * client must receive it redacted, with the actions in gateway_metadata.pipeline, and a `block` filter must end the
 * stream with the API's error event (naming the guardrail) before the blocked text is sent. Also the recorded
 * generation of a blocked stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/core/keys.js';
import { newKey, startPolicyEnv, type PolicyEnv } from './util.js';

type Api = 'chat' | 'responses' | 'messages' | 'gemini';
const APIS: Api[] = ['chat', 'responses', 'messages', 'gemini'];
const REPLY = 'Sure: write to jane.doe@example.com today, the number is 123-45-6789, thanks.';

function events(text: string): any[] {
  const out: any[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    out.push(JSON.parse(line.slice(6)));
  }
  return out;
}

/** The reply text the client assembles from the stream's events, per API. */
function assembled(api: Api, evs: any[]): string {
  const piece = (e: any): string => {
    if (api === 'chat') return e.choices?.[0]?.delta?.content ?? '';
    if (api === 'responses') return e.type === 'response.output_text.delta' ? e.delta : '';
    if (api === 'messages') return e.type === 'content_block_delta' && e.delta?.type === 'text_delta' ? e.delta.text : '';
    return (e.candidates?.[0]?.content?.parts ?? []).map((p: any) => p.text ?? '').join('');
  };
  return evs.map(piece).join('');
}

describe('Content guardrails on streamed replies (sqlite)', () => {
  let env: PolicyEnv;
  let n = 0;
  beforeAll(async () => {
    env = await startPolicyEnv('sqlite');
  });
  afterAll(async () => env?.close());

  const keyWith = async (body: Record<string, unknown>) => {
    const g = await env.t.call('POST', '/guardrails', { body: { name: `stream-${++n}`, ...body } });
    expect(g.status).toBe(201);
    const key = await newKey(env.t);
    expect((await env.t.call('POST', `/guardrails/${g.body.data.id}/assignments/keys`, { body: { key_hashes: [hashSecret(key)] } })).status).toBe(200);
    return { key, guardrail: g.body.data as { id: string; name: string } };
  };

  const stream = async (api: Api, key: string) => {
    const user = 'say it';
    const [path, body] =
      api === 'chat'
        ? ['/v1/chat/completions', { model: 'test/beta', stream: true, messages: [{ role: 'user', content: user }] }]
        : api === 'responses'
          ? ['/v1/responses', { model: 'test/beta', stream: true, input: user }]
          : api === 'messages'
            ? ['/v1/messages', { model: 'test/beta', stream: true, max_tokens: 200, messages: [{ role: 'user', content: user }] }]
            : ['/v1beta/models/test/beta:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: user }] }] }];
    const res = await fetch(`${env.t.url}/api${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-gateway-metadata': 'enabled' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, evs: events(text) };
  };

  beforeAll(() => env.sim.setKnobs('sim-c', { content: REPLY, chunkChars: 3 }));

  it.each(APIS)('%s: markers split across chunks are redacted; the pipeline reports it', async (api) => {
    const { key, guardrail } = await keyWith({ content_filter_builtins: [{ slug: 'email', action: 'redact' }, { slug: 'ssn', action: 'redact' }] });
    const r = await stream(api, key);
    expect(r.status, r.text).toBe(200);
    expect(assembled(api, r.evs)).toBe('Sure: write to [EMAIL] today, the number is [SSN], thanks.');
    expect(r.text).not.toContain('6789');
    if (api === 'chat') {
      const pipeline = r.evs.find((e) => e.gateway_metadata)?.gateway_metadata.pipeline;
      expect(pipeline).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: 'guardrail', name: 'content_filter:email', guardrail_id: guardrail.id, data: expect.objectContaining({ action: 'redact', matches: 1, stage: 'output' }) }),
          expect.objectContaining({ name: 'content_filter:ssn', data: expect.objectContaining({ matches: 1, stage: 'output' }) }),
        ]),
      );
    }
  });

  it.each(APIS)('%s: a block ends the stream with the API error event, before the blocked text', async (api) => {
    const { key, guardrail } = await keyWith({ content_filter_builtins: [{ slug: 'ssn', action: 'block' }] });
    const r = await stream(api, key);
    expect(r.status, r.text).toBe(200);
    const got = assembled(api, r.evs);
    expect(REPLY.startsWith(got), got).toBe(true);
    expect(got).not.toContain('123-45');
    expect(r.text).toContain(`Blocked by guardrail \\"${guardrail.name}\\"`);
    if (api === 'chat') {
      const last = r.evs[r.evs.length - 1];
      expect(last.error.code).toBe(403);
      expect(last.choices[0].finish_reason).toBe('error');
      expect(last.gateway_metadata.pipeline[0]).toMatchObject({ name: 'content_filter:ssn', data: { action: 'block', stage: 'output' } });
      expect(r.text.endsWith('data: [DONE]\n\n')).toBe(true);
    }
    if (api === 'messages') expect(r.evs.some((e) => e.type === 'error')).toBe(true);
    if (api === 'responses') expect(r.evs.some((e) => e.type === 'response.failed')).toBe(true);
    if (api === 'gemini') expect(r.evs[r.evs.length - 1].error.code).toBe(403);
  });

  it('the generation of a blocked stream is recorded with the block and the pipeline', async () => {
    const { key } = await keyWith({ content_filter_builtins: [{ slug: 'ssn', action: 'block' }] });
    const r = await stream('chat', key);
    const id = r.evs[0].id as string;
    let g: any = null;
    for (let i = 0; i < 100 && !g; i++) {
      const res = await env.t.call('GET', `/generation?id=${id}`, { key });
      if (res.status === 200) g = res.body.data;
      else await new Promise((ok) => setTimeout(ok, 50));
    }
    expect(g).toMatchObject({ finish_reason: 'content_filter', streamed: true, status: 403 });
    expect(g.pipeline).toEqual([expect.objectContaining({ type: 'guardrail', name: 'content_filter:ssn', data: expect.objectContaining({ action: 'block', stage: 'output' }) })]);
  });

  it('a blocked stream is billed for the output produced (counted, as a cut stream) and settled against the key', async () => {
    const { key } = await keyWith({ content_filter_builtins: [{ slug: 'ssn', action: 'block' }] });
    const hash = hashSecret(key);
    const r = await stream('chat', key);
    expect(r.text).toContain('Blocked by guardrail');
    const id = r.evs[0].id as string;
    let g: any = null;
    for (let i = 0; i < 100 && !g; i++) {
      const res = await env.t.call('GET', `/generation?id=${id}`, { key });
      if (res.status === 200) g = res.body.data;
      else await new Promise((ok) => setTimeout(ok, 50));
    }
    // The simulator reports usage only at the end, which the block never reached: the output up to the SSN is counted
    // (about 60 characters, ~15 tokens; never the whole 80-character reply), the prompt estimated.
    expect(g).toMatchObject({ finish_reason: 'content_filter', status: 403 });
    expect(g.tokens_completion).toBeGreaterThan(5);
    expect(g.tokens_completion).toBeLessThan(30);
    expect(g.total_cost).toBeGreaterThan(0);
    expect(g.error?.message ?? '').toMatch(/usage estimated/);
    // Settled against the key's limit: its usage is the generation's cost.
    let usage = 0;
    for (let i = 0; i < 50 && usage === 0; i++) {
      usage = (await env.t.call('GET', `/keys/${hash}`)).body.data.usage;
      if (usage === 0) await new Promise((ok) => setTimeout(ok, 50));
    }
    expect(usage).toBeCloseTo(g.total_cost, 12);
  });

  it('a stream that is only redacted is billed from the upstream usage, not counted', async () => {
    const { key } = await keyWith({ content_filter_builtins: [{ slug: 'email', action: 'redact' }] });
    const r = await stream('chat', key);
    const id = r.evs[0].id as string;
    let g: any = null;
    for (let i = 0; i < 100 && !g; i++) {
      const res = await env.t.call('GET', `/generation?id=${id}`, { key });
      if (res.status === 200) g = res.body.data;
      else await new Promise((ok) => setTimeout(ok, 50));
    }
    expect(g).toMatchObject({ status: 200, error: null });
    expect(g.total_cost).toBeGreaterThan(0);
  });

  it('the actions on a redacted stream are kept on its generation', async () => {
    const { key } = await keyWith({ content_filter_builtins: [{ slug: 'email', action: 'redact' }] });
    const r = await stream('chat', key);
    const id = r.evs[0].id as string;
    let g: any = null;
    for (let i = 0; i < 100 && !g; i++) {
      const res = await env.t.call('GET', `/generation?id=${id}`, { key });
      if (res.status === 200) g = res.body.data;
      else await new Promise((ok) => setTimeout(ok, 50));
    }
    expect(g.pipeline).toEqual([expect.objectContaining({ name: 'content_filter:email', data: expect.objectContaining({ action: 'redact', matches: 1, stage: 'output' }) })]);
  });

  it('gemini, not streamed: inputs and the reply are screened too', async () => {
    const { key } = await keyWith({ content_filter_builtins: [{ slug: 'email', action: 'redact' }] });
    const res = await fetch(`${env.t.url}/api/v1beta/models/test/beta:generateContent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'I am bob@example.org' }] }] }),
    });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(body.candidates[0].content.parts.map((p: any) => p.text).join('')).toBe('Sure: write to [EMAIL] today, the number is 123-45-6789, thanks.');
    expect(JSON.stringify((env.sim.stats('sim-c').lastBody as any).messages)).toContain('I am [EMAIL]');
  });

  it('without content filters the stream is relayed untouched', async () => {
    const key = await newKey(env.t);
    const r = await stream('chat', key);
    expect(assembled('chat', r.evs)).toBe(REPLY);
  });
});
