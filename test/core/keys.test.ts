import { describe, expect, it } from 'vitest';
import { generateSecret, hashesEqual, hashSecret, labelFor } from '../../src/core/keys.js';

describe('key secrets', () => {
  it('hashes to lowercase hex SHA-256 and compares digests exactly', () => {
    const secret = generateSecret();
    const h = hashSecret(secret);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(hashesEqual(h, hashSecret(secret))).toBe(true);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === '0' ? '1' : '0') + s.slice(i + 1);
    expect(hashesEqual(h, flip(h, 0))).toBe(false);
    expect(hashesEqual(h, flip(h, 63))).toBe(false);
    expect(hashesEqual(h, h.slice(0, 63))).toBe(false);
    expect(hashesEqual(h, h.toUpperCase())).toBe(/[a-f]/.test(h) ? false : true);
    expect(labelFor(secret)).toMatch(/^sk-gw-v1-[0-9a-f]{3}\.\.\.[0-9a-f]{4}$/);
  });
});
