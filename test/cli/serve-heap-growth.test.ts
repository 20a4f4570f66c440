/**
 * `serve` as a process sets V8's old-generation growing factor before the gateway loads (services/heap-growth.ts):
 * GATEWAY_HEAP_GROWING_PERCENT's flag by default, none for 0 or when the operator passed the flag to node. The
 * listening line says which.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY } from '../helpers.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Starts `serve` on SQLite with `nodeArgs` and `env`, returns the `heap_growth` of its listening line, and stops it. */
function listeningHeapGrowth(nodeArgs: string[], env: Record<string, string>): Promise<unknown> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-heap-'));
  dirs.push(dir);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/bin.ts', 'serve'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', GATEWAY_DATABASE_URL: `sqlite:${join(dir, 'gw.db')}`, GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_DEFAULT_CATALOG: 'false', GATEWAY_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no listening line:\n${out}`));
    }, 100_000);
    const onData = (d: Buffer) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"gateway listening"'));
      if (!line) return;
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve((JSON.parse(line) as { heap_growth?: unknown }).heap_growth);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => (out += d));
    child.once('exit', (code) => code !== null && reject(new Error(`serve exited ${code}:\n${out}`)));
  });
}

describe('serve and the old generation\'s growth', () => {
  // Three processes at once (each loads the sources through tsx: ~15–45 s on a loaded machine). The configured value
  // itself is checked by test/services/heap-growth.test.ts.
  it('sets --heap-growing-percent=100 by default, none for 0 or an operator\'s flag', async () => {
    const [byDefault, off, operators] = await Promise.all([
      listeningHeapGrowth([], {}),
      listeningHeapGrowth([], { GATEWAY_HEAP_GROWING_PERCENT: '0' }),
      listeningHeapGrowth(['--heap-growing-percent=30'], {}),
    ]);
    expect(byDefault).toBe('--heap-growing-percent=100');
    expect(off).toBeNull();
    expect(operators).toBeNull();
  }, 120_000);
});
