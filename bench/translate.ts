/**
 * `npx tsx bench/translate.ts`: the CPU per chunk of translating a long stream, in one process, without sockets —
 * the gateway's own per-chunk work on a translated stream (issue 18), which machine load moves far less than the
 * end-to-end stream rows of `npm run bench`. For each pair the upstream stream (10,000 content events, written as the
 * simulator writes them) is fed in 64 KiB reads to a fresh stream session, and its output encoded as the socket's
 * write would (text to UTF-8):
 * - `ir`: the IR session (decoder → IR events → encoder), as every translated stream ran before the fast path;
 * - `bytes`: the byte-level session (services/codec-ir-bytes.ts) the gateway now opens for these pairs.
 * Interleaved rounds (TRANSLATE_ROUNDS, default 7; TRANSLATE_STREAMS per round, default 20); the medians, µs per chunk.
 * Env TRANSLATE_READ_EVENTS=<k>: reads of k events each instead of 64 KiB (a paced upstream's, bench:run's `k per
 * read` rows). TRANSLATE_PAIRS=<part of a name> runs those pairs only; TRANSLATE_ONLY=ir|bytes runs one path only (for a CPU profile: `node --cpu-prof --import tsx bench/translate.ts`).
 *
 * Under callgrind it counts the instructions of the measured rounds alone (after the warm-up, without start-up):
 *   TRANSLATE_VGDB_PREFIX=/tmp/t/vgdb TRANSLATE_ONLY=bytes TRANSLATE_PAIRS=<pair> TRANSLATE_ROUNDS=1 TRANSLATE_STREAMS=5 \
 *     valgrind --tool=callgrind --instr-atstart=no --vgdb-prefix=/tmp/t/vgdb --callgrind-out-file=/tmp/t/cg.%p \
 *     node --import tsx bench/translate.ts
 * then the total of `/tmp/t/cg.<pid>.1` (the counted part's dump) ÷ (rounds × streams × 10,000) is per chunk.
 */
import { execFileSync } from 'node:child_process';
import type { AnswerMeta, StreamDecoder, StreamEncoder } from '../src/core/adapters.js';
import { anthropicAdapter } from '../src/providers/anthropic/index.js';
import { chatAdapter } from '../src/providers/registry.js';
import { ChatStreamEncoder } from '../src/providers/openai/ir-inbound.js';
import { MessagesStreamEncoder } from '../src/inbound/messages-stream.js';
import { GeminiStreamEncoder } from '../src/inbound/gemini-output.js';
import { openaiResponsesAdapter } from '../src/providers/openai-responses/index.js';
import { IrByteStreamSession } from '../src/services/codec-ir-bytes.js';
import { IrStreamSession } from '../src/services/codec-ir-stream.js';
import type { StreamSession } from '../src/services/codec-types.js';
import { eventReads } from './common.js';

const CHUNKS = 10_000;
const ROUNDS = Number(process.env.TRANSLATE_ROUNDS ?? 7);
const STREAMS = Number(process.env.TRANSLATE_STREAMS ?? 20);
const ONLY = process.env.TRANSLATE_ONLY;
const READ_EVENTS = Number(process.env.TRANSLATE_READ_EVENTS ?? 0);
const meta: AnswerMeta = { id: 'gen-1700000000-abcdefghijklmnop', model: 'bench/claude', provider: 'Simulator', created: 1700000000, cost: 0.001, cost_details: { upstream_inference_prompt_cost: null, upstream_inference_completions_cost: null, upstream_inference_cost: null } };
const WORDS = 'the quick model gateway routes each request to a simulated provider which answers with deterministic words'.split(' ');
const piece = (i: number) => JSON.stringify(` ${WORDS[i % WORDS.length]}`);

/** An Anthropic Messages stream as the simulator writes it (src/sim/anthropic.ts). */
function anthropicStream(): Buffer {
  const ev = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`;
  let s = ev('message_start', '{"type":"message_start","message":{"id":"msg_sim1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1,"service_tier":"standard"}}}');
  s += ev('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}') + ev('ping', '{"type":"ping"}');
  for (let i = 0; i < CHUNKS; i++) s += ev('content_block_delta', `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${piece(i)}}}`);
  s += ev('content_block_stop', '{"type":"content_block_stop","index":0}');
  s += ev('message_delta', `{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":${CHUNKS}}}`);
  return Buffer.from(s + ev('message_stop', '{"type":"message_stop"}'));
}

/** An OpenAI chat stream as the simulator writes it (src/sim/openai.ts), usage asked for. */
function chatStream(): Buffer {
  const head = '{"id":"chatcmpl-sim1","object":"chat.completion.chunk","created":1700000000,"model":"bench-model","service_tier":"default","system_fingerprint":"fp_sim","choices":[';
  const chunk = (delta: string, finish = 'null') => `data: ${head}{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}],"usage":null}\n\n`;
  let s = chunk('{"role":"assistant","content":""}');
  for (let i = 0; i < CHUNKS; i++) s += chunk(`{"content":${piece(i)}}`);
  s += chunk('{}', '"length"');
  s += `data: {"id":"chatcmpl-sim1","object":"chat.completion.chunk","created":1700000000,"model":"bench-model","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":${CHUNKS},"total_tokens":${CHUNKS + 40}}}\n\n`;
  return Buffer.from(`${s}data: [DONE]\n\n`);
}

/** An OpenAI Responses stream as the simulator writes it (src/sim/responses.ts), text only. */
function responsesStream(): Buffer {
  let seq = 0;
  const ev = (type: string, fields: string) => `event: ${type}\ndata: {"type":"${type}","sequence_number":${seq++}${fields}}\n\n`;
  const resp = (status: string, output: string, usage: string) => `,"response":{"id":"resp_sim1","object":"response","created_at":1700000000,"status":"${status}","error":null,"model":"bench-model","output":${output},"usage":${usage}}`;
  const base = ',"item_id":"msg_sim1","output_index":0,"content_index":0';
  let s = ev('response.created', resp('in_progress', '[]', 'null')) + ev('response.in_progress', resp('in_progress', '[]', 'null'));
  s += ev('response.output_item.added', ',"output_index":0,"item":{"id":"msg_sim1","type":"message","status":"in_progress","role":"assistant","content":[]}');
  s += ev('response.content_part.added', `${base},"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`);
  let text = '';
  for (let i = 0; i < CHUNKS; i++) {
    s += ev('response.output_text.delta', `${base},"delta":${piece(i)},"logprobs":[]`);
    text += JSON.parse(piece(i)) as string;
  }
  const t = JSON.stringify(text);
  s += ev('response.output_text.done', `${base},"text":${t},"logprobs":[]`);
  s += ev('response.content_part.done', `${base},"part":{"type":"output_text","annotations":[],"logprobs":[],"text":${t}}`);
  const item = `{"id":"msg_sim1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":${t}}]}`;
  s += ev('response.output_item.done', `,"output_index":0,"item":${item}`);
  s += ev('response.incomplete', resp('incomplete', `[${item}]`, `{"input_tokens":40,"output_tokens":${CHUNKS},"total_tokens":${CHUNKS + 40}}`));
  return Buffer.from(s);
}

interface Pair {
  name: string;
  /** The upstream stream in reads (64 KiB, or TRANSLATE_READ_EVENTS events each). */
  reads: Buffer[];
  decoder: () => StreamDecoder;
  encoder: () => StreamEncoder;
}

/** A stream in 64 KiB reads (subarrays), or in reads of TRANSLATE_READ_EVENTS events (copies). */
function reads(all: Buffer): Buffer[] {
  if (READ_EVENTS > 0) return eventReads(all, READ_EVENTS);
  const out: Buffer[] = [];
  for (let i = 0; i < all.length; i += 65536) out.push(all.subarray(i, i + 65536));
  return out;
}

const PAIRS: Pair[] = [
  { name: 'chat in ← Anthropic upstream', reads: reads(anthropicStream()), decoder: () => anthropicAdapter.createStreamDecoder(), encoder: () => new ChatStreamEncoder(meta) },
  { name: 'Messages in ← chat upstream', reads: reads(chatStream()), decoder: () => chatAdapter('openai').createStreamDecoder(), encoder: () => new MessagesStreamEncoder(meta) },
  { name: 'Gemini in ← Responses upstream', reads: reads(responsesStream()), decoder: () => openaiResponsesAdapter.createStreamDecoder(), encoder: () => new GeminiStreamEncoder(meta) },
  { name: 'chat in ← Responses upstream', reads: reads(responsesStream()), decoder: () => openaiResponsesAdapter.createStreamDecoder(), encoder: () => new ChatStreamEncoder(meta) },
  { name: 'Messages in ← Responses upstream', reads: reads(responsesStream()), decoder: () => openaiResponsesAdapter.createStreamDecoder(), encoder: () => new MessagesStreamEncoder(meta) },
].filter((p) => !process.env.TRANSLATE_PAIRS || p.name.includes(process.env.TRANSLATE_PAIRS));

/** What the client socket's write does with a session's output: text is encoded as UTF-8 (bytes go as they are). */
const written = (out: string | Buffer): number => (typeof out === 'string' ? (out === '' ? 0 : Buffer.from(out).length) : out.length);

/** One stream through a fresh session, read by read; the client's bytes. */
function run(p: Pair, bytes: boolean): number {
  const decoder = p.decoder();
  const encoder = p.encoder();
  const s: StreamSession = bytes ? new IrByteStreamSession(decoder, encoder, false) : new IrStreamSession(decoder, encoder, { exclude: false, filters: null, healer: null });
  const text = new TextDecoder();
  let n = 0;
  for (const read of p.reads) n += written(s.push(bytes ? read : text.decode(read, { stream: true })));
  n += written(s.end()) + written(s.finishOut(meta));
  return n;
}

/** CPU µs per chunk of `STREAMS` streams. */
function measure(p: Pair, bytes: boolean): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < STREAMS; i++) run(p, bytes);
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / (STREAMS * CHUNKS);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Callgrind's counting switched on or dumped (under `valgrind --tool=callgrind --instr-atstart=no`, see above). */
const VGDB = process.env.TRANSLATE_VGDB_PREFIX;
const control = (cmd: string) => VGDB && execFileSync('callgrind_control', [`--vgdb-prefix=${VGDB}`, cmd, String(process.pid)], { stdio: 'ignore' });

for (const p of PAIRS) {
  // Warm-up: both paths optimized before anything is counted.
  for (let i = 0; i < 5; i++) for (const b of [false, true]) if (!ONLY || ONLY === (b ? 'bytes' : 'ir')) run(p, b);
  const got: Record<'ir' | 'bytes', number[]> = { ir: [], bytes: [] };
  control('--instr=on');
  for (let r = 0; r < ROUNDS; r++) for (const b of [false, true]) if (!ONLY || ONLY === (b ? 'bytes' : 'ir')) got[b ? 'bytes' : 'ir'].push(measure(p, b));
  control('--dump');
  control('--instr=off');
  const ir = got.ir.length ? median(got.ir) : NaN;
  const by = got.bytes.length ? median(got.bytes) : NaN;
  console.log(`${p.name}: ir ${ir.toFixed(3)} µs/chunk, bytes ${by.toFixed(3)} µs/chunk, bytes ÷ ir ${(by / ir).toFixed(3)} (ranges ${Math.min(...got.ir).toFixed(3)}–${Math.max(...got.ir).toFixed(3)} / ${Math.min(...got.bytes).toFixed(3)}–${Math.max(...got.bytes).toFixed(3)})`);
}
