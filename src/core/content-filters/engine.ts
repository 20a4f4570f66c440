/**
 * The content filter engine: compiles the filters of the guardrails that apply to a request (their union: every
 * filter of every guardrail runs) and scans texts. Combining: any `block` match refuses the whole request (block
 * beats redact); otherwise `redact` matches are replaced by their label (overlapping matches merged, the earliest
 * and then longest wins) and `flag` matches are only reported.
 */
import { BUILTINS } from './builtins.js';
import { linearFinder } from './linear-regex.js';
import type { BuiltinFilterEntry, CompiledFilter, ContentFilterAction, ContentFilterEntry, FilterSource, Span } from './types.js';

export interface GuardrailFilters {
  source: FilterSource;
  content_filters: ContentFilterEntry[] | null;
  content_filter_builtins: BuiltinFilterEntry[] | null;
}

const USER_ROLES: ReadonlySet<string> = new Set(['user']);

/**
 * Every filter of the given guardrails, in guardrail order (key, member, workspace). Patterns are assumed checked;
 * custom ones run on the linear-time engine (linear-regex.ts), builtins on V8 (their patterns are ours, reviewed).
 */
export function compileFilters(guardrails: GuardrailFilters[]): CompiledFilter[] {
  const out: CompiledFilter[] = [];
  for (const g of guardrails) {
    for (const b of g.content_filter_builtins ?? []) {
      const def = BUILTINS[b.slug];
      const roles = b.slug === 'regex-prompt-injection' && b.scan_scope === 'user_only' ? USER_ROLES : null;
      out.push({ kind: 'builtin', name: b.slug, action: b.action, label: def.label, roles, source: g.source, find: def.find });
    }
    for (const f of g.content_filters ?? []) {
      out.push({
        kind: 'custom',
        name: f.label ?? f.pattern.slice(0, 100),
        action: f.action,
        label: f.label ?? '[REDACTED]',
        roles: null,
        source: g.source,
        find: linearFinder(f.pattern),
      });
    }
  }
  return out;
}

/** One filter's matches in one scan (counted, never the matched text: it may be the secret being filtered). */
export interface FilterHit {
  filter: CompiledFilter;
  action: ContentFilterAction;
  count: number;
}

export interface ScanResult {
  /** The text with every redact match replaced (the input when nothing is redacted). */
  text: string;
  hits: FilterHit[];
  /** The first blocking hit, when any filter with action `block` matched. */
  block: FilterHit | null;
}

/** Scans one text (of a message with this role) with every filter that covers the role. */
export function scanText(filters: CompiledFilter[], text: string, role: string): ScanResult {
  const hits: FilterHit[] = [];
  const redact: Array<Span & { label: string }> = [];
  for (const f of filters) {
    if (f.roles && !f.roles.has(role)) continue;
    const spans = f.find(text);
    if (spans.length === 0) continue;
    hits.push({ filter: f, action: f.action, count: spans.length });
    if (f.action === 'redact') for (const s of spans) redact.push({ ...s, label: f.label });
  }
  const block = hits.find((h) => h.action === 'block') ?? null;
  return { text: block || redact.length === 0 ? text : applyRedactions(text, redact), hits, block };
}

/** Replaces spans by their labels; overlapping spans are merged into the earliest (then longest) one. */
export function applyRedactions(text: string, spans: Array<Span & { label: string }>): string {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const s of spans) {
    if (s.start < at) {
      if (s.end > at) at = s.end; // the overlapping tail joins the previous placeholder
      continue;
    }
    out += text.slice(at, s.start) + s.label;
    at = s.end;
  }
  return out + text.slice(at);
}
