/** services/secrets-crypto.ts: AES-256-GCM round trip, a fresh IV each time, tampering and another key refused. */
import { afterEach, describe, expect, it } from 'vitest';
import { decryptSecret, encryptionAvailable, encryptSecret, EncryptionKeyMissing } from '../../src/services/secrets-crypto.js';

const saved = process.env.GATEWAY_ENCRYPTION_KEY;
afterEach(() => {
  if (saved === undefined) delete process.env.GATEWAY_ENCRYPTION_KEY;
  else process.env.GATEWAY_ENCRYPTION_KEY = saved;
});

describe('secrets-crypto', () => {
  it('round-trips, never repeats a blob, and hides the plain text', () => {
    process.env.GATEWAY_ENCRYPTION_KEY = 'k'.repeat(40);
    const a = encryptSecret('sk-live-123 ünïcode');
    const b = encryptSecret('sk-live-123 ünïcode');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(a).not.toContain('sk-live');
    expect(decryptSecret(a)).toBe('sk-live-123 ünïcode');
  });

  it('refuses a tampered blob and another key', () => {
    process.env.GATEWAY_ENCRYPTION_KEY = 'k'.repeat(40);
    const blob = encryptSecret('secret');
    const parts = blob.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0]! ^= 1;
    expect(() => decryptSecret([parts[0], parts[1], parts[2], body.toString('base64url')].join('.'))).toThrow();
    process.env.GATEWAY_ENCRYPTION_KEY = 'j'.repeat(40);
    expect(() => decryptSecret(blob)).toThrow();
  });

  it('needs GATEWAY_ENCRYPTION_KEY of at least 32 characters', () => {
    process.env.GATEWAY_ENCRYPTION_KEY = 'short';
    expect(encryptionAvailable()).toBe(false);
    expect(() => encryptSecret('x')).toThrow(EncryptionKeyMissing);
  });
});
