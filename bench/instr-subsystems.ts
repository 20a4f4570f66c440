/**
 * `npx tsx bench/instr-subsystems.ts <dumps A> <dumps B> <requests>`: the main thread's JIT code (named by V8's perf
 * map, see bench/instr-groups.ts) summed by the gateway's subsystem its source file belongs to, A, B and B − A in
 * thousands of instructions per request; then the other groups (builtins, runtime, GC, compiler; the writer thread).
 */
import { resolve } from 'node:path';
import { GROUPS, readCounts, THREADS, type Counts } from './instr-groups.js';

const SUBSYSTEMS: Array<[string, RegExp]> = [
  ['stream relay (chunk patterns, template, parse path)', /chat-relay|chunk-template|chunk-scan|services\/codecs\.js|codec-usage|json-scan|eventsource-parser|reply-stream/],
  ['chat service, attempt runner, routing, keys', /services\/chat|attempts\/|core\/routing|services\/keys|core\/keys|services\/guardrail|spend\/|model-resolution|catalog|core\/pricing|codec-chat|byok|observability|generation-id/],
  ['HTTP layer (Fastify, body, validation, auth, access log)', /fastify|find-my-way|json-body|body-reader|validation|http\/app|http\/plugins|http\/routes|secure-json-parse|ajv|pino|light-my-request|avvio/],
  ['upstream client (undici, pool)', /undici|providers\/http|providers\/pool/],
  ['recording (batch, rollups, writer messages)', /generations|rollups|sqlite-writer|kysely|store\//],
  ['timers (health percentiles, video worker)', /services\/health|video-worker/],
  ['Node internals', /^node:/],
];

function bySubsystem(c: Counts): Map<string, number> {
  const m = new Map<string, number>();
  for (const [key, v] of c.symbols) {
    if (!key.startsWith('main|js:')) continue;
    const file = key.slice(key.lastIndexOf(' ') + 1);
    const name = SUBSYSTEMS.find(([, re]) => re.test(file))?.[0] ?? 'other JavaScript';
    m.set(name, (m.get(name) ?? 0) + v);
  }
  return m;
}

const [da, db, req] = process.argv.slice(2);
const n = Number(req ?? 1);
const a = readCounts(resolve(da));
const b = readCounts(resolve(db));
const k = (x: number) => (x / n / 1000).toFixed(1);
const sa = bySubsystem(a);
const sb = bySubsystem(b);
console.log('| part | A | B | B − A |\n|---|---|---|---|');
for (const name of [...SUBSYSTEMS.map(([s]) => s), 'other JavaScript']) console.log(`| JIT: ${name} | ${k(sa.get(name) ?? 0)} | ${k(sb.get(name) ?? 0)} | ${k((sb.get(name) ?? 0) - (sa.get(name) ?? 0))} |`);
const unnamed = (c: Counts) => [...c.symbols].filter(([key]) => key.startsWith('main|0x')).reduce((s, [, v]) => s + v, 0);
console.log(`| JIT: unnamed code | ${k(unnamed(a))} | ${k(unnamed(b))} | ${k(unnamed(b) - unnamed(a))} |`);
for (const t of THREADS) for (const g of GROUPS) {
  if (t === 'main' && g === 'jit') continue;
  if (a[t][g] + b[t][g] < n * 1000) continue; // under 1k per request in both
  console.log(`| ${t}: ${g} | ${k(a[t][g])} | ${k(b[t][g])} | ${k(b[t][g] - a[t][g])} |`);
}
