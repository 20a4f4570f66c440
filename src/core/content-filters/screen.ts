/**
 * Screening a request (or a reply's text) with compiled filters: every slot is scanned; a block anywhere refuses
 * the whole request and nothing is rewritten; otherwise redactions are written back. What acted is summarized per
 * filter as `gateway_metadata.pipeline` entries (reference: `pipeline[{type, name, summary, data, guardrail_id,
 * guardrail_scope}]`).
 */
import { scanText, type FilterHit } from './engine.js';
import type { TextSlot } from './request-text.js';
import type { CompiledFilter, ContentFilterAction, FilterSource } from './types.js';

export interface PipelineEntry {
  type: 'guardrail';
  name: string;
  summary: string;
  data: { filter: string; kind: 'builtin' | 'custom'; action: ContentFilterAction; matches: number; stage: 'input' | 'output'; label: string };
  guardrail_id: string;
  guardrail_scope: string;
}

export interface ScreenOutcome {
  /** Set when a `block` filter matched: the request must be refused (403) naming this guardrail. */
  block: { source: FilterSource; filter: string; kind: 'builtin' | 'custom' } | null;
  pipeline: PipelineEntry[];
}

const VERB: Record<ContentFilterAction, string> = { block: 'blocked', redact: 'redacted', flag: 'flagged' };

export function pipelineEntries(hits: Map<CompiledFilter, number>, stage: 'input' | 'output'): PipelineEntry[] {
  return [...hits].map(([f, n]) => ({
    type: 'guardrail',
    name: `content_filter:${f.name}`,
    summary: `${f.kind === 'builtin' ? f.name : `custom filter ${f.label}`} ${VERB[f.action]} ${n} match${n === 1 ? '' : 'es'} in the ${stage} (guardrail "${f.source.name}")`,
    data: { filter: f.name, kind: f.kind, action: f.action, matches: n, stage, label: f.label },
    guardrail_id: f.source.id,
    guardrail_scope: f.source.scope,
  }));
}

export function screenRequest(filters: CompiledFilter[], slots: TextSlot[], stage: 'input' | 'output' = 'input'): ScreenOutcome {
  const counts = new Map<CompiledFilter, number>();
  const rewrites: Array<{ slot: TextSlot; text: string }> = [];
  let block: FilterHit | null = null;
  for (const slot of slots) {
    const r = scanText(filters, slot.text, slot.role);
    for (const h of r.hits) counts.set(h.filter, (counts.get(h.filter) ?? 0) + h.count);
    block ??= r.block;
    if (r.text !== slot.text) rewrites.push({ slot, text: r.text });
  }
  if (block) {
    // Only the blocking filters are reported: nothing was sent, so nothing was redacted.
    const blocking = new Map([...counts].filter(([f]) => f.action === 'block'));
    return { block: { source: block.filter.source, filter: block.filter.name, kind: block.filter.kind }, pipeline: pipelineEntries(blocking, stage) };
  }
  for (const w of rewrites) w.slot.set(w.text);
  return { block: null, pipeline: pipelineEntries(counts, stage) };
}
