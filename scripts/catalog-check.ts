/**
 * `npm run catalog:check [-- --compare models.json] [--dir <folder>]`: validates the shipped catalog files
 * (src/catalog/*.yaml) against the catalog schema and, given a JSON export of the hosted router's `GET /models`
 * (`{ data: [{ id, pricing: { prompt, completion, … } }] }`, prices as decimal strings per token), prints which shipped
 * prices differ and which models are missing on either side. Prices are refreshed by editing the YAML and reviewing
 * the diff, never at start-up. Exit status 1 when a file is invalid or the export unreadable, else 0.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Type } from '@sinclair/typebox';
import { CatalogError } from '../src/core/catalog-build.js';
import { DECIMAL, PRICE_FIELDS, schemaProblems } from '../src/core/catalog-schema.js';
import type { Catalog, EndpointDef } from '../src/core/catalog-types.js';
import { CATALOG_DIR, CATALOG_FILES, loadCatalogFiles } from '../src/services/shipped-catalog.js';

/** The part of a hosted `/models` export compared here (other fields are ignored). */
const HostedExport = Type.Object({
  data: Type.Array(
    Type.Object({
      id: Type.String(),
      pricing: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Null()]))),
    }),
    { 'x-rule': 'must be a list of models, each with an id and its pricing' },
  ),
});

type HostedPricing = Record<string, string | number | null>;
export interface PriceDiff {
  model: string;
  tag: string;
  field: string;
  shipped: string;
  hosted: string;
}
export interface Comparison {
  diffs: PriceDiff[];
  onlyShipped: string[];
  /** Hosted models of authors the catalog ships (`openai/…`, `anthropic/…`): candidates to add. */
  onlyHosted: string[];
  /** Hosted models of other authors, not listed. */
  otherAuthors: number;
}

/** A plain decimal without insignificant zeros ("0.40" → "0.4", "00" → "0"); null when not a plain decimal. */
function canonical(v: string | number | null | undefined): string | null {
  const s = typeof v === 'number' ? String(v) : v;
  if (typeof s !== 'string' || !DECIMAL.test(s)) return null;
  const [int, frac = ''] = s.split('.');
  const f = frac.replace(/0+$/, '');
  return `${int.replace(/^0+(?=\d)/, '')}${f ? `.${f}` : ''}`;
}

/** A price as the gateway bills it: absent = 0, except reasoning tokens, billed at the completion price when absent. */
function effective(p: Record<string, string | number | null | undefined>, field: string): string | null {
  const v = p[field] ?? (field === 'internal_reasoning' ? p.completion : '0');
  return canonical(v);
}

/**
 * Compares each shipped model's reference endpoint — the first endpoint the catalog lists for it — with the hosted
 * model's pricing, field by field (the price fields the gateway bills), exactly.
 */
export function compareWithHosted(catalog: Catalog, hosted: Array<{ id: string; pricing?: HostedPricing }>): Comparison {
  const hostedById = new Map(hosted.map((m) => [m.id, m]));
  const reference = new Map<string, EndpointDef>();
  for (const e of catalog.endpoints) if (!reference.has(e.model) && e.pricing) reference.set(e.model, e);
  const diffs: PriceDiff[] = [];
  const onlyShipped: string[] = [];
  for (const m of catalog.models) {
    const h = hostedById.get(m.id);
    const e = reference.get(m.id);
    if (!h) {
      onlyShipped.push(m.id);
      continue;
    }
    if (!e?.pricing || !h.pricing) continue;
    const shipped = e.pricing as unknown as Record<string, string | number | undefined>;
    for (const field of PRICE_FIELDS) {
      if (shipped[field] === undefined && h.pricing[field] === undefined) continue;
      const [a, b] = [effective(shipped, field), effective(h.pricing, field)];
      if (a !== null && a === b) continue;
      diffs.push({ model: m.id, tag: e.tag, field, shipped: String(shipped[field] ?? '-'), hosted: String(h.pricing[field] ?? '-') });
    }
  }
  const shippedIds = new Set(catalog.models.map((m) => m.id));
  const authors = new Set(catalog.models.map((m) => m.id.split('/')[0]));
  const missing = hosted.filter((m) => !shippedIds.has(m.id));
  const onlyHosted = missing.filter((m) => authors.has(m.id.split('/')[0])).map((m) => m.id);
  return { diffs, onlyShipped, onlyHosted, otherAuthors: missing.length - onlyHosted.length };
}

/** Rows as aligned columns. */
function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => `  ${r.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd());
}

function readHosted(path: string): Array<{ id: string; pricing?: HostedPricing }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CatalogError([`${path}: ${(err as Error).message.split('\n')[0]}`]);
  }
  const problems = schemaProblems(HostedExport, parsed);
  if (problems.length > 0) throw new CatalogError(problems.map((p) => `${path}: ${p}`));
  return (parsed as { data: Array<{ id: string; pricing?: HostedPricing }> }).data;
}

function report(c: Comparison, source: string, out: (line: string) => void): void {
  out(c.diffs.length ? `\nPrices that differ from ${source} (${c.diffs.length}):` : `\nNo shipped price differs from ${source}.`);
  if (c.diffs.length) for (const line of table([['model', 'endpoint', 'field', 'shipped', 'hosted'], ...c.diffs.map((d) => [d.model, d.tag, d.field, d.shipped, d.hosted])])) out(line);
  out(`\nShipped models missing from ${source} (${c.onlyShipped.length})${c.onlyShipped.length ? ':' : '.'}`);
  for (const id of c.onlyShipped) out(`  ${id}`);
  out(`\nModels of the shipped authors missing from the catalog (${c.onlyHosted.length})${c.onlyHosted.length ? ':' : '.'}`);
  for (const id of c.onlyHosted) out(`  ${id}`);
  if (c.otherAuthors > 0) out(`(${c.otherAuthors} hosted models of other authors not listed)`);
}

/** Runs the check; returns the exit status. */
export function runCatalogCheck(args: readonly string[], out: (line: string) => void = console.log): number {
  const opt = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const dir = opt('--dir') ?? CATALOG_DIR;
  const compare = opt('--compare');
  if ((args.includes('--compare') && !compare) || (args.includes('--dir') && !opt('--dir'))) {
    out('usage: npm run catalog:check [-- --compare <models.json>] [--dir <catalog folder>]');
    return 1;
  }
  try {
    const catalog = loadCatalogFiles(CATALOG_FILES.map((f) => join(dir, f)));
    out(`Catalog files valid: ${CATALOG_FILES.join(', ')} (${catalog.providers.length} providers, ${catalog.models.length} models, ${catalog.endpoints.length} endpoints).`);
    if (compare) report(compareWithHosted(catalog, readHosted(compare)), compare, out);
    return 0;
  } catch (err) {
    if (!(err instanceof CatalogError)) throw err;
    out(`Invalid (${err.problems.length}):`);
    for (const p of err.problems) out(`  - ${p}`);
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = runCatalogCheck(process.argv.slice(2));
