/**
 * Model ids as clients send them (docs/agents.md, "Model ids"). Coding agents and SDKs send the provider's own ids
 * (`claude-sonnet-4-5-20250929`, `gpt-5`, `gemini-2.5-pro`) where the gateway's catalog has `author/slug` ids
 * (`anthropic/claude-sonnet-4.5`). `resolveModelId` maps one to the other, deterministically, in this order:
 *
 * 1. a catalog id, exactly;
 * 2. the organization's alias map (`/organization/settings` `model_aliases`), exactly (case-insensitive);
 * 3. a model's own `aliases` (config file and shipped catalog), exactly (case-insensitive);
 * 4. the normalized form of the id matched against the normalized slugs of every model (its id's slug, its canonical
 *    slug's and its aliases): lower case, an `author/` prefix and a `@…`, `-latest` or versioned (`…5-v1:0`) suffix dropped, a date
 *    suffix (`-20250929`, `-2025-09-29`) dropped, and `-` between two digits read as `.` (`4-5` → `4.5`).
 *
 * A step that finds two or more models is ambiguous: the id is refused with the candidates (never a guess). An id no
 * step finds is unknown: it is refused with the closest catalog ids. Pure; no I/O.
 */

/** What the resolver needs of a catalog model. */
export interface AliasModel {
  id: string;
  canonical_slug?: string;
  aliases?: string[];
}

export interface AliasIndex {
  ids: Set<string>;
  /** Lower-cased explicit alias → model ids. */
  aliases: Map<string, Set<string>>;
  /** Normalized key → model ids. */
  normalized: Map<string, Set<string>>;
}

export type Resolution =
  | { kind: 'found'; id: string; via: 'id' | 'org_alias' | 'alias' | 'normalized' }
  | { kind: 'ambiguous'; candidates: string[] }
  | { kind: 'unknown'; suggestions: string[] };

const DATE_SUFFIX = /-(?:\d{8}|\d{4}-\d{2}-\d{2})$/;

/** The normalized form of a model id or slug (step 4 above). */
export function normalizeModelId(raw: string): string {
  let s = raw.trim().toLowerCase();
  const slash = s.lastIndexOf('/');
  if (slash >= 0) s = s.slice(slash + 1);
  s = s.replace(/@.*$/, '');
  s = s.replace(/(\d)-v\d+(?::\d+)?$/, '$1').replace(/-latest$/, '');
  s = s.replace(DATE_SUFFIX, '');
  s = s.replace(/(\d)-(?=\d)/g, '$1.');
  return s;
}

function add(map: Map<string, Set<string>>, key: string, id: string): void {
  if (key === '') return;
  const set = map.get(key);
  if (set) set.add(id);
  else map.set(key, new Set([id]));
}

/** The lookup tables of a catalog's models (built once per catalog). */
export function buildAliasIndex(models: readonly AliasModel[]): AliasIndex {
  const index: AliasIndex = { ids: new Set(), aliases: new Map(), normalized: new Map() };
  for (const m of models) {
    index.ids.add(m.id);
    add(index.normalized, normalizeModelId(m.id), m.id);
    if (m.canonical_slug) add(index.normalized, normalizeModelId(m.canonical_slug), m.id);
    for (const a of m.aliases ?? []) {
      add(index.aliases, a.trim().toLowerCase(), m.id);
      add(index.normalized, normalizeModelId(a), m.id);
    }
  }
  return index;
}

/** Resolves a requested model id (without its `:variant`) to one catalog id, or says why it cannot. */
export function resolveModelId(requested: string, index: AliasIndex, orgAliases?: Readonly<Record<string, string>> | null): Resolution {
  if (index.ids.has(requested)) return { kind: 'found', id: requested, via: 'id' };
  const lower = requested.trim().toLowerCase();
  if (orgAliases) {
    for (const [alias, target] of Object.entries(orgAliases)) {
      if (alias.trim().toLowerCase() !== lower) continue;
      // An organization alias names a catalog id, or (leniently) anything the catalog's own rules resolve.
      if (index.ids.has(target)) return { kind: 'found', id: target, via: 'org_alias' };
      const inner = resolveModelId(target, index, null);
      return inner.kind === 'found' ? { ...inner, via: 'org_alias' } : inner;
    }
  }
  const byAlias = index.aliases.get(lower);
  if (byAlias) return pick(byAlias, 'alias');
  const byKey = index.normalized.get(normalizeModelId(requested));
  if (byKey) return pick(byKey, 'normalized');
  return { kind: 'unknown', suggestions: closeMatches(requested, index) };
}

function pick(ids: Set<string>, via: 'alias' | 'normalized'): Resolution {
  if (ids.size === 1) return { kind: 'found', id: [...ids][0], via };
  return { kind: 'ambiguous', candidates: [...ids].sort() };
}

/** Levenshtein distance (small strings; two rows). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** Up to `limit` catalog ids closest to the request: by edit distance of normalized keys, ties by id. */
export function closeMatches(requested: string, index: AliasIndex, limit = 5): string[] {
  const want = normalizeModelId(requested);
  if (want === '') return [];
  const best = new Map<string, number>();
  for (const [key, ids] of index.normalized) {
    const d = key.includes(want) || want.includes(key) ? Math.abs(key.length - want.length) / 2 : editDistance(want, key);
    for (const id of ids) best.set(id, Math.min(best.get(id) ?? Infinity, d));
  }
  const cutoff = Math.max(2, Math.floor(want.length / 3));
  return [...best.entries()]
    .filter(([, d]) => d <= cutoff)
    .sort((x, y) => x[1] - y[1] || (x[0] < y[0] ? -1 : 1))
    .slice(0, limit)
    .map(([id]) => id);
}

/** The 404 message of an id that does not resolve (ambiguous or unknown), naming the candidates. */
export function unresolvedMessage(requested: string, r: Exclude<Resolution, { kind: 'found' }>): string {
  if (r.kind === 'ambiguous') return `${requested} is ambiguous: it matches ${r.candidates.join(', ')}; send one of these model IDs`;
  return r.suggestions.length > 0 ? `${requested} is not a valid model ID; did you mean ${r.suggestions.join(', ')}?` : `${requested} is not a valid model ID`;
}
