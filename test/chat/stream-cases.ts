/**
 * Generated upstream streams run through the stream fast paths — the same-protocol chat relay and the translated
 * byte sessions — at many read sizes, summarized (a hash of the client's bytes, the tokens counted, the finish, the
 * failure). stream-recorded.test.ts compares the summaries with those recorded from the code before the relay and the
 * translated sessions shared their read cutting and event memo (commit 0593489):
 *   `npx tsx test/chat/stream-cases.ts > test/chat/fixtures/stream-recorded.json` in a checkout of that commit
 * (with this file copied in) writes them.
 */
import { createHash } from 'node:crypto';
import type { AnswerMeta, StreamDecoder, StreamEncoder } from '../../src/core/adapters.js';
import type { EndpointDef } from '../../src/core/catalog-types.js';
import { anthropicAdapter } from '../../src/providers/anthropic/index.js';
import { openaiResponsesAdapter } from '../../src/providers/openai-responses/index.js';
import { ChatStreamEncoder } from '../../src/providers/openai/ir-inbound.js';
import { chatAdapter } from '../../src/providers/registry.js';
import { MessagesStreamEncoder } from '../../src/inbound/messages-stream.js';
import { GeminiStreamEncoder } from '../../src/inbound/gemini-output.js';
import { codecFor } from '../../src/services/codecs.js';
import { IrByteStreamSession } from '../../src/services/codec-ir-bytes.js';
import type { StreamSession } from '../../src/services/codec-types.js';

const meta: AnswerMeta = { id: 'gen-1-abc', model: 'test/m é', provider: 'Sim "A"', created: 1700000000, cost: 0.25, cost_details: { upstream_inference_prompt_cost: null, upstream_inference_completions_cost: null, upstream_inference_cost: null } };
const endpoint = { tag: 'sim', provider: 'sim', upstreamModel: 'up-model', supported_parameters: [], pricing: null } as unknown as EndpointDef;

/** Pieces of text: plain words, JSON escapes, 2-, 3- and 4-byte UTF-8, `\u` escapes (a surrogate pair too). */
const PIECES = [' the', ' quick', ' é', ' 中文', ' 😀', ' a"b', ' back\\slash', ' line\nbreak', ' tab\t', ' \u0001', ' end.'];
const piece = (i: number) => {
  const p = PIECES[i % PIECES.length];
  return i % 13 === 5 ? '" \\u00e9\\ud83d\\ude00 \\/"' : JSON.stringify(p);
};

function chatStream(n: number): string {
  const head = (id = 'chatcmpl-1', fp = 'fp_1') => `{"id":"${id}","object":"chat.completion.chunk","created":1699999999,"model":"up-model","service_tier":"default","system_fingerprint":"${fp}","choices":[`;
  const chunk = (delta: string, finish = 'null', h = head()) => `data: ${h}{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}],"usage":null}\n\n`;
  let s = chunk('{"role":"assistant","content":"","refusal":null}');
  for (let i = 0; i < n; i++) {
    s += chunk(`{"content":${piece(i)}}`, 'null', i === Math.floor(n / 2) ? head('chatcmpl-1', 'fp_2') : head());
    if (i % 17 === 3) s += '\n'; // a `\n\n\n` run
    if (i % 29 === 7) s += ': keep-alive\n\n';
  }
  s += chunk('{"reasoning_content":"hm"}');
  s += chunk('{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}');
  for (let i = 0; i < n / 4; i++) s += chunk(`{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify(`{"k${i}":"é\\"`)}}}]}`);
  s += chunk('{}', '"tool_calls"');
  s += 'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1699999999,"model":"up-model","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":30,"total_tokens":39}}\n\n';
  return `${s}data: [DONE]\n\n`;
}

function anthropicStream(n: number): string {
  const ev = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`;
  let s = ev('message_start', '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":1}}}');
  s += ev('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}') + ev('ping', '{"type":"ping"}');
  for (let i = 0; i < n; i++) {
    s += ev('content_block_delta', `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${piece(i)}}}`);
    if (i % 19 === 4) s += '\n';
  }
  s += ev('content_block_stop', '{"type":"content_block_stop","index":0}');
  s += ev('content_block_start', '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"tu_1","name":"f","input":{}}}');
  for (let i = 0; i < n / 4; i++) s += ev('content_block_delta', `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(`{"k${i}":"ü`)}}}`);
  s += ev('content_block_stop', '{"type":"content_block_stop","index":1}');
  s += ev('message_delta', '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":77}}');
  return s + ev('message_stop', '{"type":"message_stop"}');
}

function responsesStream(n: number): string {
  let seq = 0;
  const ev = (type: string, fields: string) => `event: ${type}\ndata: {"type":"${type}","sequence_number":${seq++}${fields}}\n\n`;
  const resp = (status: string, output: string, usage: string) => `,"response":{"id":"resp_1","object":"response","created_at":1700000000,"status":"${status}","error":null,"model":"m","output":${output},"usage":${usage}}`;
  const base = ',"item_id":"msg_1","output_index":0,"content_index":0';
  let s = ev('response.created', resp('in_progress', '[]', 'null'));
  s += ev('response.output_item.added', ',"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}');
  s += ev('response.content_part.added', `${base},"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`);
  let text = '';
  for (let i = 0; i < n; i++) {
    const obf = i % 3 === 0 ? '' : `,"obfuscation":"${'xYz'.slice(0, 1 + (i % 3))}${i}"`;
    if (i % 11 === 6) {
      // sequence_number last, as OpenAI's documentation prints it
      s += `event: response.output_text.delta\ndata: {"type":"response.output_text.delta"${base},"delta":${piece(i)},"logprobs":[]${obf},"sequence_number":${seq++}}\n\n`;
    } else s += ev('response.output_text.delta', `${base},"delta":${piece(i)},"logprobs":[]${obf}`);
    if (i % 23 === 2) s += '\n';
    text += JSON.parse(piece(i)) as string;
  }
  const t = JSON.stringify(text);
  s += ev('response.output_text.done', `${base},"text":${t},"logprobs":[]`);
  const item = `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":${t}}]}`;
  s += ev('response.output_item.done', `,"output_index":0,"item":${item}`);
  s += ev('response.output_item.added', ',"output_index":1,"item":{"id":"fc_1","type":"function_call","status":"in_progress","call_id":"call_1","name":"f","arguments":""}');
  let args = '';
  for (let i = 0; i < n / 4; i++) {
    const a = `{"k${i}":"ß`;
    args += a;
    s += ev('response.function_call_arguments.delta', `,"item_id":"fc_1","output_index":1,"delta":${JSON.stringify(a)},"obfuscation":"o${i}"`);
  }
  const fc = `{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"f","arguments":${JSON.stringify(args)}}`;
  s += ev('response.output_item.done', `,"output_index":1,"item":${fc}`);
  return s + ev('response.completed', resp('completed', `[${item},${fc}]`, '{"input_tokens":40,"output_tokens":50,"total_tokens":90}'));
}

/** A stream's variants: as written, with CRLF line ends, with a byte that is not UTF-8, cut before its end. */
function variants(name: string, s: string): Array<[string, Buffer]> {
  const b = Buffer.from(s);
  const bad = Buffer.from(s);
  const at = bad.indexOf('quick');
  if (at !== -1) bad[at + 1] = 0xff;
  const lf = s.indexOf('\n\n', Math.floor(s.length / 2));
  return [
    [name, b],
    [`${name} CRLF`, Buffer.from(s.replace(/\n/g, '\r\n'))],
    [`${name} CRLF from the middle`, Buffer.from(s.slice(0, lf + 2) + s.slice(lf + 2).replace(/\n/g, '\r\n'))],
    [`${name} not UTF-8`, bad],
    [`${name} cut`, b.subarray(0, Math.floor(b.length * 0.6))],
  ];
}

interface Pair {
  name: string;
  streams: Array<[string, Buffer]>;
  open: () => StreamSession;
}

const translated = (decoder: () => StreamDecoder, encoder: () => StreamEncoder) => () => new IrByteStreamSession(decoder(), encoder(), false);

/** Read sizes (cycled): whole, tiny, mixed, around the 8 KiB a translated session joins below, a socket's 64 KiB. */
const SIZES = [[Infinity], [1], [2], [7], [3, 64, 5, 200], [150, 1], [1500], [8193, 9000, 5], [65536]];

/** Summaries of every stream of every pair at every read size. */
export function cases(): Record<string, string> {
  const chat = [...variants('chat', chatStream(300)), ...variants('chat short', chatStream(20))];
  const anthropic = [...variants('anthropic', anthropicStream(300)), ...variants('anthropic short', anthropicStream(20))];
  const responses = [...variants('responses', responsesStream(300)), ...variants('responses short', responsesStream(20))];
  const pairs: Pair[] = [
    { name: 'chat → chat relay', streams: chat, open: () => codecFor('chat', { model: 'test/m', messages: [], stream: true }, null, endpoint, 'openai').openStream(meta) },
    { name: 'Messages in ← chat', streams: chat, open: translated(() => chatAdapter('openai').createStreamDecoder(), () => new MessagesStreamEncoder(meta)) },
    { name: 'chat in ← Anthropic', streams: anthropic, open: translated(() => anthropicAdapter.createStreamDecoder(), () => new ChatStreamEncoder(meta)) },
    { name: 'Gemini in ← Responses', streams: responses, open: translated(() => openaiResponsesAdapter.createStreamDecoder(), () => new GeminiStreamEncoder(meta)) },
    { name: 'chat in ← Responses', streams: responses, open: translated(() => openaiResponsesAdapter.createStreamDecoder(), () => new ChatStreamEncoder(meta)) },
  ];
  const got: Record<string, string> = {};
  for (const p of pairs) for (const [name, bytes] of p.streams) for (const sizes of SIZES) got[`${p.name} | ${name} | ${sizes.join(',')}`] = summary(p.open(), bytes, sizes);
  return got;
}

/** One stream through `s` in reads of `sizes` (cycled): a hash of the client's bytes and what the session counted. */
function summary(s: StreamSession, bytes: Buffer, sizes: number[]): string {
  const hash = createHash('sha256');
  const out = (x: string | Buffer) => hash.update(typeof x === 'string' ? Buffer.from(x) : x);
  let thrown = '';
  try {
    for (let i = 0, k = 0; i < bytes.length; k++) {
      const n = Math.min(sizes[k % sizes.length], bytes.length);
      out(s.push(bytes.subarray(i, i + n)));
      i += n;
      if (s.failure) break;
    }
    if (!s.failure) out(s.end());
    if (!s.failure) out(s.finishOut(meta));
  } catch (err) {
    thrown = (err as Error).message;
  }
  return `${hash.digest('hex').slice(0, 16)} tokens=${s.producedTokens} finish=${s.finish} native=${s.native} id=${s.upstreamId} failure=${s.failure?.message ?? ''} thrown=${thrown}`;
}

if (process.argv[1]?.endsWith('stream-cases.ts')) console.log(JSON.stringify(cases(), null, 1));
