/**
 * Files (docs/files.md): workspace-scoped uploads of up to 100 MB, their type sniffed from the content
 * (core/file-types.ts), their bytes in the blob storage (local disk or S3-compatible, ./storage.ts), their rows in the
 * store; a quota per workspace; listed oldest first with a cursor; deleted with the workspace.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { MIME_EXTENSIONS, SNIFF_BYTES, sniffMime } from '../../core/file-types.js';
import { badRequest, forbidden, HttpError, notFound } from '../../core/errors.js';
import { isProviderStored, type FileRow, type ProviderStorage } from '../../store/files.js';
import type { Store } from '../../store/types.js';
import type { BlobStorage } from './storage.js';

export const MAX_FILE_BYTES = 100 * 1024 * 1024;
/** `gw_file_` + 24 characters, the first 9 the creation time: ids sort by creation. */
export const FILE_ID = /^gw_file_[0-9A-Za-z]{24}$/;
/** A provider's file id (OpenAI `file-…`, Anthropic `file_…`): a file stored on its Files API through the gateway. */
export const PROVIDER_FILE_ID = /^file[-_][0-9A-Za-z_-]{1,200}$/;

/** Deletes a file on the provider's Files API with the credential that stored it (./provider-upload.ts). */
export type ProviderFileDeleter = (provider: ProviderStorage, fileId: string, credentialId: string) => Promise<'deleted' | 'gone'>;

const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export function newFileId(now: number): string {
  let t = '';
  for (let n = now; t.length < 9; n = Math.floor(n / 62)) t = B62[n % 62] + t;
  let r = '';
  for (const b of randomBytes(15)) r += B62[b % 62];
  return `gw_file_${t}${r}`;
}

/** An upload spooled to disk: its size, hash and first bytes are known; `path` is removed once stored or refused. */
export interface Spooled {
  path: string;
  size: number;
  sha256: string;
  head: Buffer;
  /** Bytes beyond MAX_FILE_BYTES were sent (and discarded). */
  truncated: boolean;
}

export class FileService {
  private readonly incoming: string;
  /** Set once BYOK is up (gateway.ts): deletes files stored on a provider there too. */
  deleteOnProvider: ProviderFileDeleter | null = null;

  constructor(
    private readonly deps: { store: Store; storage: BlobStorage; dir: string; quotaBytes: number; now: () => number; log?: { warn(obj: object, msg: string): void } },
  ) {
    this.incoming = join(deps.dir, '.incoming');
  }

  get storage(): BlobStorage {
    return this.deps.storage;
  }

  /**
   * Writes an upload stream to a spool file as it arrives (never whole in memory), hashing it and keeping its first
   * bytes for the type sniffer. Stops writing past MAX_FILE_BYTES (`truncated`).
   */
  async spool(stream: Readable): Promise<Spooled> {
    await mkdir(this.incoming, { recursive: true });
    const path = join(this.incoming, randomBytes(12).toString('hex'));
    const hash = createHash('sha256');
    const head: Buffer[] = [];
    let headLen = 0;
    let size = 0;
    let truncated = false;
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        if (size + chunk.length > MAX_FILE_BYTES) {
          truncated = true;
          chunk = chunk.subarray(0, Math.max(0, MAX_FILE_BYTES - size));
        }
        size += chunk.length;
        hash.update(chunk);
        if (headLen < SNIFF_BYTES && chunk.length > 0) {
          const part = chunk.subarray(0, SNIFF_BYTES - headLen);
          head.push(part);
          headLen += part.length;
        }
        done(null, chunk);
      },
    });
    try {
      await pipeline(stream, tap, createWriteStream(path));
    } catch (err) {
      await rm(path, { force: true });
      throw err;
    }
    return { path, size, sha256: hash.digest('hex'), head: Buffer.concat(head), truncated };
  }

  /** Removes a spool file that was not stored (a refused upload). */
  async discard(s: Spooled): Promise<void> {
    await rm(s.path, { force: true });
  }

  /** Stores a spooled upload in a workspace: 413 past 100 MB, 400 empty or of an unaccepted type, 403 over the quota. */
  async create(workspaceId: string, s: Spooled, filename: string | null, purpose: string | null): Promise<FileRow> {
    try {
      if (s.truncated) throw new HttpError(413, `file: larger than the ${MAX_FILE_BYTES / 1024 / 1024} MB limit`, { field: 'file' });
      if (s.size === 0) throw badRequest('file: the file is empty', { field: 'file' });
      const mime = sniffMime(s.head, s.size <= SNIFF_BYTES);
      if (!mime) {
        throw badRequest('file: unsupported file type (from its content): upload a PDF, a PNG/JPEG/GIF/WebP image, a DOCX/XLSX/PPTX document, MP3/WAV/FLAC/OGG audio or UTF-8 text', { field: 'file' });
      }
      // A first check before the bytes are stored (cheap refusal); the insert below checks again, atomically.
      const used = await this.deps.store.workspaceFileBytes(workspaceId);
      if (used + s.size > this.deps.quotaBytes) throw this.overQuota(used, s.size);
      const id = newFileId(this.deps.now());
      const row: FileRow = {
        id,
        workspace_id: workspaceId,
        filename: cleanName(filename) ?? `file.${MIME_EXTENSIONS[mime] ?? 'bin'}`,
        mime_type: mime,
        size_bytes: s.size,
        sha256: s.sha256,
        storage: this.deps.storage.kind,
        storage_key: `${workspaceId}/${id}`,
        purpose,
        created_at: new Date(this.deps.now()).toISOString(),
      };
      await this.deps.storage.put(row.storage_key, s.path, s.size, mime);
      let r: { inserted: boolean; used: number };
      try {
        r = await this.deps.store.insertFile(row, this.deps.quotaBytes);
      } catch (err) {
        await this.deps.storage.delete(row.storage_key).catch(() => undefined);
        throw err;
      }
      // Concurrent uploads: one that would pass the quota once the others are in is refused, its bytes removed.
      if (!r.inserted) {
        await this.deps.storage.delete(row.storage_key).catch(() => undefined);
        throw this.overQuota(r.used, s.size);
      }
      return row;
    } finally {
      await this.discard(s);
    }
  }

  private overQuota(used: number, size: number): HttpError {
    return forbidden(`The workspace's file quota (${this.deps.quotaBytes} bytes) would be exceeded: ${used} bytes stored, this file has ${size}`, { error_type: 'quota_exceeded', field: 'file' });
  }

  /** A page, oldest first: `limit` rows after `after`, and whether more follow. */
  async list(workspaceId: string, after: string | null, limit: number): Promise<{ rows: FileRow[]; hasMore: boolean }> {
    const rows = await this.deps.store.listFiles(workspaceId, after, limit);
    return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  /**
   * Records a file the provider's Files API stored (`POST /files?provider=…`): its id is the provider's, its key the
   * BYOK credential's id; outside the quota. Should the record fail, the provider's copy is deleted again.
   */
  async recordProviderFile(workspaceId: string, provider: ProviderStorage, fileId: string, credentialId: string, s: Spooled, filename: string | null, purpose: string | null): Promise<FileRow> {
    const row: FileRow = {
      id: fileId,
      workspace_id: workspaceId,
      filename: cleanName(filename) ?? 'file',
      mime_type: sniffMime(s.head, s.size <= SNIFF_BYTES) ?? 'application/octet-stream',
      size_bytes: s.size,
      sha256: s.sha256,
      storage: provider,
      storage_key: credentialId,
      purpose: provider === 'openai' ? (purpose ?? 'user_data') : null,
      created_at: new Date(this.deps.now()).toISOString(),
    };
    try {
      await this.deps.store.insertFile(row, Number.POSITIVE_INFINITY);
    } catch (err) {
      await this.deleteOnProvider?.(provider, fileId, credentialId).catch(() => undefined);
      throw err;
    }
    return row;
  }

  async get(workspaceId: string, id: string): Promise<FileRow> {
    const row = FILE_ID.test(id) || PROVIDER_FILE_ID.test(id) ? await this.deps.store.getFile(workspaceId, id) : null;
    if (!row) throw notFound(`File ${id} not found`, { field: 'file_id' });
    return row;
  }

  async open(workspaceId: string, id: string): Promise<{ row: FileRow; body: Readable }> {
    const row = await this.get(workspaceId, id);
    if (isProviderStored(row)) throw badRequest(`file_id: ${id} is stored on ${row.storage}'s Files API; the gateway does not keep its bytes`, { field: 'file_id' });
    return { row, body: await this.deps.storage.open(row.storage_key) };
  }

  /**
   * Deletes a file: its row and bytes, or — stored on a provider — the provider's copy first (with the credential that
   * stored it; the row stays when the provider refuses or cannot be reached), then the row. Says whether the provider
   * deleted it (`gone`: it no longer had it, or the credential was deleted).
   */
  async delete(workspaceId: string, id: string): Promise<{ provider: 'deleted' | 'gone' | null }> {
    const row = await this.get(workspaceId, id);
    const provider = isProviderStored(row) ? await this.providerDelete(row) : null;
    // The row first: a file is gone for clients even if removing its bytes fails (they are then only orphaned).
    if (!(await this.deps.store.deleteFile(workspaceId, id))) throw notFound(`File ${id} not found`, { field: 'file_id' });
    if (provider === null) await this.deps.storage.delete(row.storage_key);
    return { provider };
  }

  private providerDelete(row: FileRow & { storage: ProviderStorage }): Promise<'deleted' | 'gone'> {
    if (!this.deleteOnProvider) throw new HttpError(503, `Files on ${row.storage} cannot be deleted: the provider files service is not set up`);
    return this.deleteOnProvider(row.storage, row.id, row.storage_key);
  }

  /** Every file of a deleted workspace: rows and bytes, and the copies on providers (best effort: a failure is logged). */
  async deleteWorkspace(workspaceId: string): Promise<number> {
    let n = 0;
    for (;;) {
      const { rows } = await this.list(workspaceId, null, 500);
      if (rows.length === 0) return n;
      for (const r of rows) {
        if (isProviderStored(r)) {
          await this.providerDelete(r).catch((err: Error) => this.deps.log?.warn({ file: r.id, provider: r.storage, err: err.message }, 'files: a deleted workspace\'s file could not be deleted on the provider'));
        }
        await this.deps.store.deleteFile(workspaceId, r.id);
        if (!isProviderStored(r)) await this.deps.storage.delete(r.storage_key);
        n++;
      }
    }
  }

}

/** A client's file name, without any path and control characters; null when nothing is left. */
function cleanName(name: string | null): string | null {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return clean === '' ? null : clean;
}
