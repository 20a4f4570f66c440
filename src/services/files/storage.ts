/**
 * Where file bytes live (docs/files.md): a local directory (GATEWAY_FILES_DIR, the default) or an S3-compatible bucket
 * (GATEWAY_FILES_S3_BUCKET, through AWS's S3 client; any S3-compatible server with GATEWAY_FILES_S3_ENDPOINT). Uploads
 * are first spooled to a file under `<dir>/.incoming` (so their size, hash and type are known without holding them in
 * memory), then moved (local) or sent (S3) under the object key.
 *
 * AWS's client is loaded only when an S3Storage is made: it is the largest package the gateway depends on, and a
 * gateway without S3 storage should not keep it in its heap (every full collection marks what is loaded; see
 * docs/benchmark.md, "Megabyte bodies: a smaller heap to mark").
 */
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { FilesConfig } from '../../config.js';

export interface BlobStorage {
  readonly kind: 'local' | 's3';
  /** Stores the spooled file at `path` (consumed: moved or deleted) under `key`. */
  put(key: string, path: string, size: number, mime: string): Promise<void>;
  /** The bytes, as a stream. */
  open(key: string): Promise<Readable>;
  /** The bytes, in memory (for an upstream that takes the file inline). */
  read(key: string): Promise<Buffer>;
  /** Removes the object; a missing one is not an error. */
  delete(key: string): Promise<void>;
}

/** Object keys are `<workspace>/<file id>`: both are checked to be path-safe before they get here. */
const SAFE_KEY = /^[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+$/;
function checkKey(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error(`unsafe storage key ${JSON.stringify(key)}`);
  return key;
}

export class LocalStorage implements BlobStorage {
  readonly kind = 'local' as const;
  constructor(private readonly dir: string) {}

  private path(key: string): string {
    return join(this.dir, checkKey(key));
  }

  async put(key: string, path: string): Promise<void> {
    const to = this.path(key);
    await mkdir(dirname(to), { recursive: true });
    await rename(path, to);
  }

  async open(key: string): Promise<Readable> {
    const p = this.path(key);
    await stat(p); // a missing object fails here, not mid-response
    return createReadStream(p);
  }

  read(key: string): Promise<Buffer> {
    return readFile(this.path(key));
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}

const requireLazily = createRequire(import.meta.url);
type S3Module = typeof import('@aws-sdk/client-s3');

export class S3Storage implements BlobStorage {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly s3: S3Module;

  constructor(private readonly cfg: NonNullable<FilesConfig['s3']>) {
    // Credentials from the usual AWS sources (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, a role).
    // Checksums only where S3 requires them: a streamed upload then goes as one plain PUT, which every S3-compatible server takes.
    this.s3 = requireLazily('@aws-sdk/client-s3') as S3Module;
    this.client = new this.s3.S3Client({ region: cfg.region, endpoint: cfg.endpoint ?? undefined, forcePathStyle: cfg.forcePathStyle, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  }

  private key(key: string): string {
    return `${this.cfg.prefix}${checkKey(key)}`;
  }

  async put(key: string, path: string, size: number, mime: string): Promise<void> {
    try {
      await this.client.send(new this.s3.PutObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(key), Body: createReadStream(path), ContentLength: size, ContentType: mime }));
    } finally {
      await rm(path, { force: true });
    }
  }

  async open(key: string): Promise<Readable> {
    const out = await this.client.send(new this.s3.GetObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(key) }));
    return out.Body as Readable;
  }

  async read(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const c of await this.open(key)) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new this.s3.DeleteObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(key) }));
  }

  close(): void {
    this.client.destroy();
  }
}

export function blobStorage(cfg: FilesConfig): BlobStorage {
  return cfg.s3 ? new S3Storage(cfg.s3) : new LocalStorage(cfg.dir);
}
