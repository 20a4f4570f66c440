/**
 * The shipped catalog: the YAML files of src/catalog/ (in the config file's catalog format, docs/configuration.md),
 * read once and built in order by core/catalog-build.ts. They are found next to this module's folder, so the same code
 * reads src/catalog/ when run from source (tsx, vitest) and dist/catalog/ in the built package (`npm run build` copies
 * the files there).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { buildCatalog, CatalogError } from '../core/catalog-build.js';
import type { Catalog } from '../core/catalog-types.js';

/** The shipped catalog files, in the order they are applied (providers first: the others' endpoints name them). */
export const CATALOG_FILES = ['providers.yaml', 'chat.yaml', 'speech.yaml', 'video.yaml', 'embeddings.yaml', 'transcriptions.yaml', 'rerank.yaml', 'images.yaml'] as const;

/** The folder holding the shipped catalog files. */
export const CATALOG_DIR = fileURLToPath(new URL('../catalog/', import.meta.url));

const EMPTY: Catalog = { providers: [], models: [], endpoints: [] };

/** One catalog file's contents (a mapping); a file that cannot be read or parsed is a CatalogError naming it. */
export function readCatalogFile(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CatalogError([`${path}: ${(err as Error).message.split('\n')[0]}`]);
  }
  if (parsed == null) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new CatalogError([`${path}: must contain a mapping at the top level`]);
  return parsed as Record<string, unknown>;
}

/**
 * The catalog built from catalog files applied in order. Throws one CatalogError listing every file's problems, each
 * prefixed with the file's name (a file with problems is skipped, so the next ones are still checked).
 */
export function loadCatalogFiles(paths: readonly string[], base: Catalog = EMPTY): Catalog {
  const problems: string[] = [];
  let catalog = base;
  for (const path of paths) {
    const name = path.split(/[\\/]/).pop();
    try {
      catalog = buildCatalog(readCatalogFile(path), catalog);
    } catch (err) {
      if (!(err instanceof CatalogError)) throw err;
      problems.push(...err.problems.map((p) => (p.startsWith(path) ? p.replace(path, name ?? path) : `${name}: ${p}`)));
    }
  }
  if (problems.length > 0) throw new CatalogError(problems);
  return catalog;
}

/** The shipped catalog files' paths. */
export const shippedCatalogPaths = (dir: string = CATALOG_DIR): string[] => CATALOG_FILES.map((f) => join(dir, f));

let shipped: Catalog | undefined;

/** The catalog the gateway ships (a fresh copy: callers may mutate it). The files are read and checked once. */
export function shippedCatalog(): Catalog {
  shipped ??= loadCatalogFiles(shippedCatalogPaths());
  return structuredClone(shipped);
}
