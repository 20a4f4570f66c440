/** The shipped catalog files, one at a time: the providers plus one file's models and endpoints. */
import { join } from 'node:path';
import type { Catalog } from '../../src/core/catalog-types.js';
import { CATALOG_DIR, loadCatalogFiles } from '../../src/services/shipped-catalog.js';

const read = new Map<string, Catalog>();

/** `providers.yaml` and `name`'s models and endpoints (e.g. `chat.yaml`: the chat catalog); a fresh copy. */
export function shippedFile(name: string): Catalog {
  if (!read.has(name)) read.set(name, loadCatalogFiles([join(CATALOG_DIR, 'providers.yaml'), join(CATALOG_DIR, name)]));
  return structuredClone(read.get(name)!);
}
