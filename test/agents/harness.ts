/**
 * Running the real coding agents (pinned in devDependencies) against the gateway and the simulator, offline:
 * - a throwaway HOME (and CODEX_HOME) per run, telemetry, auto-update and non-essential traffic off;
 * - a recording proxy between the agent and the gateway, so that a test sees the agent's own request bodies (and can
 *   save them, secrets removed, as fixtures: `RECORD_AGENT_FIXTURES=1`; test/agents/fixtures/README.md).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url));

export interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  status: number;
}

/** A reverse proxy that records every request (JSON bodies parsed) on its way to `target`. */
export class Recorder {
  readonly requests: Recorded[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<Recorder> {
    let rec: Recorder | null = null;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          /* not JSON */
        }
        const entry: Recorded = { method: req.method ?? 'GET', path: req.url ?? '/', headers: { ...req.headers }, body, status: 0 };
        rec!.requests.push(entry);
        const up = httpRequest(target + (req.url ?? '/'), { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (ur) => {
          entry.status = ur.statusCode ?? 0;
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        });
        up.on('error', () => res.destroy());
        up.end(text);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    rec = new Recorder(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return rec;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command with a timeout; never throws on a non-zero exit. */
export function run(cmd: string, args: string[], opts: { env: Record<string, string>; cwd: string; timeoutMs: number; stdin?: string }): Promise<RunResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { env: opts.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

/** A throwaway working directory with one file for the agent to read, and a throwaway HOME. */
export function sandbox(): { home: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), 'gw-agent-'));
  const home = join(root, 'home');
  const work = join(root, 'work');
  for (const d of [home, work]) mkdirSync(d, { recursive: true });
  writeFileSync(join(work, 'notes.txt'), 'The gateway test file.\n');
  return { home, work };
}

/** The environment every agent run gets: only what it needs (no inherited credentials), telemetry off. */
export function baseEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    // Claude Code (its package documents these): no telemetry, error reports, auto-update or other traffic.
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // Codex: no analytics, no update check.
    CODEX_DISABLE_ANALYTICS: '1',
    NO_UPDATE_NOTIFIER: '1',
  };
}

const SECRET_HEADERS = ['authorization', 'x-api-key', 'cookie'];

/** A recorded request as a fixture: the body, with the headers an agent sends minus credentials. */
export function fixtureOf(r: Recorded): Record<string, unknown> {
  const headers: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r.headers)) if (!SECRET_HEADERS.includes(k) && k !== 'host' && k !== 'content-length') headers[k] = v;
  // Stable ids instead of the run's own (Claude Code's device id, session ids): not secrets, but not ours to publish.
  const body = JSON.parse(JSON.stringify(r.body).replace(/\\"device_id\\":\\"[0-9a-f]+\\"/g, '\\"device_id\\":\\"0000\\"'));
  return { method: r.method, path: r.path, headers, body };
}
