/**
 * The clients of what an instance may not use are loaded on first use, not at start-up (docs/operations.md, "Large
 * bodies and full collections"): every full collection marks what is loaded. A fresh Node process imports the
 * gateway's module graph (as `serve` does before reading its configuration) and lists the CommonJS modules loaded.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

describe('packages loaded at start-up', () => {
  it('the gateway module graph loads no S3, PostgreSQL, Redis, Bedrock, RE2 or JSON-repair client until one is used', () => {
    const script = [
      "await import('./src/gateway.ts');",
      "const { createRequire } = await import('node:module');",
      "console.log(JSON.stringify(Object.keys(createRequire(process.cwd() + '/package.json').cache)));",
    ].join('\n');
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 110_000 });
    const loaded = JSON.parse(out.trim().split('\n').at(-1)!) as string[];
    const pkg = (name: string) => loaded.filter((f) => f.includes(`/node_modules/${name}/`));
    // The graph did load: undici (CommonJS) is on every request's path.
    expect(pkg('undici').length).toBeGreaterThan(0);
    for (const name of ['@aws-sdk/client-s3', 'pg', 'ioredis', '@smithy/signature-v4', '@smithy/eventstream-codec', '@aws-crypto/sha256-js', 're2js', 'jsonrepair']) {
      expect({ name, files: pkg(name) }).toEqual({ name, files: [] });
    }
  }, 120_000);
});
