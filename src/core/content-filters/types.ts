/** Content guardrail filters (reference: ContentFilterEntry, ContentFilterBuiltinEntry). Pure data. */

export type ContentFilterAction = 'redact' | 'block' | 'flag';
export const CONTENT_FILTER_ACTIONS: readonly ContentFilterAction[] = ['redact', 'block', 'flag'];

export type BuiltinSlug = 'email' | 'phone' | 'ssn' | 'credit-card' | 'ip-address' | 'person-name' | 'address' | 'regex-prompt-injection';
export const BUILTIN_SLUGS: readonly BuiltinSlug[] = ['email', 'phone', 'ssn', 'credit-card', 'ip-address', 'person-name', 'address', 'regex-prompt-injection'];

export type ScanScope = 'user_only' | 'all_messages';

/** A custom regex filter as stored on a guardrail. */
export interface ContentFilterEntry {
  pattern: string;
  action: ContentFilterAction;
  label: string | null;
}

/** A builtin filter as stored on a guardrail (the label is system-assigned, see builtinLabel). */
export interface BuiltinFilterEntry {
  slug: BuiltinSlug;
  action: ContentFilterAction;
  /** Only for regex-prompt-injection: which roles are scanned (default all_messages). */
  scan_scope?: ScanScope;
}

/** A half-open range [start, end) of a text that a filter matched. */
export interface Span {
  start: number;
  end: number;
}

/** The guardrail a filter comes from (named in blocks and in the pipeline). */
export interface FilterSource {
  id: string;
  name: string;
  scope: 'key' | 'member' | 'workspace';
}

/** One compiled filter, ready to scan. */
export interface CompiledFilter {
  kind: 'builtin' | 'custom';
  /** The builtin slug, or the custom filter's label (or its pattern when unlabelled). */
  name: string;
  action: ContentFilterAction;
  /** Redaction placeholder, e.g. "[EMAIL]". */
  label: string;
  /** Roles scanned; null = every role. */
  roles: ReadonlySet<string> | null;
  source: FilterSource;
  find(text: string): Span[];
}
