/**
 * Gemini CLI (`@google/gemini-cli`, pinned in devDependencies) against the gateway and the simulator, as a user runs
 * it: non-interactive (`gemini -p`), in a throwaway HOME and working directory, telemetry, usage statistics and update
 * checks off, pointed at the gateway by its base-URL setting (`GOOGLE_GEMINI_BASE_URL=http://<gateway>/api`, which
 * with the `gemini-api-key` auth type; the gateway key in `GEMINI_API_KEY`, sent as `x-goog-api-key`). The simulator
 * answers the first turn with a call of the CLI's `list_directory` tool (the only core tool enabled, so the call is
 * predictable); the CLI runs it on the working directory and sends the result back; the second turn is text.
 * Both a Gemini upstream (bare id `gemini-2.5-pro`) and an Anthropic upstream (`test/claude`) serve the agent.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

const require = createRequire(import.meta.url);
const CLI = join(dirname(require.resolve('@google/gemini-cli/package.json')), 'bundle', 'gemini.js');

let env: ChatEnv;
let proxy: { server: Server; url: string; captured: Array<{ method: string; url: string; body: unknown }> };

/** A pass-through proxy in front of the gateway that keeps the CLI's requests (the fixtures of cli-fixtures.test.ts). */
async function startProxy(target: string): Promise<typeof proxy> {
  const captured: Array<{ method: string; url: string; body: unknown }> = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      captured.push({ method: req.method ?? 'GET', url: req.url ?? '/', body: text ? (JSON.parse(text) as unknown) : null });
      const up = httpRequest(target + (req.url ?? '/'), { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, captured };
}

/** A captured body without what depends on the machine (the temporary HOME and working directory) — never the key, which is a header. */
function sanitize(body: unknown): unknown {
  const tmp = tmpdir().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const text = JSON.stringify(body)
    .replace(new RegExp(`${tmp}/gw-gemini-cli-home-\\w+`, 'g'), '/home/user')
    .replace(/\.gemini\/tmp\/gw-gemini-cli-work-\w+/g, '.gemini/tmp/project')
    .replace(new RegExp(`${tmp}/gw-gemini-cli-work-\\w+`, 'g'), '/work/project');
  return JSON.parse(text) as unknown;
}

beforeAll(async () => {
  env = await startChatEnv('sqlite', {
    catalog: {
      models: [{ id: 'google/gemini-2.5-pro', name: 'Gemini 2.5 Pro (sim)', context_length: 1048576 }],
      endpoints: [
        {
          model: 'google/gemini-2.5-pro',
          provider: 'sim-google',
          upstream_model: 'gemini-2.5-pro',
          pricing: { prompt: '0.00000125', completion: '0.00001' },
          supported_parameters: ['temperature', 'top_p', 'top_k', 'max_tokens', 'stop', 'seed', 'tools', 'tool_choice', 'response_format', 'reasoning', 'include_reasoning'],
        },
      ],
    },
  });
});
beforeAll(async () => {
  proxy = await startProxy(env.t.url);
});
afterAll(async () => {
  proxy?.server.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.server.close(() => resolve()) : resolve()));
  await env?.close();
});

/** Runs `gemini -p <prompt> -m <model> --output-format json` in a fresh HOME and working directory. */
function runCli(model: string, prompt: string): Promise<{ code: number | null; stdout: string; stderr: string; cwd: string; home: string }> {
  const home = mkdtempSync(join(tmpdir(), 'gw-gemini-cli-home-'));
  const cwd = mkdtempSync(join(tmpdir(), 'gw-gemini-cli-work-'));
  // The simulator fills string arguments with "example": the directory the tool call lists.
  mkdirSync(join(cwd, 'example'));
  writeFileSync(join(cwd, 'example', 'notes.txt'), 'hello\n');
  mkdirSync(join(home, '.gemini'));
  const settings = {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, checkpointing: { enabled: false } },
    ide: { enabled: false },
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    tools: { core: ['list_directory'] },
    model: { skipNextSpeakerCheck: true },
  };
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings, null, 2));
  const childEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    USERPROFILE: home,
    TMPDIR: tmpdir(),
    GEMINI_API_KEY: env.key,
    GOOGLE_GEMINI_BASE_URL: `${proxy.url}/api`,
    GEMINI_TELEMETRY_ENABLED: 'false',
    GEMINI_CLI_NO_RELAUNCH: 'true',
    NO_BROWSER: 'true',
    CI: 'true',
    TERM: 'dumb',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, '-p', prompt, '-m', model, '--output-format', 'json'], { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, cwd, home });
    });
  });
}

describe('Gemini CLI against the gateway', () => {
  for (const [model, sim] of [
    ['gemini-2.5-pro', 'sim-google'],
    ['test/claude', 'sim-anthropic'],
  ] as const) {
    it(`completes a turn with a tool call (${model} → ${sim})`, async () => {
      env.sim.resetStats();
      proxy.captured.length = 0;
      const r = await runCli(model, 'List the files in the example directory.');
      const detail = `exit ${r.code}\nstdout:\n${r.stdout.slice(-3000)}\nstderr:\n${r.stderr.slice(-3000)}`;
      expect(r.code, detail).toBe(0);
      const out = JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as Record<string, any>;
      expect(out.response, detail).toMatch(/Simulated reply using tool result/);
      // Two model calls: the tool call, then the answer with the tool's result.
      const calls = env.sim.requests.filter((q) => q.provider === sim);
      expect(calls.length, detail).toBe(2);
      expect(JSON.stringify(calls[0].body)).toContain('list_directory');
      // The listing the CLI produced went upstream as the tool result.
      expect(JSON.stringify(calls[1].body)).toContain('notes.txt');
      // The CLI ran the tool and counted the tokens the gateway reported.
      expect(out.stats.tools.byName.list_directory).toMatchObject({ count: 1, success: 1, fail: 0 });
      const usage = Object.values(out.stats.models as Record<string, any>)[0].tokens;
      expect(usage.input).toBeGreaterThan(0);
      expect(usage.candidates).toBeGreaterThan(0);
      // What the CLI sent: two streamGenerateContent calls with alt=sse, the key never in the URL.
      const sent = proxy.captured.filter((c) => c.method === 'POST');
      expect(sent.map((c) => c.url)).toEqual(Array(2).fill(`/api/v1beta/models/${model}:streamGenerateContent?alt=sse`));
      // RECORD_GEMINI_CLI=1 refreshes the fixtures replayed by cli-fixtures.test.ts (after a version bump).
      if (process.env.RECORD_GEMINI_CLI === '1' && sim === 'sim-google') {
        const dir = join(dirname(new URL(import.meta.url).pathname), 'fixtures');
        mkdirSync(dir, { recursive: true });
        sent.forEach((c, i) => writeFileSync(join(dir, `gemini-cli-turn${i + 1}.json`), `${JSON.stringify(sanitize(c.body), null, 1)}\n`));
      }
    }, 120_000);
  }
});
