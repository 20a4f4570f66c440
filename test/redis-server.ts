/**
 * A redis-server of a test's own, for tests that kill and restart Redis under running gateways
 * (test/chat/spend-redis-outage.test.ts, test/api/token-rate-limit-seeds.test.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A free port below the kernel's ephemeral range (32768–60999 here): Redis is killed and started again on the same
 * port, and while it is down no outgoing connection (which takes its local port from that range) nor any other
 * test's listen(0) can take the port meanwhile.
 */
export async function freePort(): Promise<number> {
  const base = 20_000 + Math.floor(Math.random() * 12_000);
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + ((base - 20_000 + i) % 12_000);
    const s = createServer();
    const ok = await new Promise<boolean>((r) => {
      s.once('error', () => r(false));
      s.listen(port, '127.0.0.1', () => r(true));
    });
    if (ok) {
      await new Promise<void>((r) => s.close(() => r()));
      return port;
    }
  }
  throw new Error('no free port between 20000 and 32000');
}

/**
 * A redis-server of this test alone (no persistence), up once it answers PING. Fails at once when the server exits
 * (its port taken: a PONG would then come from someone else's server), and never leaves a server behind on failure.
 */
export async function startRedis(port: number): Promise<ChildProcess> {
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const probe = new Redis(`redis://127.0.0.1:${port}`, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    for (let i = 0; i < 100; i++) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`redis-server on port ${port} exited (${proc.exitCode ?? proc.signalCode}): port taken?`);
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG' && proc.exitCode === null) return proc;
      } catch {
        probe.disconnect();
        await sleep(50);
      }
    }
    throw new Error(`redis-server on port ${port} did not start`);
  } catch (err) {
    await stopRedis(proc);
    throw err;
  } finally {
    probe.disconnect();
  }
}

export async function stopRedis(proc: ChildProcess): Promise<void> {
  // Gone already (killed by a signal: exitCode stays null, signalCode is set). Waiting for an 'exit' that has been
  // emitted would hang until the hook timeout — what afterAll did after a failure while Redis was down.
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  await new Promise<void>((r) => {
    proc.once('exit', () => r());
    proc.kill('SIGKILL');
  });
}
