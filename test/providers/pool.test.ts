/**
 * FlatPool: undici's Pool with an O(1) choice of a free connection. Its hook into undici's internals must stay
 * active (an undici upgrade that moves them turns it into a plain Pool: this test says so), and it must keep the
 * Pool's behaviour: the connection bound holds, requests past it wait their turn, connections are reused.
 */
import { createServer, type Server } from 'node:http';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlatPool, flatPoolActive } from '../../src/providers/pool.js';

describe('FlatPool', () => {
  let server: Server;
  let origin: string;
  let connections = 0;
  let inFlight = 0;
  let peak = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight--;
        res.end(req.url);
      }, 20);
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("hooks into undici's pool internals (else it would scan every connection per request)", () => {
    expect(flatPoolActive).toBe(true);
  });

  it('holds its connection bound: 60 concurrent requests over 8 connections all answered, at most 8 at once', async () => {
    connections = peak = 0;
    const pool = new FlatPool(origin, { connections: 8, pipelining: 1 });
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => pool.request({ method: 'GET', path: `/${i}` }).then((r) => r.body.text())));
    expect(answers).toEqual(Array.from({ length: 60 }, (_, i) => `/${i}`));
    expect(connections).toBeLessThanOrEqual(8);
    expect(peak).toBeLessThanOrEqual(8);
    await pool.close();
  });

  it('reuses a free connection: requests one after the other need a few connections, not one each', async () => {
    connections = 0;
    const pool = new FlatPool(origin, { connections: 100, pipelining: 1 });
    for (let i = 0; i < 20; i++) await (await pool.request({ method: 'GET', path: '/x' })).body.text();
    // undici opens a spare connection ahead when one fills.
    expect(connections).toBeLessThanOrEqual(3);
    await pool.close();
  });

  it("keeps the busy flag off the clients themselves (one shape for every connection: undici's code stays monomorphic)", async () => {
    const pool = new FlatPool(origin, { connections: 8, pipelining: 1 });
    await Promise.all(Array.from({ length: 16 }, () => pool.request({ method: 'GET', path: '/z' }).then((r) => r.body.text())));
    const kClients = Object.getOwnPropertySymbols(pool).find((s) => s.description === 'clients')!;
    const clients = (pool as unknown as Record<symbol, object[]>)[kClients];
    expect(clients.length).toBeGreaterThan(1);
    for (const c of clients) {
      // An accessor defined on each client would give each one a hidden class of its own.
      expect(Object.getOwnPropertySymbols(c).some((s) => s.description === 'needDrain')).toBe(false);
      expect(Object.getPrototypeOf(c)).toBe(Object.getPrototypeOf(clients[0]));
    }
    await pool.close();
  });

  it('opens a connection per request in flight below the bound (no waiting for a busy one)', async () => {
    connections = 0;
    const pool = new FlatPool(origin, { connections: 1000, pipelining: 1 });
    await Promise.all(Array.from({ length: 300 }, () => pool.request({ method: 'GET', path: '/y' }).then((r) => r.body.text())));
    expect(connections).toBeGreaterThanOrEqual(300);
    await pool.close();
  });
  it('keeps a client whose connection failed in the pool (undici drops it but it reconnects): the bound holds and destroy closes every socket', async () => {
    let open = 0;
    let maxOpen = 0;
    const answered = new WeakMap<object, number>();
    // Each connection is closed by the server after its 3rd answer; every 4th connection attempt fails.
    const closing = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const n = (answered.get(req.socket) ?? 0) + 1;
        answered.set(req.socket, n);
        res.end('ok', () => n >= 3 && req.socket.end());
      });
    });
    closing.on('connection', (s) => {
      maxOpen = Math.max(maxOpen, ++open);
      s.on('close', () => open--);
    });
    await new Promise<void>((r) => closing.listen(0, '127.0.0.1', r));
    const port = (closing.address() as AddressInfo).port;
    let attempts = 0;
    const connect = (_o: unknown, cb: (err: Error | null, socket: Socket | null) => void) => {
      if (++attempts % 4 === 0) return void setImmediate(() => cb(Object.assign(new Error('refused (test)'), { code: 'ECONNREFUSED' }), null));
      const sock = netConnect({ host: '127.0.0.1', port });
      sock.once('connect', () => cb(null, sock));
      sock.once('error', (e) => cb(e, null));
    };
    const pool = new FlatPool(`http://127.0.0.1:${port}`, { connections: 5, pipelining: 1, connect: connect as never });
    const end = Date.now() + 1500;
    let ok = 0;
    await Promise.all(
      Array.from({ length: 30 }, async () => {
        while (Date.now() < end) {
          try {
            await (await pool.request({ method: 'POST', path: '/', body: '{}' })).body.text();
            ok++;
          } catch {
            // a refused connection fails the requests waiting on it
          }
        }
      }),
    );
    expect(ok).toBeGreaterThan(100);
    // The bound, plus connections the server has ended whose close the pool has not yet seen.
    expect(maxOpen).toBeLessThanOrEqual(8);
    await pool.destroy();
    await new Promise((r) => setTimeout(r, 200));
    expect(open).toBe(0);
    closing.closeAllConnections();
    await new Promise<void>((r) => closing.close(() => r()));
  });
});
