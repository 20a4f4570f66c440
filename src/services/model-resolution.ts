/**
 * The requested models of an inference request as catalog ids (src/core/model-aliases.ts; docs/agents.md, "Model
 * ids"): bare and dated provider ids, model aliases and the organization's alias map resolve; an id that does not is
 * refused with a 404 naming the candidates (ambiguous) or the closest ids (unknown). With
 * `GATEWAY_UNKNOWN_MODEL_FALLBACK=true`, an unknown first model is replaced by the workspace's `default_text_model`.
 */
import { unresolvedMessage, type Resolution } from '../core/model-aliases.js';
import { HttpError } from '../core/errors.js';
import type { CatalogService } from './catalog.js';

export interface ResolvedModels {
  /** Catalog ids, in request order (ids that did not resolve are kept as sent, for planRoute to report). */
  models: string[];
  /** Set when the workspace default replaced an unknown model. */
  fallbackFrom?: string;
  /** When no id resolved: the 404 message and candidates of the first (routing reports it, with its record). */
  problem?: { message: string; suggestions: string[]; ambiguous: boolean };
}

/** The 404 of a model id that does not resolve, with its candidates in `metadata.suggestions`. */
export function unresolvedError(requested: string, r: Exclude<Resolution, { kind: 'found' }>): HttpError {
  const p = problemOf(requested, r);
  return new HttpError(404, p.message, { error_type: 'not_found', excluded_by: ['model_not_found'], suggestions: p.suggestions, ambiguous: p.ambiguous });
}

function problemOf(requested: string, r: Exclude<Resolution, { kind: 'found' }>): NonNullable<ResolvedModels['problem']> {
  return { message: unresolvedMessage(requested, r), suggestions: r.kind === 'ambiguous' ? r.candidates : r.suggestions, ambiguous: r.kind === 'ambiguous' };
}

/**
 * Resolves `ids` (variants already split off). Unresolved ids stay as sent (routing refuses them with a 404 and a
 * generation record, as before); when none resolves and no fallback applies, `problem` says why the first did not.
 */
export function resolveRequestedModels(
  catalog: CatalogService,
  ids: string[],
  orgAliases: Readonly<Record<string, string>> | null | undefined,
  fallback: { enabled: boolean; model: string | null | undefined },
): ResolvedModels {
  const results = ids.map((id) => ({ id, r: catalog.resolve(id, orgAliases) }));
  const models = results.map(({ id, r }) => (r.kind === 'found' ? r.id : id));
  if (results.some(({ r }) => r.kind === 'found')) return { models };
  const first = results[0];
  if (!first) return { models };
  if (fallback.enabled && fallback.model && first.r.kind === 'unknown') {
    const r = catalog.resolve(fallback.model, orgAliases);
    if (r.kind === 'found') return { models: [r.id], fallbackFrom: first.id };
  }
  return { models, problem: problemOf(first.id, first.r as Exclude<Resolution, { kind: 'found' }>) };
}
