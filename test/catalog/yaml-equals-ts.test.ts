/** The catalog built from the YAML files equals the one the TypeScript catalog built (before the TypeScript goes). */
import { describe, expect, it } from 'vitest';
import { shippedCatalog as tsCatalog } from '../../src/catalog/default-catalog.js';
import { shippedCatalog } from '../../src/services/shipped-catalog.js';

describe('YAML catalog', () => {
  it('builds exactly the catalog the TypeScript data built (same order, same exact price strings)', () => {
    const yaml = shippedCatalog();
    const ts = tsCatalog();
    expect(yaml.providers).toStrictEqual(ts.providers);
    expect(yaml.models).toStrictEqual(ts.models);
    expect(yaml.endpoints).toStrictEqual(ts.endpoints);
  });
});
