/**
 * Codex (the pinned @openai/codex, `codex exec`) against the gateway and the simulator, offline, in a throwaway
 * HOME/CODEX_HOME whose config.toml names the gateway as a model provider with `wire_api = "responses"`; default
 * features and default model (`gpt-6.1-sol` in 0.169.0), with no model override and no alias: the gateway runs the
 * shipped catalog, where `openai/gpt-6.1-sol` is a priced model served by the `openai-responses` provider (only its
 * address is pointed at the simulator). Codex's tools (an `additional_tools` item holding the `functions` namespace and
 * its custom tool `exec`) pass through to that Responses upstream; the same model served over the OpenAI chat protocol
 * (the provider's protocol overridden) has them translated both ways. In each run the simulator calls `exec`, Codex
 * runs it and sends the output back. `RECORD_AGENT_FIXTURES=1` saves the request bodies of the chat run as fixtures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { baseEnv, BIN, fixtureOf, Recorder, run, sandbox, type Recorded } from './harness.js';

/** The shipped catalog, with the shipped `openai-responses` provider's address (and, optionally, protocol) overridden. */
async function shippedEnv(protocol?: 'openai'): Promise<ChatEnv> {
  return startChatEnv('sqlite', {
    env: { GATEWAY_DEFAULT_CATALOG: 'true' },
    catalog: (simUrl) => ({ providers: [{ slug: 'openai-responses', base_url: `${simUrl}/openai-responses/v1`, no_auth: true, ...(protocol ? { protocol } : {}) }] }),
  });
}

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

type Generation = { model: string; tokens_prompt: number; tokens_completion: number; total_cost: number };

/** The key's generation records once `n` are written (records are written in the background). */
async function generations(env: ChatEnv, n: number): Promise<Generation[]> {
  for (let i = 0; ; i++) {
    const rows = (await env.t.gw.svc.store.listGenerations({ keyHashes: [env.keyHash], limit: 100 })) as never as Generation[];
    if (rows.length >= n || i === 100) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `codex exec` with the default model and features, through a recording proxy; its /responses calls. */
async function codexExec(env: ChatEnv, rec: Recorder): Promise<{ calls: Recorded[]; out: string }> {
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
  // No override anywhere: Codex sent its own default model id, and its tools in an additional_tools item.
  expect(calls.every((c) => c.body.model === 'gpt-6.1-sol')).toBe(true);
  expect(calls[0].body.input.some((it: any) => it.type === 'additional_tools')).toBe(true);
  return { calls, out: r.stdout + r.stderr };
}

describe('Codex through the gateway, shipped catalog (gpt-6.1-sol over the Responses protocol)', () => {
  let env: ChatEnv;
  let rec: Recorder;
  beforeAll(async () => {
    env = await shippedEnv();
    rec = await Recorder.start(env.t.url);
    env.sim.setKnobs('openai-responses', { toolName: 'functions__exec' });
  });
  afterAll(async () => {
    await rec?.close();
    await env?.close();
  });

  it('codex exec, default features and model: resolves to the priced openai/gpt-6.1-sol, a custom tool call round-trips', async () => {
    const { calls, out } = await codexExec(env, rec);
    const upstream = env.sim.requests.filter((q) => q.provider === 'openai-responses').map((q) => q.body as any);
    expect(upstream.length).toBe(calls.length);
    // Passed through as sent, under the shipped endpoint's upstream id.
    expect(upstream.every((b) => b.model === 'gpt-6.1-sol')).toBe(true);
    expect(upstream[0].input.some((it: any) => it.type === 'additional_tools')).toBe(true);
    const afterTool = calls.find((c) => hasToolOutput(c.body));
    expect(afterTool, 'a request carrying the tool output').toBeDefined();
    expect(afterTool!.body.input.find((it: any) => it.type === 'custom_tool_call')).toMatchObject({ name: 'exec', namespace: 'functions' });
    expect(out).toMatch(/Simulated reply/);
    // Billed at the shipped list price ($2 / $10 per million tokens): cost = prompt × 0.000002 + completion × 0.00001.
    const gens = await generations(env, calls.length);
    expect(gens.length).toBe(calls.length);
    for (const g of gens) {
      expect(g.model).toBe('openai/gpt-6.1-sol');
      expect(g.tokens_prompt).toBeGreaterThan(0);
      expect(g.total_cost).toBeCloseTo(g.tokens_prompt * 0.000002 + g.tokens_completion * 0.00001, 12);
    }
  }, 150_000);
});

describe('Codex through the gateway, gpt-6.1-sol served over the OpenAI chat protocol (tools translated)', () => {
  let env: ChatEnv;
  let rec: Recorder;
  beforeAll(async () => {
    env = await shippedEnv('openai');
    rec = await Recorder.start(env.t.url);
    // Codex 0.169.0 exposes its tools as the namespace "functions" (code mode: the custom tool `exec`).
    env.sim.setKnobs('openai-responses', { toolName: 'functions__exec' });
  });
  afterAll(async () => {
    await rec?.close();
    await env?.close();
  });

  it('codex exec, default features and model: a turn with a tool call through the chat protocol', async () => {
    const { calls, out } = await codexExec(env, rec);
    const afterTool = calls.find((c) => hasToolOutput(c.body));
    expect(afterTool, 'a request carrying the tool output').toBeDefined();
    // The custom tool call came back to the gateway under its own name and namespace.
    const call = afterTool!.body.input.find((it: any) => it.type === 'custom_tool_call' || it.type === 'function_call');
    expect(call).toMatchObject({ name: 'exec' });
    // Upstream, the tools were function tools, and the call/result pair was translated back to them.
    const upstream = env.sim.requests.filter((q) => q.provider === 'openai-responses').map((q) => q.body as any);
    expect(upstream[0].model).toBe('gpt-6.1-sol');
    expect(upstream[0].tools.map((t: any) => t.function.name)).toContain('functions__exec');
    expect(upstream.some((b) => b.messages.some((m: any) => m.role === 'tool'))).toBe(true);
    expect(out).toMatch(/Simulated reply/);
    if (process.env.RECORD_AGENT_FIXTURES === '1') {
      writeFileSync(join(FIXTURES, 'codex-first.json'), JSON.stringify(fixtureOf(calls[0]), null, 1));
      writeFileSync(join(FIXTURES, 'codex-tool-output.json'), JSON.stringify(fixtureOf(afterTool!), null, 1));
    }
  }, 150_000);
});
