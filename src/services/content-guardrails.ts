/**
 * Content guardrails (docs/guardrails.md): validation and views of a guardrail's `content_filters` and
 * `content_filter_builtins`, and screening a request's texts with the filters of the guardrails that apply to its key.
 * The scanning itself is pure (src/core/content-filters); this file adapts guardrail rows to it.
 */
import { builtinLabel, checkPattern, compileFilters, requestTexts, responseTexts, screenRequest, type GuardrailFilters, type PipelineEntry } from '../core/content-filters/index.js';
import type { BuiltinFilterEntry, BuiltinSlug, CompiledFilter, ContentFilterAction, ContentFilterEntry, ScanScope } from '../core/content-filters/types.js';
import { badRequest, forbidden, type HttpError } from '../core/errors.js';
import type { AnyPipelineEntry } from '../core/plugins.js';
import type { GuardrailRow } from '../store/types.js';

/** Custom filters as stored: each pattern checked (400 `invalid_regex_pattern`); an empty list is stored as null. */
export function validContentFilters(list: Array<{ pattern: string; action: ContentFilterAction; label?: string | null }> | null): ContentFilterEntry[] | null {
  if (!list || list.length === 0) return null;
  return list.map((f, i) => {
    const problem = checkPattern(f.pattern);
    if (problem) {
      throw badRequest(`content_filters[${i}].pattern: invalid_regex_pattern: ${problem.message}`, { field: `content_filters[${i}].pattern`, error_type: 'invalid_regex_pattern', rule: problem.rule });
    }
    return { pattern: f.pattern, action: f.action, label: f.label ?? null };
  });
}

/** Builtin filters as stored: one entry per slug (a repeated slug is refused); labels are system-assigned. */
export function validBuiltinFilters(list: Array<{ slug: BuiltinSlug; action: ContentFilterAction; label?: string; scan_scope?: ScanScope }> | null): BuiltinFilterEntry[] | null {
  if (!list || list.length === 0) return null;
  const seen = new Set<string>();
  return list.map((b, i) => {
    if (seen.has(b.slug)) throw badRequest(`content_filter_builtins[${i}].slug: "${b.slug}" is listed twice`, { field: `content_filter_builtins[${i}].slug`, rule: 'duplicate' });
    seen.add(b.slug);
    return b.slug === 'regex-prompt-injection' ? { slug: b.slug, action: b.action, scan_scope: b.scan_scope ?? 'all_messages' } : { slug: b.slug, action: b.action };
  });
}

export function contentFiltersView(g: GuardrailRow) {
  return {
    content_filters: g.content_filters ?? null,
    content_filter_builtins: g.content_filter_builtins ? g.content_filter_builtins.map((b) => ({ ...b, label: builtinLabel(b.slug) })) : null,
  };
}

/** The compiled filters of the guardrails that apply to a key (key, member, workspace), or null when there are none. */
export function filtersOf(guardrails: Array<{ row: GuardrailRow; scope: 'key' | 'member' | 'workspace' }>): CompiledFilter[] | null {
  const input: GuardrailFilters[] = guardrails
    .filter(({ row }) => (row.content_filters?.length ?? 0) + (row.content_filter_builtins?.length ?? 0) > 0)
    .map(({ row, scope }) => ({ source: { id: row.id, name: row.name, scope }, content_filters: row.content_filters ?? null, content_filter_builtins: row.content_filter_builtins ?? null }));
  return input.length > 0 ? compileFilters(input) : null;
}

/**
 * Screens an inference request body: a `block` match throws 403 naming the guardrail; otherwise the body to send
 * (a copy with the redactions written in, since parts of a body may be shared with a cached preset) and the pipeline
 * entries (empty when nothing matched). Without filters, the body itself.
 */
export function screenInput(filters: CompiledFilter[] | null, api: string, body: Record<string, unknown>): { body: Record<string, unknown>; pipeline: PipelineEntry[]; filters: CompiledFilter[] | null } {
  if (!filters) return { body, pipeline: [], filters: null };
  const copy = structuredClone(body);
  const out = screenRequest(filters, requestTexts(api, copy));
  if (out.block) throw blocked(out.block, out.pipeline);
  return { body: copy, pipeline: out.pipeline, filters };
}

/** The error of a streamed reply that a `block` filter stopped (sent as the client API's error event). */
export function streamBlockedError(f: CompiledFilter, pipeline: AnyPipelineEntry[]): HttpError {
  return blocked({ source: f.source, filter: f.name, kind: f.kind }, pipeline, 'reply');
}

/**
 * Screens a non-streamed reply body (the client's shape) in place: redactions written in, every action appended to
 * the body's `gateway_metadata.pipeline` when it has one (after the input's entries). A `block` match returns the 403
 * to answer instead (the generation is still recorded and billed: the upstream did the work).
 */
export function screenOutput(filters: CompiledFilter[] | null, api: string, body: Record<string, unknown>, inputPipeline: readonly AnyPipelineEntry[] | undefined): HttpError | null {
  if (!filters) return null;
  const out = screenRequest(filters, responseTexts(api, body), 'output');
  const meta = body.gateway_metadata as Record<string, unknown> | undefined;
  const pipeline = [...(inputPipeline ?? []), ...out.pipeline];
  if (meta && typeof meta === 'object' && pipeline.length > 0) meta.pipeline = pipeline;
  return out.block ? blocked(out.block, pipeline, 'reply') : null;
}

function blocked(b: NonNullable<ReturnType<typeof screenRequest>['block']>, pipeline: AnyPipelineEntry[], what_ = 'request'): HttpError {
  const what = b.kind === 'builtin' ? `the ${b.filter} content filter` : `the custom content filter ${b.filter}`;
  return forbidden(`Blocked by guardrail "${b.source.name}": the ${what_} matched ${what}`, {
    error_type: 'permission_denied',
    guardrail_id: b.source.id,
    guardrail_name: b.source.name,
    guardrail_scope: b.source.scope,
    excluded_by: ['content_filter'],
    filter: b.filter,
    pipeline,
  });
}
