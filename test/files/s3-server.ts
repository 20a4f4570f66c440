/**
 * A tiny S3-compatible server for tests (not a test file): path-style PUT, GET, HEAD and DELETE of objects, in memory.
 * It answers only requests signed with SigV4 (an `Authorization: AWS4-HMAC-SHA256 Credential=<access key>/…` header)
 * and records every request, so a test can see what the gateway's S3 client did.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TinyS3 {
  url: string;
  objects: Map<string, { body: Buffer; type: string | undefined }>;
  requests: Array<{ method: string; path: string }>;
  close(): Promise<void>;
}

const body = (req: IncomingMessage) =>
  new Promise<Buffer>((ok, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks)));
    req.on('error', fail);
  });

const xmlError = (code: string, message: string) => `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;

export async function startTinyS3(accessKey: string): Promise<TinyS3> {
  const objects = new Map<string, { body: Buffer; type: string | undefined }>();
  const requests: TinyS3['requests'] = [];
  const server: Server = createServer(async (req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]);
    requests.push({ method: req.method ?? '', path });
    if (!String(req.headers.authorization ?? '').startsWith(`AWS4-HMAC-SHA256 Credential=${accessKey}/`)) {
      res.writeHead(403, { 'content-type': 'application/xml' }).end(xmlError('AccessDenied', 'unsigned request'));
      return;
    }
    if (req.method === 'PUT') {
      const data = await body(req);
      if (req.headers['content-length'] !== undefined && Number(req.headers['content-length']) !== data.length) {
        res.writeHead(400).end(xmlError('IncompleteBody', 'length mismatch'));
        return;
      }
      objects.set(path, { body: data, type: req.headers['content-type'] });
      res.writeHead(200, { etag: '"x"' }).end();
      return;
    }
    const obj = objects.get(path);
    if (req.method === 'DELETE') {
      objects.delete(path);
      res.writeHead(204).end();
      return;
    }
    if (!obj) {
      res.writeHead(404, { 'content-type': 'application/xml' }).end(xmlError('NoSuchKey', 'not found'));
      return;
    }
    res.writeHead(200, { 'content-type': obj.type ?? 'application/octet-stream', 'content-length': String(obj.body.length) });
    res.end(req.method === 'HEAD' ? undefined : obj.body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    objects,
    requests,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
