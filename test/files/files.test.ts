/**
 * Files end to end (docs/files.md), on SQLite and PostgreSQL: upload (multipart, through HTTP and the openai SDK's
 * files.create), type sniffed from the content, list with cursors, metadata, download, delete; workspace scoping for
 * inference and management keys; refusals (empty, unknown type, over 100 MB — streamed to disk, not held in memory —,
 * over the workspace quota); a deleted workspace's files removed with it; and S3-compatible storage against a tiny
 * in-test S3 server.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createInferenceKey, startGateway, type TestGateway } from '../helpers.js';
import { startTinyS3, type TinyS3 } from './s3-server.js';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(32, 1)]);

export async function upload(t: TestGateway, key: string, data: Buffer | Blob, filename = 'doc.bin', extra: Record<string, string> = {}, query = '') {
  const form = new FormData();
  for (const [k, v] of Object.entries(extra)) form.append(k, v);
  form.append('file', data instanceof Blob ? data : new Blob([data]), filename);
  const res = await fetch(`${t.api}/files${query}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

describe.each(BACKENDS)('Files (%s)', (backend) => {
  let t: TestGateway;
  let key: string;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-files-'));
    t = await startGateway(backend, { env: { GATEWAY_FILES_DIR: dir } });
    key = (await createInferenceKey(t)).key;
  });
  afterAll(async () => t?.close());

  it('uploads, sniffs the type from the content, lists, gets, downloads and deletes', async () => {
    const cases: Array<[Buffer, string, string]> = [
      [PDF, 'report.txt', 'application/pdf'], // the name does not decide
      [PNG, 'image', 'image/png'],
      [Buffer.from('{"a": [1, 2]}'), 'data.txt', 'application/json'],
      [Buffer.from('{"a":1}\n{"a":2}\n'), 'x', 'application/x-ndjson'],
      [Buffer.from('name,age\nann,3\nbob,4\n'), 'x', 'text/csv'],
      [Buffer.from('# Title\n\nSome *text* and a [link](http://x.y).\n'), 'x', 'text/markdown'],
      [Buffer.from('Just a plain note, héllo.\n'), 'note', 'text/plain'],
    ];
    const ids: string[] = [];
    for (const [data, name, mime] of cases) {
      const r = await upload(t, key, data, name);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ _shape: 'gateway', type: 'file', filename: name, mime_type: mime, size_bytes: data.length, downloadable: true });
      expect(r.body.id).toMatch(/^gw_file_[0-9A-Za-z]{24}$/);
      ids.push(r.body.id);
    }
    const page1 = await t.call('GET', '/files?limit=3', { key });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((f: any) => f.id)).toEqual(ids.slice(0, 3));
    expect(page1.body).toMatchObject({ has_more: true, first_id: ids[0], last_id: ids[2] });
    const page2 = await t.call('GET', `/files?limit=3&cursor=${page1.body.cursor}`, { key });
    expect(page2.body.data.map((f: any) => f.id)).toEqual(ids.slice(3, 6));
    const rest = await t.call('GET', `/files?after_id=${ids[5]}`, { key });
    expect(rest.body).toMatchObject({ has_more: false, cursor: null, data: [{ id: ids[6] }] });

    expect((await t.call('GET', `/files/${ids[0]}`, { key })).body).toMatchObject({ id: ids[0], mime_type: 'application/pdf' });
    const dl = await fetch(`${t.api}/files/${ids[0]}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(dl.status).toBe(200);
    expect(dl.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await dl.arrayBuffer()).equals(PDF)).toBe(true);

    expect((await t.call('DELETE', `/files/${ids[0]}`, { key })).body).toEqual({ _shape: 'gateway', id: ids[0], type: 'file_deleted' });
    expect((await t.call('GET', `/files/${ids[0]}`, { key })).status).toBe(404);
    expect((await t.call('GET', `/files/${ids[0]}/content`, { key })).status).toBe(404);
    expect((await t.call('DELETE', `/files/${ids[0]}`, { key })).status).toBe(404);
  });

  it("the openai SDK: files.create, retrieve, list, delete in OpenAI's shape", async () => {
    const client = new OpenAI({ apiKey: key, baseURL: t.api });
    const created = await client.files.create({ file: await toFile(PDF, 'paper.pdf'), purpose: 'user_data' });
    expect(created).toMatchObject({ object: 'file', bytes: PDF.length, filename: 'paper.pdf', purpose: 'user_data', status: 'processed' });
    expect(typeof created.created_at).toBe('number');
    expect((await client.files.retrieve(created.id)).id).toBe(created.id);
    const listed = [];
    for await (const f of client.files.list()) listed.push(f.id);
    expect(listed).toContain(created.id);
    const content = await client.files.content(created.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(PDF)).toBe(true);
    expect(await client.files.delete(created.id)).toMatchObject({ id: created.id, object: 'file', deleted: true });
  });

  it('refuses empty files, unknown types, provider storage and bad cursors, naming the field', async () => {
    const empty = await upload(t, key, Buffer.alloc(0));
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toMatch(/^file: the file is empty/);
    const bin = await upload(t, key, Buffer.from([0, 1, 2, 3, 0xfe, 0xff, 0, 0]));
    expect(bin.status).toBe(400);
    expect(bin.body.error.message).toMatch(/^file: unsupported file type/);
    const form = new FormData();
    form.append('purpose', 'user_data');
    const noFile = await fetch(`${t.api}/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(noFile.status).toBe(400);
    expect(((await noFile.json()) as any).error.message).toMatch(/file/);
    const json = await t.call('POST', '/files', { key, body: { file: 'x' } });
    expect(json.status).toBe(415); // multipart only
    expect((await upload(t, key, PDF, 'a.pdf', {}, '?provider=openai')).status).toBe(400); // no BYOK credential for openai
    const cursor = await t.call('GET', '/files?cursor=nonsense', { key });
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.message).toMatch(/^cursor/);
    expect((await t.call('GET', '/files?before_id=x', { key })).status).toBe(400);
    expect((await t.call('GET', '/files/../../etc/passwd', { key })).status).toBe(404);
    expect((await t.call('GET', '/files/gw_file_x', { key })).status).toBe(404);
  });

  it('files are scoped to the workspace; a deleted workspace takes its files (rows and bytes) with it', async () => {
    const ws = await t.call('POST', '/workspaces', { body: { name: 'Files WS', slug: `files-${backend}` } });
    expect(ws.status).toBe(201);
    const mine = await upload(t, t.adminKey, PDF, 'ws.pdf', {}, `?workspace_id=files-${backend}`);
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    // Not visible from the default workspace (the inference key's, or the management key's default).
    expect((await t.call('GET', `/files/${mine.body.id}`, { key })).status).toBe(404);
    expect((await t.call('GET', `/files/${mine.body.id}`)).status).toBe(404);
    expect((await t.call('GET', `/files/${mine.body.id}?workspace_id=files-${backend}`)).status).toBe(200);
    // An inference key cannot reach another workspace.
    expect((await t.call('GET', `/files?workspace_id=files-${backend}`, { key })).status).toBe(403);
    const wsId = ws.body.data.id as string;
    expect(readdirSync(join(dir, wsId))).toEqual([mine.body.id]);
    expect((await t.call('DELETE', `/workspaces/${wsId}`)).status).toBe(200);
    expect(existsSync(join(dir, wsId, mine.body.id))).toBe(false);
    expect(await t.gw.svc.store.getFile(wsId, mine.body.id)).toBeNull();
  });

  it.runIf(backend === 'sqlite')('over 100 MB: 413, streamed to disk (memory stays flat) and the spool removed', { timeout: 120_000 }, async () => {
    const boundary = 'xxBOUNDARYxx';
    const size = 100 * 1024 * 1024 + 1;
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    async function* parts() {
      yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`);
      for (let sent = 0; sent < size; sent += chunk.length) yield chunk.subarray(0, Math.min(chunk.length, size - sent));
      yield Buffer.from(`\r\n--${boundary}--\r\n`);
    }
    global.gc?.();
    const before = process.memoryUsage();
    let peak = 0;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - before.rss)), 20);
    const res = await fetch(`${t.api}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: Readable.toWeb(Readable.from(parts())) as unknown as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    clearInterval(timer);
    const body = (await res.json()) as any;
    console.log(`100 MB + 1 byte upload: ${res.status}; peak RSS growth ${(peak / 1024 / 1024).toFixed(0)} MB`);
    expect(res.status).toBe(413);
    expect(body.error.message).toMatch(/^file: larger than the 100 MB limit/);
    expect(peak).toBeLessThan(60 * 1024 * 1024);
    expect(readdirSync(join(dir, '.incoming'))).toEqual([]);
  });
});

describe('Files in S3-compatible storage, with a workspace quota', () => {
  let t: TestGateway;
  let s3: TinyS3;
  let key: string;
  let workspace: string;
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  beforeAll(async () => {
    s3 = await startTinyS3('test-access-key');
    process.env.AWS_ACCESS_KEY_ID = 'test-access-key';
    process.env.AWS_SECRET_ACCESS_KEY = 'test-secret-key';
    t = await startGateway('sqlite', {
      env: { GATEWAY_FILES_DIR: mkdtempSync(join(tmpdir(), 'gw-files-s3-')), GATEWAY_FILES_S3_BUCKET: 'gw-bucket', GATEWAY_FILES_S3_ENDPOINT: s3.url, GATEWAY_FILES_S3_PREFIX: 'files/', GATEWAY_FILES_QUOTA_BYTES: '300' },
    });
    const k = await createInferenceKey(t);
    key = k.key;
    workspace = (await t.gw.svc.store.getKey(k.hash))!.workspace_id;
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
    process.env.AWS_ACCESS_KEY_ID = saved.id;
    process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
  });

  it('stores, serves and deletes objects in the bucket (signed requests, path style, prefix)', async () => {
    const r = await upload(t, key, PDF, 'in-s3.pdf');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const row = await t.gw.svc.store.getFile(workspace, r.body.id);
    expect(row?.storage).toBe('s3');
    const path = `/gw-bucket/files/${row!.storage_key}`;
    expect(s3.objects.get(path)?.body.equals(PDF)).toBe(true);
    expect(s3.objects.get(path)?.type).toBe('application/pdf');
    const dl = await fetch(`${t.api}/files/${r.body.id}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(Buffer.from(await dl.arrayBuffer()).equals(PDF)).toBe(true);
    expect((await t.call('DELETE', `/files/${r.body.id}`, { key })).status).toBe(200);
    expect(s3.objects.has(path)).toBe(false);
    expect(s3.requests.map((q) => q.method)).toEqual(['PUT', 'GET', 'DELETE']);
  });

  it('the workspace quota: an upload that would pass it is refused (403 quota_exceeded); deleting frees room', async () => {
    const a = await upload(t, key, Buffer.alloc(200, 0x61), 'a.txt');
    expect(a.status).toBe(200);
    const b = await upload(t, key, Buffer.alloc(150, 0x62), 'b.txt');
    expect(b.status).toBe(403);
    expect(b.body.error.metadata.error_type).toBe('quota_exceeded');
    expect((await t.call('DELETE', `/files/${a.body.id}`, { key })).status).toBe(200);
    expect((await upload(t, key, Buffer.alloc(150, 0x62), 'b.txt')).status).toBe(200);
  });
});

describe.each(BACKENDS)('The workspace quota under concurrent uploads (%s)', (backend) => {
  let t: TestGateway;
  let key: string;
  let workspace: string;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-files-race-'));
    t = await startGateway(backend, { env: { GATEWAY_FILES_DIR: dir, GATEWAY_FILES_QUOTA_BYTES: '300' } });
    const k = await createInferenceKey(t);
    key = k.key;
    workspace = (await t.gw.svc.store.getKey(k.hash))!.workspace_id;
  });
  afterAll(async () => t?.close());

  it('12 concurrent uploads of 100 bytes against a 300-byte quota: exactly 3 stored, never more; refused bytes removed', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => upload(t, key, Buffer.alloc(100, 0x61 + i), `r${i}.txt`)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    expect(ok).toHaveLength(3);
    for (const r of refused) expect(r.body.error.metadata.error_type).toBe('quota_exceeded');
    expect(await t.gw.svc.store.workspaceFileBytes(workspace)).toBe(300);
    // Only the stored files' bytes are on disk (a refused upload's object and spool file are removed).
    expect(readdirSync(join(dir, workspace)).sort()).toEqual(ok.map((r) => r.body.id).sort());
    expect(readdirSync(join(dir, '.incoming'))).toEqual([]);
  });

  it('the store checks and inserts atomically: 20 concurrent inserts of 100 bytes under a 500-byte quota → 5', async () => {
    const ws = `ws-race-${backend}`;
    const now = Date.now();
    const rows = Array.from({ length: 20 }, (_, i) => ({
      id: `gw_file_race${String(i).padStart(20, '0')}`,
      workspace_id: ws,
      filename: `f${i}`,
      mime_type: 'text/plain',
      size_bytes: 100,
      sha256: 'x'.repeat(64),
      storage: 'local' as const,
      storage_key: `${ws}/f${i}`,
      purpose: null,
      created_at: new Date(now).toISOString(),
    }));
    const out = await Promise.all(rows.map((r) => t.gw.svc.store.insertFile(r, 500)));
    expect(out.filter((r) => r.inserted)).toHaveLength(5);
    for (const r of out) expect(r.used).toBeLessThanOrEqual(500);
    expect(await t.gw.svc.store.workspaceFileBytes(ws)).toBe(500);
    // A file that fits exactly is still accepted at the boundary, one past it is not.
    expect((await t.gw.svc.store.insertFile({ ...rows[0], id: 'gw_file_raceboundary0000000000', size_bytes: 0 }, 500)).inserted).toBe(true);
    expect((await t.gw.svc.store.insertFile({ ...rows[0], id: 'gw_file_raceboundary0000000001', size_bytes: 1 }, 500)).inserted).toBe(false);
  });
});
