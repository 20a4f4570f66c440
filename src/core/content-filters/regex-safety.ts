/**
 * A conservative static check of custom filter patterns (JavaScript regex syntax), so that every accepted pattern
 * runs without catastrophic backtracking on V8's backtracking engine. Refused:
 * - lookaround: (?=, (?!, (?<=, (?<!
 * - backreferences: \1…\9 (any \<digit> other than \0), \k<name>
 * - nested quantifiers: a repeated group (max > 1) that contains a quantifier, unless both the group's repetition and
 *   every quantifier inside are bounded ({n} / {n,m}, ?): `(a+)+`, `(\d+\.){3}`, `(x{1,3})*` are refused,
 *   `(\d{1,3}\.){3}` is accepted
 * - an unboundedly repeated group containing alternation (`(a|a)*`, `(x|xy)+`): ambiguous alternatives repeated
 *   without bound backtrack exponentially too
 * Each pattern must also compile (flag `g`) and be at most 100,000 characters, and compile on the linear-time engine
 * that runs it (linear-regex.ts; rule `unsupported` otherwise). The static rules are the reference's; what they
 * accept can still be polynomial on a backtracking engine (`a+b`), which is why custom filters never run on V8.
 */
import { compileLinear } from './linear-regex.js';

export const MAX_PATTERN_LENGTH = 100_000;

export interface PatternProblem {
  rule: 'too_long' | 'syntax' | 'unsupported' | 'lookaround' | 'backreference' | 'nested_quantifier' | 'repeated_alternation';
  message: string;
}

interface Group {
  hasQuantifier: boolean;
  hasUnbounded: boolean;
  hasAlternation: boolean;
}

/** Reads a quantifier at i; returns its length and whether it is unbounded / repeats more than once, or null. */
function quantifierAt(p: string, i: number): { len: number; unbounded: boolean; repeats: boolean } | null {
  const c = p[i];
  let len = 0;
  let unbounded = false;
  let repeats = false;
  if (c === '*' || c === '+') {
    len = 1;
    unbounded = true;
    repeats = true;
  } else if (c === '?') {
    len = 1;
  } else if (c === '{') {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i, i + 24));
    if (!m) return null;
    len = m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    unbounded = max === Infinity;
    repeats = max > 1;
  } else return null;
  if (p[i + len] === '?') len++; // lazy
  return { len, unbounded, repeats };
}

/** Null when the pattern is accepted, else the first problem. */
export function checkPattern(p: string): PatternProblem | null {
  if (p.length > MAX_PATTERN_LENGTH) return { rule: 'too_long', message: `pattern is ${p.length} characters; at most ${MAX_PATTERN_LENGTH}` };
  try {
    new RegExp(p, 'g');
  } catch (e) {
    return { rule: 'syntax', message: `not a valid JavaScript regular expression (${(e as Error).message})` };
  }
  const stack: Group[] = [{ hasQuantifier: false, hasUnbounded: false, hasAlternation: false }];
  let i = 0;
  while (i < p.length) {
    const c = p[i];
    if (c === '\\') {
      const n = p[i + 1];
      if (n !== undefined && n >= '1' && n <= '9') return { rule: 'backreference', message: `backreference \\${n} at ${i} is not allowed` };
      if (n === 'k' && p[i + 2] === '<') return { rule: 'backreference', message: `named backreference at ${i} is not allowed` };
      i += 2;
      i = afterAtom(p, i, stack);
      continue;
    }
    if (c === '[') {
      i = classEnd(p, i);
      i = afterAtom(p, i, stack);
      continue;
    }
    if (c === '(') {
      if (p.startsWith('(?=', i) || p.startsWith('(?!', i) || p.startsWith('(?<=', i) || p.startsWith('(?<!', i)) {
        return { rule: 'lookaround', message: `lookaround at ${i} is not allowed` };
      }
      stack.push({ hasQuantifier: false, hasUnbounded: false, hasAlternation: false });
      i++;
      continue;
    }
    if (c === ')') {
      const g = stack.pop()!;
      const q = quantifierAt(p, i + 1);
      const outer = stack[stack.length - 1];
      if (q && q.repeats && g.hasQuantifier && (q.unbounded || g.hasUnbounded)) {
        return { rule: 'nested_quantifier', message: `a repeated group containing a quantifier (ending at ${i}) is not allowed` };
      }
      if (q && q.unbounded && g.hasAlternation) {
        return { rule: 'repeated_alternation', message: `an unboundedly repeated group containing alternation (ending at ${i}) is not allowed` };
      }
      outer.hasQuantifier ||= g.hasQuantifier || q !== null;
      outer.hasUnbounded ||= g.hasUnbounded || (q?.unbounded ?? false);
      outer.hasAlternation ||= g.hasAlternation;
      i += 1 + (q?.len ?? 0);
      continue;
    }
    if (c === '|') {
      stack[stack.length - 1].hasAlternation = true;
      i++;
      continue;
    }
    i = afterAtom(p, i + 1, stack);
  }
  try {
    compileLinear(p);
  } catch (e) {
    return { rule: 'unsupported', message: `not supported by the linear-time regex engine (${(e as Error).message})` };
  }
  return null;
}

/** Index after a character class starting at i ('['). */
function classEnd(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === '^') j++;
  if (p[j] === ']') j++;
  while (j < p.length && p[j] !== ']') j += p[j] === '\\' ? 2 : 1;
  return j + 1;
}

/** Consumes an optional quantifier after an atom ending at i, recording it on the innermost group. */
function afterAtom(p: string, i: number, stack: Group[]): number {
  const q = quantifierAt(p, i);
  if (!q) return i;
  const g = stack[stack.length - 1];
  g.hasQuantifier = true;
  g.hasUnbounded ||= q.unbounded;
  return i + q.len;
}
