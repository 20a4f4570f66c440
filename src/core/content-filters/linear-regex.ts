/**
 * Custom content filters run on a linear-time regular expression engine (RE2's automata, through `re2js`, a pure
 * JavaScript port: nothing native, nothing downloaded). V8's backtracking engine is polynomial or exponential on some
 * patterns that no static check can exclude without refusing ordinary ones: an unanchored `a+b` over a long run of
 * `a` is quadratic (every start position rescans the run). On RE2 every pattern scans in time linear in the text.
 *
 * The pattern keeps JavaScript's syntax and meaning: it is translated to RE2's syntax here. Differences handled:
 * `.` excludes JavaScript's line terminators (\n \r \u2028 \u2029, RE2 only \n); `\s` / `\S` are JavaScript's
 * Unicode whitespace (RE2's are ASCII); `[\b]` is a backspace; `\p` is a plain `p` (no `u` flag); `\uXXXX`, `\u{…}`, `\cX` and named groups are
 * rewritten by re2js's own translator. `\d`, `\w`, `\b` are ASCII in both. Lookaround and backreferences cannot run
 * on RE2 and are refused before this (regex-safety.ts), as the reference refuses them.
 */
import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';
import type { Span } from './types.js';

/**
 * re2js is loaded by the first pattern translated or compiled, not at start-up: a gateway without custom content filters
 * keeps it out of the heap every full collection marks (docs/benchmark.md, "Megabyte bodies: a smaller heap to mark").
 */
const requireLazily = createRequire(import.meta.url);
let re2: typeof RE2JS | undefined;
const engine = (): typeof RE2JS => (re2 ??= (requireLazily('re2js') as typeof import('re2js')).RE2JS);

const JS_SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const JS_DOT = '[^\\n\\r\\u2028\\u2029]';

/** JavaScript regex source (no flags) → RE2 syntax with the same meaning. Throws when RE2 cannot compile it. */
export function toRe2Syntax(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const n = pattern[i + 1] ?? '';
      i++;
      if (n === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      else if (n === 'S' && !inClass) out += `[^${JS_SPACE}]`;
      else if (n === 'b' && inClass) out += '\\x08';
      else if (n === 'p' || n === 'P') out += n; // an identity escape without JavaScript's `u` flag
      else out += `\\${n}`;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      // A leading `]` (or `^]`) is a literal in RE2 but closes an empty class in JavaScript: `[]` never matches and
      // `[^]` matches anything.
      if (pattern.startsWith('^]', i + 1)) {
        out = out.slice(0, -1) + '[\\x{0}-\\x{10FFFF}]';
        i += 2;
        inClass = false;
      } else if (pattern[i + 1] === ']') {
        out = out.slice(0, -1) + '[^\\x{0}-\\x{10FFFF}]';
        i += 1;
        inClass = false;
      }
      continue;
    }
    out += c === '.' ? JS_DOT : c;
  }
  return engine().translateRegExp(out);
}

/**
 * Compiled patterns by source, shared by the safety check and every policy that uses them (compiling is the slow
 * part: a pattern of 100,000 characters takes about a second). Bounded: cleared when full.
 */
const compiled = new Map<string, RE2JS>();
const MAX_COMPILED = 2_000;

/** The pattern compiled on RE2; throws when RE2 cannot compile it. */
export function compileLinear(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (!re) {
    re = engine().compile(toRe2Syntax(pattern));
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

/** A pattern's matches on RE2 (non-empty ones, leftmost-first as in JavaScript), or an error when it cannot run there. */
export function linearFinder(pattern: string): (text: string) => Span[] {
  const re = compileLinear(pattern);
  return (text) => {
    // The DFA answers "any match?" fastest (no positions): most texts have none.
    if (!re.test(text)) return [];
    const spans: Span[] = [];
    const m = re.matcher(text);
    while (m.find()) {
      const start = m.start();
      const end = m.end();
      if (end > start) spans.push({ start, end });
    }
    return spans;
  };
}
