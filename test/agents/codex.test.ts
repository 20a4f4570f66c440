/**
 * Codex (the pinned @openai/codex, `codex exec`) against the gateway and the simulator, offline, in a throwaway
 * HOME/CODEX_HOME whose config.toml names the gateway as a model provider with `wire_api = "responses"`; default
 * features and default model (`gpt-6.1-sol` in 0.169.0, a model alias here). The model is served over the OpenAI chat
 * protocol, so Codex's namespace/custom tools are translated both ways; the simulator calls the `exec` tool, Codex
 * runs it and sends the output back. `RECORD_AGENT_FIXTURES=1` saves the request bodies as fixtures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { baseEnv, BIN, fixtureOf, Recorder, run, sandbox } from './harness.js';

const CATALOG = {
  models: [{ id: 'openai/gpt-6.1-sol', name: 'GPT-6.1 Sol (test)', context_length: 272000, aliases: ['gpt-6.1-sol'] }],
  endpoints: [{ model: 'openai/gpt-6.1-sol', provider: 'sim-c', upstream_model: 'sol-on-chat', pricing: { prompt: '0.000002', completion: '0.00001' } }],
};

const FIXTURES = join(__dirname, 'fixtures');

function config(base: string): string {
  return [
    'model_provider = "gateway"',
    '',
    '[model_providers.gateway]',
    'name = "Model Gateway"',
    `base_url = "${base}/api/v1"`,
    'env_key = "GATEWAY_API_KEY"',
    'wire_api = "responses"',
    '',
    '[analytics]',
    'enabled = false',
    '',
  ].join('\n');
}

const hasToolOutput = (body: any): boolean => Array.isArray(body?.input) && body.input.some((it: any) => it.type === 'custom_tool_call_output' || it.type === 'function_call_output');

describe('Codex through the gateway', () => {
  let env: ChatEnv;
  let rec: Recorder;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', { catalog: CATALOG });
    rec = await Recorder.start(env.t.url);
    // Codex 0.169.0 exposes its tools as the namespace "functions" (code mode: the custom tool `exec`).
    env.sim.setKnobs('sim-c', { toolName: 'functions__exec' });
  });
  afterAll(async () => {
    await rec?.close();
    await env?.close();
  });

  it('codex exec, default features and model: a turn with a tool call through the chat protocol', async () => {
    const { home, work } = sandbox();
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(join(codexHome, 'config.toml'), config(rec.url));
    const r = await run(join(BIN, 'codex'), ['exec', '--skip-git-repo-check', 'Say hi using your tools.'], {
      cwd: work,
      timeoutMs: 120_000,
      env: { ...baseEnv(home), CODEX_HOME: codexHome, GATEWAY_API_KEY: env.key },
    });
    const calls = rec.requests.filter((q) => q.path.startsWith('/api/v1/responses'));
    expect(r.code, `${r.stdout}\n${r.stderr}\n${JSON.stringify(calls.map((c) => [c.path, c.status]))}`).toBe(0);
    expect(calls.length).toBeGreaterThan(1);
    expect(calls.every((c) => c.status === 200), JSON.stringify(calls.map((c) => [c.path, c.status]))).toBe(true);
    expect(calls[0].body.model).toBe('gpt-6.1-sol');
    expect(calls[0].body.input.some((it: any) => it.type === 'additional_tools')).toBe(true);
    const afterTool = calls.find((c) => hasToolOutput(c.body));
    expect(afterTool, 'a request carrying the tool output').toBeDefined();
    // The custom tool call came back to the gateway under its own name and namespace.
    const call = afterTool!.body.input.find((it: any) => it.type === 'custom_tool_call' || it.type === 'function_call');
    expect(call).toMatchObject({ name: 'exec' });
    // Upstream, the tools were function tools, and the call/result pair was translated back to them.
    const upstream = env.sim.requests.filter((q) => q.provider === 'sim-c').map((q) => q.body as any);
    expect(upstream[0].tools.map((t: any) => t.function.name)).toContain('functions__exec');
    expect(upstream.some((b) => b.messages.some((m: any) => m.role === 'tool'))).toBe(true);
    expect(r.stdout + r.stderr).toMatch(/Simulated reply/);
    if (process.env.RECORD_AGENT_FIXTURES === '1') {
      writeFileSync(join(FIXTURES, 'codex-first.json'), JSON.stringify(fixtureOf(calls[0]), null, 1));
      writeFileSync(join(FIXTURES, 'codex-tool-output.json'), JSON.stringify(fixtureOf(afterTool!), null, 1));
    }
  }, 150_000);
});
