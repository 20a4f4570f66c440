/**
 * `npx tsx bench/relay.ts <checkout> [streams]`: the same-protocol chat relay alone (chat completions in, an OpenAI
 * upstream) on the short stream of `bench:instructions` (INSTR_STREAM=1): the simulator's answer to "hello" — a role
 * chunk, 13 content chunks, the finish chunk, the usage chunk and `[DONE]`, as one read. Each stream is a fresh session
 * of `<checkout>/dist` (any build with `codecFor`, e.g. the base 208daee), fed as the gateway's pipe feeds it (bytes to
 * a binary session, decoded text otherwise). Prints µs per stream.
 *
 * Under callgrind it counts instructions per stream, without the warm-up (4 × streams) and start-up:
 *   valgrind --tool=callgrind --instr-atstart=no --vgdb-prefix=/tmp/r/vgdb --callgrind-out-file=/tmp/r/cg.%p \
 *     node --import tsx bench/relay.ts <checkout> 2000     (with RELAY_VGDB_PREFIX=/tmp/r/vgdb HOST=127.0.0.1)
 * then `callgrind_annotate /tmp/r/cg.<pid>.1` (the counted part's dump).
 *
 * RELAY_CHUNKS=<n> (e.g. 10000): a long stream instead, n content chunks of one word each (as bench:run's 10,000-chunk
 * row), fed in reads of RELAY_READ bytes (default 65536, what a socket read gives); prints µs per chunk too.
 * RELAY_READ_EVENTS=<k>: reads of k events each instead (a paced upstream's reads, bench:run's `k per read` rows).
 * RELAY_ENCODE=1: text output is encoded to bytes as the socket's write would (a build that returns Buffers pays that
 * inside `push`).
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { pathToFileURL } from 'node:url';
import { eventReads } from './common.js';

const dir = resolve(process.argv[2] ?? '.');
const N = Number(process.argv[3] ?? 20_000);
const PREFIX = process.env.RELAY_VGDB_PREFIX;
const CHUNKS = Number(process.env.RELAY_CHUNKS ?? 0);
const READ = Number(process.env.RELAY_READ ?? 65536);
const ENCODE = process.env.RELAY_ENCODE === '1';
const READ_EVENTS = Number(process.env.RELAY_READ_EVENTS ?? 0);

/** The simulator's streamed answer to "hello" (src/sim/openai.ts streamEvents), usage asked for. */
function simStream(): Buffer[] {
  const head = '{"id":"chatcmpl-simlx851","object":"chat.completion.chunk","created":1795565879,"model":"bench-model","service_tier":"default","system_fingerprint":"fp_sim0000000","choices":[';
  const chunk = (delta: string, finish = 'null') => `data: ${head}{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}],"usage":null}\n\n`;
  const some = ['Simulated', ' reply', ' to:', ' hello', ' This', ' is', ' a', ' simulated', ' answer', ' from', ' the', ' bench', ' model.'];
  const words = CHUNKS ? Array.from({ length: CHUNKS }, (_, i) => some[i % some.length]) : some;
  const usage = '{"prompt_tokens":9,"completion_tokens":13,"total_tokens":22,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}';
  const all = Buffer.from(
    chunk('{"role":"assistant","content":"","refusal":null}') +
      words.map((w) => chunk(`{"content":${JSON.stringify(w)}}`)).join('') +
      chunk('{}', '"stop"') +
      `data: ${head}],"usage":${usage}}\n\n` +
      'data: [DONE]\n\n',
  );
  if (!CHUNKS) return [all];
  if (READ_EVENTS > 0) return eventReads(all, READ_EVENTS);
  const reads: Buffer[] = [];
  for (let i = 0; i < all.length; i += READ) reads.push(Buffer.from(all.subarray(i, i + READ)));
  return reads;
}

interface Session {
  binary?: boolean;
  push(x: string | Uint8Array): string | Buffer;
  finishOut(meta: unknown): string;
}

async function main() {
  const { codecFor } = (await import(pathToFileURL(`${dir}/dist/services/codecs.js`).href)) as { codecFor: (...args: unknown[]) => { openStream(meta: unknown): Session } };
  const codec = codecFor('chat', { model: 'bench/model', messages: [{ role: 'user', content: 'hello' }], stream: true }, null, { upstreamModel: 'bench-model', supportedParameters: [] }, 'openai');
  const meta = { id: 'gen-1795565879-abcdefghijklmnop', created: 1795565879, model: 'bench/model', provider: 'Simulator', cost: 0.000035, cost_details: {} };
  const reads = simStream();
  // The bytes the socket's write would send: text is encoded there (RELAY_ENCODE=1 counts that too).
  const written = (out: string | Buffer) => (ENCODE && typeof out === 'string' ? Buffer.from(out).length : out.length);
  let bytes = 0;
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      const s = codec.openStream(meta);
      const decoder = new StringDecoder('utf8');
      for (const read of reads) bytes += written(s.push(s.binary ? read : decoder.write(read)));
      bytes += written(s.finishOut(meta));
    }
  };
  run(CHUNKS ? Math.min(4 * N, 40) : 4 * N);
  const control = (cmd: string) => PREFIX && execFileSync('callgrind_control', [`--vgdb-prefix=${PREFIX}`, cmd, String(process.pid)], { stdio: 'ignore' });
  control('--instr=on');
  const t0 = process.cpuUsage();
  run(N);
  const t = process.cpuUsage(t0);
  control('--dump');
  const perChunk = CHUNKS ? `, ${((t.user + t.system) / N / CHUNKS).toFixed(4)} µs per chunk` : '';
  console.log(`${dir}: ${N} streams, ${((t.user + t.system) / N).toFixed(2)} µs per stream${perChunk} (${bytes} bytes out)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
