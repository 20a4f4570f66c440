/**
 * Secrets encrypted at rest (AES-256-GCM), keyed by GATEWAY_ENCRYPTION_KEY: any string of at least 32 characters (a
 * random one: `openssl rand -base64 32`), turned into the AES key by SHA-256. A blob is `v1.<iv>.<tag>.<ciphertext>`
 * (base64url): a fresh 12-byte IV each time, the tag authenticating the ciphertext. Decrypting with another key, or a
 * blob altered in any way, throws.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export class EncryptionKeyMissing extends Error {
  constructor() {
    super('GATEWAY_ENCRYPTION_KEY is not set: secrets cannot be stored (set it to a random string of at least 32 characters)');
    this.name = 'EncryptionKeyMissing';
  }
}

let cached: { raw: string; key: Buffer } | null = null;

function key(): Buffer {
  const raw = process.env.GATEWAY_ENCRYPTION_KEY ?? '';
  if (raw.length < 32) throw new EncryptionKeyMissing();
  if (cached?.raw !== raw) cached = { raw, key: createHash('sha256').update(raw, 'utf8').digest() };
  return cached.key;
}

/** Whether secrets can be encrypted (GATEWAY_ENCRYPTION_KEY is set). */
export function encryptionAvailable(): boolean {
  return (process.env.GATEWAY_ENCRYPTION_KEY ?? '').length >= 32;
}

export function encryptSecret(plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key(), iv);
  const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return `v1.${iv.toString('base64url')}.${c.getAuthTag().toString('base64url')}.${body.toString('base64url')}`;
}

export function decryptSecret(blob: string): string {
  const [v, iv, tag, body] = blob.split('.');
  if (v !== 'v1' || iv === undefined || tag === undefined || body === undefined) throw new Error('not an encrypted secret');
  const d = createDecipheriv('aes-256-gcm', key(), Buffer.from(iv, 'base64url'));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString('utf8');
}
