/**
 * The callgrind dumps `bench/instructions.ts` writes (one per thread, `--separate-threads=yes`), read per thread and
 * per group of symbols, so that two builds can be compared by subsystem rather than by one whole-process figure.
 *
 * Threads: `main` (the first: the event loop and the gateway's JavaScript), `writer` (the thread whose count holds
 * SQLite: the record writer's worker), `helpers` (the rest: V8's compiler and GC helper threads, libuv's pool).
 * Groups (by symbol name): compiler (V8's optimizing compilers), gc (scavenger, marking, sweeping, evacuation and
 * their heap visitors), sqlite, clone (postMessage's structured clone), regexp, builtins (`Builtins_*` other than
 * the regexp ones), jit (unnamed code addresses: the JavaScript V8 generated), runtime (everything else: V8's C++
 * runtime, Node, libc).
 *
 * `npx tsx bench/instr-groups.ts <dir of dumps> [<dir of dumps B>] [requests]`: prints the table (thousands of
 * instructions per request when `requests` is given) and, with two dirs, B − A.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const GROUPS = ['jit', 'builtins', 'regexp', 'runtime', 'clone', 'sqlite', 'gc', 'compiler'] as const;
export type Group = (typeof GROUPS)[number];
export const THREADS = ['main', 'writer', 'helpers'] as const;
export type Thread = (typeof THREADS)[number];
export type Counts = Record<Thread, Record<Group, number>> & { symbols: Map<string, number> };

const COMPILER = /compiler::|turboshaft|maglev|Turbofan|OptimizedCompilationJob|PipelineCompilationJob/i;
const GC = /Scavenge|Mark(ing|Compact)|Sweep|Evacuat|Heap::|HeapVisitor|BodyDescriptor|IterateAndScavenge|ConcurrentMarking|MinorMC|cppgc|Remembered|SlotSet|MemoryAllocator|MemoryChunk|PagedSpace|NewSpace|SemiSpace|LargeObjectSpace|WorklistBase|Worklist<|GCTracer|ObjectVisitor|RootVisitor/;

export function groupOf(symbol: string): Group {
  if (COMPILER.test(symbol)) return 'compiler';
  if (/^0x[0-9a-f]+$/i.test(symbol) || symbol === '???' || symbol.startsWith('js:')) return 'jit';
  if (/sqlite3/.test(symbol)) return 'sqlite';
  if (/ValueSerializer|ValueDeserializer|SerializerContext|DeserializerContext|Message::Serialize|Message::Deserialize/.test(symbol)) return 'clone';
  if (GC.test(symbol)) return 'gc';
  if (/RegExp|Irregexp|regexp/i.test(symbol)) return 'regexp';
  if (/^Builtins_/.test(symbol)) return 'builtins';
  return 'runtime';
}

function empty(): Record<Group, number> {
  return Object.fromEntries(GROUPS.map((g) => [g, 0])) as Record<Group, number>;
}

/** Self instructions by symbol in one dump. */
function selfBySymbol(file: string): Map<string, number> {
  const out = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', file], { maxBuffer: 512 << 20 }).toString();
  const m = new Map<string, number>();
  for (const line of out.split('\n')) {
    const hit = /^\s*([\d,]+) \([^)]*\)\s+(?:[^:\s]+:)?(.*?)(?: \[[^\]]*\])?\s*$/.exec(line);
    if (!hit) continue;
    const sym = hit[2].trim();
    if (!sym || sym.startsWith('PROGRAM TOTALS') || sym === 'file:function') continue;
    m.set(sym, (m.get(sym) ?? 0) + Number(hit[1].replace(/,/g, '')));
  }
  return m;
}

/**
 * V8's perf map of a process (`node --perf-basic-prof` writes /tmp/perf-<pid>.map): JIT code addresses to function
 * names, the later entry winning where code was moved or its space reused. Returns a lookup, or null without a map.
 */
function perfMap(pid: string): ((addr: number) => string | null) | null {
  const file = `/tmp/perf-${pid}.map`;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const byStart = new Map<number, { size: number; name: string }>();
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/i.exec(line);
    if (m) byStart.set(parseInt(m[1], 16), { size: parseInt(m[2], 16), name: m[3] });
  }
  const starts = [...byStart.keys()].sort((x, y) => x - y);
  return (addr) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= addr) lo = mid;
      else hi = mid - 1;
    }
    const e = starts.length > 0 && starts[lo] <= addr ? byStart.get(starts[lo])! : null;
    if (!e || addr >= starts[lo] + e.size) return null;
    // `JS:*name file:///work/wt/<checkout>/dist/x.js:1:2`: the tier mark and the checkout's path dropped.
    return e.name.replace(/^(JS|LazyCompile|Function):[*~^+]?/, 'js:').replace(/file:\/\/\/work\/(wt\/[^/]+|main)\//, '').replace(/:\d+:\d+$/, '');
  };
}

/** The counted dumps of one run (`cg.out.<pid>*`, non-zero), grouped per thread and symbol group. */
export function readCounts(dir: string): Counts {
  const counts = { main: empty(), writer: empty(), helpers: empty(), symbols: new Map<string, number>() } as Counts;
  const files = readdirSync(dir).filter((f) => f.startsWith('cg.out')).sort();
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'utf8');
    const total = /^summary: (\d+)/m.exec(text);
    if (!total || Number(total[1]) === 0) continue;
    const thread = Number(/^thread: (\d+)/m.exec(text)?.[1] ?? 1);
    let syms = selfBySymbol(join(dir, f));
    const pid = /^pid: (\d+)/m.exec(text)?.[1];
    const named = pid ? perfMap(pid) : null;
    if (named) {
      const renamed = new Map<string, number>();
      for (const [s, n] of syms) {
        const js = /^0x[0-9a-f]+$/i.test(s) ? named(parseInt(s, 16)) : null;
        const key = js ?? s;
        renamed.set(key, (renamed.get(key) ?? 0) + n);
      }
      syms = renamed;
    }
    const hasSqlite = [...syms.keys()].some((s) => s.includes('sqlite3'));
    const t: Thread = thread === 1 ? 'main' : hasSqlite ? 'writer' : 'helpers';
    for (const [s, n] of syms) {
      counts[t][groupOf(s)] += n;
      const key = `${t}|${s}`;
      counts.symbols.set(key, (counts.symbols.get(key) ?? 0) + n);
    }
  }
  return counts;
}

export function total(c: Counts, skip: Group[] = []): number {
  let n = 0;
  for (const t of THREADS) for (const g of GROUPS) if (!skip.includes(g)) n += c[t][g];
  return n;
}

/** A table of thousands of instructions per request by thread and group, A, B and B − A. */
export function table(a: Counts, b: Counts | null, requests: number): string {
  const k = (x: number) => (x / requests / 1000).toFixed(1);
  const rows = [`| thread | group | A | ${b ? 'B | B − A |' : ''}`, `|---|---|---|${b ? '---|---|' : ''}`];
  for (const t of THREADS) {
    for (const g of GROUPS) {
      if (a[t][g] === 0 && (!b || b[t][g] === 0)) continue;
      rows.push(`| ${t} | ${g} | ${k(a[t][g])} | ${b ? `${k(b[t][g])} | ${k(b[t][g] - a[t][g])} |` : ''}`);
    }
  }
  const line = (name: string, skip: Group[]) => {
    const ta = total(a, skip);
    const tb = b ? total(b, skip) : 0;
    return `| all | ${name} | ${k(ta)} | ${b ? `${k(tb)} | ${k(tb - ta)} (${(tb / ta).toFixed(3)}) |` : ''}`;
  };
  rows.push(line('total', []), line('without compiler', ['compiler']), line('without compiler and GC', ['compiler', 'gc']));
  return rows.join('\n');
}

/** The symbols whose self count differs most between A and B (per request). */
export function topDiff(a: Counts, b: Counts, requests: number, n = 40): string {
  const keys = new Set([...a.symbols.keys(), ...b.symbols.keys()]);
  const diffs = [...keys].map((s) => [s, ((b.symbols.get(s) ?? 0) - (a.symbols.get(s) ?? 0)) / requests] as const);
  diffs.sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]));
  return diffs
    .slice(0, n)
    .map(([s, d]) => `${d > 0 ? '+' : ''}${(d / 1000).toFixed(2).padStart(8)} k  ${groupOf(s.slice(s.indexOf('|') + 1)).padEnd(8)} ${s.slice(0, 140)}`)
    .join('\n');
}

/** JIT code summed by source file (perf-map names `js:<function> <file>`), B − A, largest first. */
export function fileDiff(a: Counts, b: Counts, requests: number, n = 30): string {
  const byFile = (c: Counts) => {
    const m = new Map<string, number>();
    for (const [key, v] of c.symbols) {
      const sym = key.slice(key.indexOf('|') + 1);
      const file = sym.startsWith('js:') ? `${key.slice(0, key.indexOf('|'))} ${sym.slice(sym.lastIndexOf(' ') + 1) || '(no file)'}` : null;
      if (file) m.set(file, (m.get(file) ?? 0) + v);
    }
    return m;
  };
  const fa = byFile(a);
  const fb = byFile(b);
  const rows = [...new Set([...fa.keys(), ...fb.keys()])].map((f) => [f, fa.get(f) ?? 0, fb.get(f) ?? 0] as const);
  rows.sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]));
  const k = (x: number) => (x / requests / 1000).toFixed(2).padStart(7);
  return rows.slice(0, n).map(([f, x, y]) => `${k(x)} ${k(y)} ${k(y - x)}  ${f}`).join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [da, db, req] = process.argv.slice(2);
  const requests = Number(db && !/^\d+$/.test(db) ? (req ?? 1) : (db ?? 1));
  const a = readCounts(resolve(da));
  const b = db && !/^\d+$/.test(db) ? readCounts(resolve(db)) : null;
  console.log(table(a, b, requests));
  if (b) console.log('\nJIT code by file (A, B, B − A, thousands per request):\n' + fileDiff(a, b, requests, Number(process.env.INSTR_TOP ?? 40)));
  if (b) console.log('\nlargest differences by symbol (B − A, thousands per request):\n' + topDiff(a, b, requests, Number(process.env.INSTR_TOP ?? 40)));
}
