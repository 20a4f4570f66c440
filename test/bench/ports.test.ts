/**
 * The benchmark scripts' ports (bench/common.ts, used by bench/instructions.ts): free ports picked when no base port
 * is given, so that two runs at once do not collide; a given base whose port is taken is an error naming it; and a
 * process that exits before it answers (its port taken) fails the wait at once instead of it finding another's server.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { benchPorts, waitUpOrExit } from '../../bench/common.js';

const servers: Server[] = [];
const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => {
      servers.push(s);
      resolve(s);
    });
  });
const portOf = (s: Server) => (s.address() as { port: number }).port;

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

describe('benchmark ports', () => {
  it('no base: distinct free ports, each of which can be listened on; two runs at once get different ones', async () => {
    const [one, two] = await Promise.all([benchPorts(null, 3), benchPorts(null, 3)]);
    expect(new Set(one).size).toBe(3);
    for (const p of one) expect(p).toBeGreaterThan(0);
    expect(one.filter((p) => two.includes(p))).toEqual([]);
    for (const p of one) await listen(p);
  });

  it('a base: base, base + 201, base + 202; one of them taken is an error naming it', async () => {
    const taken = await listen(0);
    const p = portOf(taken);
    await expect(benchPorts(p, 3)).rejects.toThrow(`port ${p} is taken`);
    const base = p > 1000 ? p - 201 : p + 1;
    if (base + 201 === p) await expect(benchPorts(base, 3)).rejects.toThrow(`port ${p} is taken`);
    // Free ones are given back as asked (and released: they can be listened on at once).
    await new Promise((r) => taken.close(r));
    servers.splice(servers.indexOf(taken), 1);
    expect(await benchPorts(p, 1)).toEqual([p]);
    await listen(p);
  });

  it('a process that exits before answering fails the wait at once, naming its exit', async () => {
    const proc = spawn(process.execPath, ['-e', 'process.exit(3)'], { stdio: 'ignore' });
    const t0 = Date.now();
    await expect(waitUpOrExit('http://127.0.0.1:9/health', proc, 30_000)).rejects.toThrow(/exited \(code 3\) before answering/);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});
