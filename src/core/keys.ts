/** API key secrets: generation, hashing and the masked label. */
import { hash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'sk-gw-v1-';

/** A new secret: the prefix and 32 random bytes (256 bits) in hex. */
export function generateSecret(): string {
  return KEY_PREFIX + randomBytes(32).toString('hex');
}

/** The key's identifier: lowercase hex SHA-256 of the whole secret. The secret itself is never stored. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex'); // one-shot: several times cheaper than createHash on the hot path
}

/**
 * Constant-time equality of two hex digests of the same length: every character is compared, whatever differs first
 * (an XOR accumulated over the whole string, without the two Buffers `timingSafeEqual` needs on every request).
 */
export function hashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Masked rendering shown in listings, e.g. `sk-gw-v1-0e6...1c96`. */
export function labelFor(secret: string): string {
  const body = secret.startsWith(KEY_PREFIX) ? secret.slice(KEY_PREFIX.length) : secret;
  const prefix = secret.startsWith(KEY_PREFIX) ? KEY_PREFIX : '';
  return `${prefix}${body.slice(0, 3)}...${body.slice(-4)}`;
}
