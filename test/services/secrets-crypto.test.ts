/** Secrets at rest (services/secrets-crypto.ts): AES-256-GCM, tamper-evident, rotation through previous keys. */
import { describe, expect, it } from 'vitest';
import { SecretKeyring, SecretsError } from '../../src/services/secrets-crypto.js';

const A = 'unit-test-encryption-key-A-0123456789abcdef';
const B = 'unit-test-encryption-key-B-fedcba9876543210';

describe('SecretKeyring', () => {
  it('seals with a fresh IV each time and opens what it sealed; the plain text is not in the blob', () => {
    const k = new SecretKeyring(A);
    const x = k.encrypt('sk-secret-value');
    const y = k.encrypt('sk-secret-value');
    expect(x).not.toBe(y);
    expect(x).not.toContain('sk-secret');
    expect(x).toMatch(/^v1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(k.decrypt(x)).toBe('sk-secret-value');
    expect(k.decrypt(k.encrypt(''))).toBe('');
    expect(k.decrypt(k.encrypt('ünïcødé ✓'))).toBe('ünïcødé ✓');
  });

  it('refuses a tampered blob, a relabelled key id and an unknown key', () => {
    const k = new SecretKeyring(A);
    const parts = k.encrypt('sk-secret-value').split('.');
    const ct = Buffer.from(parts[4], 'base64url');
    ct[0] ^= 1;
    expect(() => k.decrypt([...parts.slice(0, 4), ct.toString('base64url')].join('.'))).toThrow(SecretsError);
    expect(() => new SecretKeyring(B).decrypt(parts.join('.'))).toThrow(/neither GATEWAY_ENCRYPTION_KEY nor/);
    const bId = new SecretKeyring(B).encrypt('x').split('.')[1];
    expect(() => new SecretKeyring(B, [A]).decrypt([parts[0], bId, ...parts.slice(2)].join('.'))).toThrow(SecretsError);
    expect(() => k.decrypt('not-a-blob')).toThrow(SecretsError);
  });

  it('rotation: previous keys open, the current one seals, needsReseal tells which blobs to seal again', () => {
    const old = new SecretKeyring(A).encrypt('sk-1');
    const k = new SecretKeyring(B, [A]);
    expect(k.decrypt(old)).toBe('sk-1');
    expect(k.needsReseal(old)).toBe(true);
    const resealed = k.encrypt(k.decrypt(old));
    expect(k.needsReseal(resealed)).toBe(false);
    expect(new SecretKeyring(B).decrypt(resealed)).toBe('sk-1');
  });

  it('without a current key nothing is sealed', () => {
    const k = new SecretKeyring(null);
    expect(k.enabled).toBe(false);
    expect(() => k.encrypt('x')).toThrow(/GATEWAY_ENCRYPTION_KEY is not set/);
  });
});
