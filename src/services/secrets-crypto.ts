/**
 * Secrets at rest (docs/byok.md, "Encryption at rest"): AES-256-GCM keyed by `GATEWAY_ENCRYPTION_KEY`.
 *
 * A sealed secret is one string, `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts): the key id is the first
 * 8 hex characters of SHA-256("gateway-secret-key-id:" + key), so a blob names the key that sealed it without
 * revealing it. The 256-bit AES key is SHA-256 of the configured secret (a random string of at least 32 characters,
 * e.g. `openssl rand -base64 32`).
 *
 * Rotation: set the new secret in `GATEWAY_ENCRYPTION_KEY` and the old one(s) in `GATEWAY_ENCRYPTION_KEY_PREVIOUS`
 * (comma separated). `decryptSecret` opens blobs sealed by any of them; `encryptSecret` always seals with the
 * current one, and `needsReseal` tells which stored blobs to seal again (the BYOK service does so at start-up).
 * Once nothing is sealed with an old key, remove it from `GATEWAY_ENCRYPTION_KEY_PREVIOUS`.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';

interface Key {
  id: string;
  aes: Buffer;
}

function deriveKey(secret: string): Key {
  return {
    id: createHash('sha256').update(`gateway-secret-key-id:${secret}`).digest('hex').slice(0, 8),
    aes: createHash('sha256').update(secret).digest(),
  };
}

/** The secret is missing or a blob cannot be opened with any configured key. */
export class SecretsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsError';
  }
}

/** The keys of one gateway: the current one seals, every one opens. */
export class SecretKeyring {
  private readonly current: Key | null;
  private readonly byId = new Map<string, Key>();

  constructor(current: string | null, previous: readonly string[] = []) {
    this.current = current ? deriveKey(current) : null;
    for (const s of [...(current ? [current] : []), ...previous]) {
      const k = deriveKey(s);
      if (!this.byId.has(k.id)) this.byId.set(k.id, k);
    }
  }

  /** Whether secrets can be sealed (a current key is configured). */
  get enabled(): boolean {
    return this.current !== null;
  }

  encrypt(plain: string): string {
    if (!this.current) throw new SecretsError('GATEWAY_ENCRYPTION_KEY is not set: secrets cannot be stored encrypted');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.aes, iv);
    // The key id and version are authenticated too: a blob cannot be relabelled to another key.
    cipher.setAAD(Buffer.from(`${VERSION}.${this.current.id}`));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, this.current.id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  decrypt(blob: string): string {
    const parts = blob.split('.');
    if (parts.length !== 5 || parts[0] !== VERSION) throw new SecretsError('not a sealed secret');
    const [, id, iv, tag, ct] = parts;
    const key = this.byId.get(id);
    if (!key) throw new SecretsError(`sealed with key ${id}, which is neither GATEWAY_ENCRYPTION_KEY nor in GATEWAY_ENCRYPTION_KEY_PREVIOUS`);
    try {
      const d = createDecipheriv('aes-256-gcm', key.aes, Buffer.from(iv, 'base64url'));
      d.setAAD(Buffer.from(`${VERSION}.${id}`));
      d.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
    } catch {
      throw new SecretsError(`secret sealed with key ${id} failed authentication`);
    }
  }

  /** Whether a stored blob was sealed with an older key (seal it again with the current one). */
  needsReseal(blob: string): boolean {
    return this.current !== null && blob.split('.')[1] !== this.current.id;
  }
}

/** The keyring the module functions use: the gateway's (`configureSecrets`), else read from the environment. */
let configured: SecretKeyring | null = null;

export function keyringFromEnv(env: Record<string, string | undefined>): SecretKeyring {
  const previous = (env.GATEWAY_ENCRYPTION_KEY_PREVIOUS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return new SecretKeyring(env.GATEWAY_ENCRYPTION_KEY || null, previous);
}

/** Sets the keyring of `encryptSecret` / `decryptSecret` (the gateway does, from its configuration). */
export function configureSecrets(keyring: SecretKeyring): void {
  configured = keyring;
}

function keyring(): SecretKeyring {
  return (configured ??= keyringFromEnv(process.env));
}

/** Seals a secret with the current key (AES-256-GCM). Throws SecretsError without GATEWAY_ENCRYPTION_KEY. */
export function encryptSecret(plain: string): string {
  return keyring().encrypt(plain);
}

/** Opens a sealed secret with whichever configured key sealed it. Throws SecretsError otherwise. */
export function decryptSecret(blob: string): string {
  return keyring().decrypt(blob);
}

/** Whether secrets can be sealed here (GATEWAY_ENCRYPTION_KEY is configured). */
export function encryptionAvailable(): boolean {
  return keyring().enabled;
}
