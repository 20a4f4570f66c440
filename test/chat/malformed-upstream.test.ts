/**
 * A malformed upstream answer through the gateway, per protocol: a raw upstream (node:http) answers with fields of the
 * wrong type, plain or streamed, and the client of POST /chat/completions gets a 502 in the error envelope whose
 * message names the field — the schemas at the protocol edge (src/providers/<protocol>/schemas.ts) at work.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

type Proto = 'openai' | 'anthropic' | 'google' | 'openai-responses';
const VERSION: Record<Proto, string> = { openai: 'v1', anthropic: 'v1', google: 'v1beta', 'openai-responses': 'v1' };

const sse = (events: object[], named: boolean) => events.map((e) => `${named ? `event: ${(e as { type: string }).type}\n` : ''}data: ${JSON.stringify(e)}\n\n`).join('');

/** Per protocol: a plain answer and a stream, each with one field of the wrong type, and the message expected. */
const CASES: Record<Proto, { json: object; stream: string; jsonError: string; streamError: string }> = {
  openai: {
    json: { id: 'c1', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 'ten', completion_tokens: 1 } },
    stream: sse([{ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', tool_calls: 'get_weather' }, finish_reason: null }] }], false),
    jsonError: 'Provider returned an invalid response: usage.prompt_tokens must be a number or null (got "ten")',
    streamError: 'Provider returned an invalid stream event: choices[0].delta.tool_calls must be an array or null (got "get_weather")',
  },
  anthropic: {
    json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'text', text: 42 }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } },
    stream: sse(
      [
        { type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 1, output_tokens: 0 } } },
        { type: 'content_block_start', index: 'first', content_block: { type: 'text', text: '' } },
      ],
      true,
    ),
    jsonError: 'Provider returned an invalid response: content[0].text must be a string (got 42)',
    streamError: 'Provider returned an invalid stream event: content_block_start.index must be an integer (got "first")',
  },
  google: {
    json: { candidates: [{ content: { role: 'model', parts: [{ functionCall: { args: {} } }] }, finishReason: 'STOP' }], modelVersion: 'gemini' },
    stream: sse([{ candidates: [{ content: { role: 'model', parts: 'Hello' } }] }], false),
    jsonError: 'Provider returned an invalid response: candidates[0].content.parts[0].functionCall.name is missing',
    streamError: 'Provider returned an invalid stream event: candidates[0].content.parts must be an array or null (got "Hello")',
  },
  'openai-responses': {
    json: { id: 'resp_1', object: 'response', model: 'm', status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: ['Hi'] }] }] },
    stream: sse(
      [
        { type: 'response.created', response: { id: 'resp_1', model: 'm' } },
        { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: { text: 'Hi' } },
      ],
      true,
    ),
    jsonError: 'Provider returned an invalid response: output[0].content[0].text must be a string or null (got an array)',
    streamError: 'Provider returned an invalid stream event: response.output_text.delta.delta must be a string (got an object)',
  },
};
const PROTOS = Object.keys(CASES) as Proto[];
const MODES = ['plain', 'stream'] as const;

let server: Server;
let env: ChatEnv;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const proto = (req.url ?? '').split('/')[1] as Proto;
      const c = CASES[proto];
      const streamed = proto === 'google' ? (req.url ?? '').includes(':streamGenerateContent') : JSON.parse(body || '{}').stream === true;
      if (!c) return void res.writeHead(404).end();
      if (streamed) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(c.stream);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(c.json));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const zdr = { training: false, retains_prompts: false, zdr: true };
  env = await startChatEnv('sqlite', {
    catalog: {
      providers: PROTOS.map((p) => ({ slug: `bad-${p}`, name: `Bad ${p}`, protocol: p, base_url: `${url}/${p}/${VERSION[p]}`, no_auth: true, data_policy: zdr })),
      // One model per call: an endpoint that failed is unhealthy for a while (the next call would get a 503).
      models: PROTOS.flatMap((p) => MODES.map((m) => ({ id: `bad/${p}/${m}`, name: `Bad ${p} ${m}`, context_length: 32000 }))),
      endpoints: PROTOS.flatMap((p) =>
        MODES.map((m) => ({ model: `bad/${p}/${m}`, provider: `bad-${p}`, upstream_model: 'm', pricing: { prompt: '0.000001', completion: '0.000002' }, supported_parameters: ['temperature', 'max_tokens'] })),
      ),
    },
  });
});

afterAll(async () => {
  await env?.close();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

async function chat(model: string, stream: boolean): Promise<{ status: number; body: { error?: { code: number; message: string } } }> {
  const res = await fetch(`${env.t.api}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }], stream }),
  });
  return { status: res.status, body: (await res.json()) as { error?: { code: number; message: string } } };
}

describe('a malformed upstream answer is a 502 naming what was wrong', () => {
  for (const p of PROTOS) {
    it(`${p}: plain answer`, async () => {
      const r = await chat(`bad/${p}/plain`, false);
      expect(r.status).toBe(502);
      expect(r.body.error?.code).toBe(502);
      expect(r.body.error?.message).toContain(CASES[p].jsonError);
    });

    it(`${p}: stream, before any content`, async () => {
      const r = await chat(`bad/${p}/stream`, true);
      expect(r.status).toBe(502);
      expect(r.body.error?.message).toContain(CASES[p].streamError);
    });
  }
});
