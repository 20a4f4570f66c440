/**
 * The validator's shortcut for flat string values (http/plugins/validation.ts): headers, query strings and path
 * parameters made only of strings (or arrays of strings) skip the depth/number walks, which cannot find anything in
 * them; anything else still goes through the walks, which refuse what they refused before.
 */
import { describe, expect, it } from 'vitest';
import { onlyStrings } from '../../src/http/plugins/validation.js';
import { findUntrusted } from '../../src/core/untrusted.js';

describe('onlyStrings', () => {
  it('is true only for own values that are strings or arrays of strings', () => {
    expect(onlyStrings({ authorization: 'Bearer x', 'content-type': 'application/json' })).toBe(true);
    expect(onlyStrings({ tag: ['a', 'b'] })).toBe(true);
    expect(onlyStrings({})).toBe(true);
    expect(onlyStrings({ offset: 1e309 })).toBe(false);
    expect(onlyStrings({ offset: 3 })).toBe(false);
    expect(onlyStrings({ tag: ['a', 2] })).toBe(false);
    expect(onlyStrings({ nested: { a: 'b' } })).toBe(false);
    expect(onlyStrings({ v: null })).toBe(false);
    expect(onlyStrings(['a'])).toBe(false);
    expect(onlyStrings(null)).toBe(false);
  });

  it('agrees with the walk: where it is true, the walk without string checks finds nothing', () => {
    for (const data of [{ a: 'x\u0000' }, { a: ['\ud800', 'y'] }, { 'k\u0000': 'v' }]) {
      expect(onlyStrings(data)).toBe(true);
      expect(findUntrusted(data, { strings: false })).toBeNull();
    }
    expect(findUntrusted({ offset: Infinity }, { strings: false })).not.toBeNull();
  });
});
