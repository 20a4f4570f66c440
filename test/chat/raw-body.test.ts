/**
 * Issue 18: a large chat body to an OpenAI-protocol upstream goes with the client's `messages` bytes as received
 * (core/raw-json.ts) and every other field as the gateway sets it; what the upstream parses is the same as before.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { streamChat, type Json } from './util.js';

let env: ChatEnv;
beforeAll(async () => {
  env = await startChatEnv('sqlite');
});
afterAll(async () => env?.close());
beforeEach(() => {
  env.sim.resetKnobs();
  env.sim.resetStats();
});

const lastUpstream = (provider = 'sim-a'): Json => env.sim.stats(provider).lastBody;

/** A raw JSON text of ~40 KB whose messages hold escapes JSON.stringify would spell differently. */
function bigBody(extra: string): string {
  const filler = 'x'.repeat(20_000);
  return `{ "model" : "test/alpha", "messages" : [ {"role":"system","content":"caf\\u00e9 \\ud83d\\ude00 \\/ \\"q\\""}, {"role":"user","content":"${filler}"},
    {"role":"assistant","content":"ok"}, {"role":"user","content":[{"type":"text","text":"${filler} \\t end"}]} ] ${extra} }`;
}

async function post(text: string) {
  const res = await env.t.call('POST', '/chat/completions', { key: env.key, raw: text });
  return { status: res.status, json: res.body as Json };
}

describe('large same-protocol bodies', () => {
  it('reach the upstream with the same messages, the upstream model and no gateway field', async () => {
    const text = bigBody(', "temperature": 0.25, "metadata": {"messages": "not these"}, "models": ["test/alpha"], "transforms": []');
    const { status } = await post(text);
    expect(status).toBe(200);
    const up = lastUpstream();
    expect(up.messages).toEqual(JSON.parse(text).messages);
    expect(up.model).toBe('alpha-a');
    expect(up.temperature).toBe(0.25);
    for (const k of ['models', 'transforms', 'metadata']) expect(up).not.toHaveProperty(k);
  });

  it('streams with usage asked for, the messages unchanged', async () => {
    const body = JSON.parse(bigBody(', "stream_options": {"include_usage": false}'));
    const r = await streamChat(env, { ...body, stream: true });
    expect(r.status).toBe(200);
    const up = lastUpstream();
    expect(up.messages).toEqual(body.messages);
    expect(up.stream).toBe(true);
    expect(up.stream_options).toEqual({ include_usage: true });
  });

  it('still refuses what the JSON body rules refuse in a large body', async () => {
    const nul = await post(bigBody(', "user": "a\\u0000b"'));
    expect(nul.status).toBe(400);
    const surrogate = await post(bigBody('').replace('\\"q\\"', '\\ud800'));
    expect(surrogate.status).toBe(400);
  });
});

/** A ~40 KB conversation as raw JSON, with escapes JSON.stringify would spell differently (`\u00e9`, `\/`). */
const RAW_TURNS = `[ {"role":"user","content":"caf\\u00e9 \\/ ${'y'.repeat(20_000)}"}, {"role":"assistant","content":"ok"},
  {"role":"user","content":[{"type":"text","text":"${'z'.repeat(20_000)} \\t end"}]} ]`;

/** What the upstream got: its parsed body, and whether its byte length says the turns were sent as the client spelled them. */
function sentAsReceived(provider: string, key: 'messages' | 'input'): { up: Json; asReceived: boolean } {
  const up = env.sim.stats(provider).lastBody as Json;
  const length = Number((env.sim.stats(provider).lastHeaders as Record<string, string>)['content-length']);
  const reserialized = Buffer.byteLength(JSON.stringify(up));
  return { up, asReceived: length === reserialized - Buffer.byteLength(JSON.stringify(up[key])) + Buffer.byteLength(RAW_TURNS) };
}

describe('large same-protocol bodies of the Messages and Responses APIs', () => {
  it('a Messages body reaches an Anthropic upstream with its messages bytes as received', async () => {
    const text = `{"model":"test/claude","max_tokens":50,"fallbacks":[],"temperature":0.5,"messages":${RAW_TURNS}}`;
    const res = await env.t.call('POST', '/messages', { key: env.key, raw: text });
    expect(res.status).toBe(200);
    const { up, asReceived } = sentAsReceived('sim-anthropic', 'messages');
    expect(up.messages).toEqual(JSON.parse(RAW_TURNS));
    expect(up.model).toBe('claude-sim');
    expect(up.max_tokens).toBe(50);
    expect(up.temperature).toBe(0.5);
    expect(up).not.toHaveProperty('fallbacks');
    expect(asReceived).toBe(true);
  });

  it('a Responses body reaches a Responses upstream with its input bytes as received', async () => {
    const text = `{"model":"test/responses","models":["test/responses"],"input":${RAW_TURNS}}`;
    const res = await env.t.call('POST', '/responses', { key: env.key, raw: text });
    expect(res.status).toBe(200);
    const { up, asReceived } = sentAsReceived('sim-responses', 'input');
    expect(up.input).toEqual(JSON.parse(RAW_TURNS));
    expect(up.model).toBe('resp-sim');
    expect(up).not.toHaveProperty('models');
    expect(asReceived).toBe(true);
  });

  it('a Messages body still answers 400 naming the field for a bad content block', async () => {
    const text = `{"model":"test/claude","max_tokens":50,"messages":${RAW_TURNS.replace('"type":"text","text"', '"type":"text","txt"')}}`;
    const res = await env.t.call('POST', '/messages', { key: env.key, raw: text });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('messages[2].content[0].text');
  });
});

/** One request written by hand on a socket (to send what fetch does not: chunked bodies, a wrong Content-Length). */
function rawRequest(head: string, body: Buffer[], end = false): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(env.t.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${env.key}\r\nContent-Type: application/json\r\nConnection: close\r\n${head}\r\n`);
      for (const b of body) socket.write(b);
      // Connection: close — the gateway closes once it answered; `end` ends the client's side first.
      if (end) socket.end();
    });
    const got: Buffer[] = [];
    socket.on('data', (d) => got.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(got).toString();
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0), text: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
  });
}

describe('reading the body (http/plugins/body-reader.ts)', () => {
  const text = Buffer.from(bigBody(''));
  const pieces = [text.subarray(0, 7), text.subarray(7, 30_000), text.subarray(30_000)];

  it('a body sized by Content-Length and written in pieces arrives whole', async () => {
    const r = await rawRequest(`Content-Length: ${text.length}\r\n`, pieces);
    expect(r.status).toBe(200);
    expect(lastUpstream().messages).toEqual(JSON.parse(text.toString()).messages);
  });

  it('a chunked body (no Content-Length) arrives whole', async () => {
    const chunked = pieces.flatMap((p) => [Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')]);
    const r = await rawRequest('Transfer-Encoding: chunked\r\n', [...chunked, Buffer.from('0\r\n\r\n')]);
    expect(r.status).toBe(200);
    expect(lastUpstream().messages).toEqual(JSON.parse(text.toString()).messages);
  });

  it('a body shorter than its Content-Length is a 400; a Content-Length over the limit a 413, unread', async () => {
    const calls = env.sim.stats('sim-a').requests;
    const short = await rawRequest(`Content-Length: ${text.length + 10}\r\n`, pieces, true);
    // Node's HTTP parser sees the connection end before the body does (answered by http/app.ts's clientError handler).
    expect(short.status).toBe(400);
    const big = await rawRequest(`Content-Length: ${1 << 30}\r\n`, [text.subarray(0, 100)]);
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text).error.message).toMatch(/too large/);
    expect(env.sim.stats('sim-a').requests).toBe(calls);
  });
});
