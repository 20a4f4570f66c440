/**
 * Every upstream socket gets the high-water mark the lent request bodies' tail copy is sized from (core/body-slabs.ts):
 * a tail of at least the mark, written, leaves no earlier slab byte in the socket's queue when undici asks past it.
 * undici picks its own mark otherwise (64 KiB plain, 16 KiB TLS), which an upgrade could raise.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { OriginPools } from '../../src/providers/http.js';
import { SOCKET_HIGH_WATER_MARK } from '../../src/core/body-slabs.js';

const fixtures = join(__dirname, '../chat/fixtures');
const answer = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => req.resume().on('end', () => res.end('ok'));
let plain: Server;
let tls: Server;
const origins: Record<string, string> = {};
let previous: string | undefined;

beforeAll(async () => {
  plain = createServer(answer);
  // The self-signed test certificate of test/chat/fixtures, trusted for this file only.
  tls = createTlsServer({ key: readFileSync(join(fixtures, 'h2-test-key.pem')), cert: readFileSync(join(fixtures, 'h2-test-cert.pem')) }, answer);
  await Promise.all([plain, tls].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
  origins.http = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  origins.https = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
  previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
});
afterAll(async () => {
  if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous;
  await Promise.all([plain, tls].map((s) => new Promise<void>((r) => s.close(() => r()))));
});

it.each(['http', 'https'])('upstream %s sockets are made with SOCKET_HIGH_WATER_MARK (undici would give TLS 16 KiB)', async (scheme) => {
  const marks: number[] = [];
  const onConnected = (m: unknown) => marks.push((m as { socket: Socket }).socket.writableHighWaterMark);
  subscribe('undici:client:connected', onConnected);
  const pools = new OriginPools({ connections: 2 });
  try {
    const timeouts = { connectMs: 2_000, firstByteMs: 2_000, idleMs: 2_000, totalMs: 5_000 };
    const res = await pools.request('POST', { url: new URL(`${origins[scheme]}/x`), headers: {}, body: 'hello', timeouts } as never);
    expect(await res.body.text()).toBe('ok');
  } finally {
    unsubscribe('undici:client:connected', onConnected);
    await pools.close();
  }
  expect(SOCKET_HIGH_WATER_MARK).toBeGreaterThanOrEqual(64 * 1024);
  expect(marks).toEqual([SOCKET_HIGH_WATER_MARK]);
});
