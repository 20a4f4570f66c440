/**
 * Claude Code (the pinned @anthropic-ai/claude-code, `claude -p`) against the gateway and the simulator, offline, in
 * a throwaway HOME: default settings and no model override (its default model id, `claude-opus-5-5` in 2.1.331, must
 * resolve to a catalog model), then `--model` with a bare id routed to an OpenAI-protocol upstream (translation:
 * mid-conversation system turns, dropped fields). Each run completes a turn with a tool call (the simulator calls
 * `Read`, Claude Code runs it and sends the result back). `RECORD_AGENT_FIXTURES=1` saves the request bodies.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';
import { baseEnv, BIN, fixtureOf, Recorder, run, sandbox, type Recorded } from './harness.js';

const CATALOG = {
  models: [
    { id: 'anthropic/claude-opus-5.5', canonical_slug: 'anthropic/claude-5.5-opus-20260924', name: 'Claude Opus 5.5', context_length: 1000000 },
    { id: 'anthropic/claude-haiku-5.5', canonical_slug: 'anthropic/claude-5.5-haiku-20261007', name: 'Claude Haiku 5.5', context_length: 1000000 },
    { id: 'anthropic/claude-sonnet-4.5', canonical_slug: 'anthropic/claude-4.5-sonnet-20250929', name: 'Claude Sonnet 4.5', context_length: 200000 },
  ],
  endpoints: [
    { model: 'anthropic/claude-opus-5.5', provider: 'sim-anthropic', upstream_model: 'claude-opus-5-5', pricing: { prompt: '0.000005', completion: '0.000025' } },
    { model: 'anthropic/claude-haiku-5.5', provider: 'sim-anthropic', upstream_model: 'claude-haiku-5-5', pricing: { prompt: '0.000001', completion: '0.000005' } },
    // A bare id routed to another protocol: the gateway translates Claude Code's requests.
    { model: 'anthropic/claude-sonnet-4.5', provider: 'sim-c', upstream_model: 'sonnet-on-chat', pricing: { prompt: '0.000003', completion: '0.000015' } },
  ],
};

const FIXTURES = join(__dirname, 'fixtures');

async function claude(env: ChatEnv, rec: Recorder, args: string[]): Promise<{ code: number | null; out: any; stderr: string }> {
  const { home, work } = sandbox();
  const r = await run(join(BIN, 'claude'), ['-p', 'Read notes.txt and tell me what it says.', '--output-format', 'json', ...args], {
    cwd: work,
    timeoutMs: 90_000,
    env: { ...baseEnv(home), ANTHROPIC_BASE_URL: `${rec.url}/api`, ANTHROPIC_API_KEY: env.key },
  });
  let out: any = null;
  try {
    out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '');
  } catch {
    /* not JSON: the assertion below shows stdout */
  }
  return { code: r.code, out, stderr: r.stderr + r.stdout };
}

const messagesCalls = (rec: Recorder): Recorded[] => rec.requests.filter((r) => r.path.startsWith('/api/v1/messages') && !r.path.includes('count_tokens'));
const hasToolResult = (body: any): boolean => (body?.messages ?? []).some((m: any) => Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_result'));

describe('Claude Code through the gateway', () => {
  let env: ChatEnv;
  let rec: Recorder;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', { catalog: CATALOG });
    rec = await Recorder.start(env.t.url);
    for (const p of ['sim-anthropic', 'sim-c']) env.sim.setKnobs(p, { toolName: 'Read' });
  });
  afterAll(async () => {
    await rec?.close();
    await env?.close();
  });

  it('default settings, no model override: its default model resolves, a Read tool call round-trips', async () => {
    const r = await claude(env, rec, []);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out?.is_error, r.stderr).toBe(false);
    expect(r.out.result).toMatch(/Simulated reply/);
    const calls = messagesCalls(rec);
    expect(calls.every((c) => c.status === 200), JSON.stringify(calls.map((c) => [c.path, c.status]))).toBe(true);
    const models = new Set(calls.map((c) => c.body.model));
    expect(models.has('claude-opus-5-5')).toBe(true);
    const afterTool = calls.find((c) => hasToolResult(c.body));
    expect(afterTool, 'a request carrying the Read tool result').toBeDefined();
    // Claude Code's mid-conversation system turn, its betas and context management reached the Anthropic upstream.
    const upstream = env.sim.requests.filter((q) => q.provider === 'sim-anthropic');
    expect(upstream.some((q) => (q.body as any).messages.some((m: any) => m.role === 'system'))).toBe(true);
    expect(upstream.every((q) => String(q.headers['anthropic-beta'] ?? '').includes('claude-code-20250219'))).toBe(true);
    expect(upstream.some((q) => (q.body as any).context_management !== undefined)).toBe(true);
    if (process.env.RECORD_AGENT_FIXTURES === '1') {
      writeFileSync(join(FIXTURES, 'claude-code-first.json'), JSON.stringify(fixtureOf(calls[0]), null, 1));
      writeFileSync(join(FIXTURES, 'claude-code-tool-result.json'), JSON.stringify(fixtureOf(afterTool!), null, 1));
    }
  }, 120_000);

  it('--model with a bare id, served over the OpenAI chat protocol', async () => {
    const before = rec.requests.length;
    const r = await claude(env, rec, ['--model', 'claude-sonnet-4-5']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out?.is_error, r.stderr).toBe(false);
    const calls = messagesCalls(rec).filter((c) => rec.requests.indexOf(c) >= before);
    expect(calls.some((c) => c.body.model === 'claude-sonnet-4-5')).toBe(true);
    expect(calls.some((c) => hasToolResult(c.body))).toBe(true);
    const upstream = env.sim.requests.filter((q) => q.provider === 'sim-c');
    expect(upstream.length).toBeGreaterThan(1);
    expect(calls.every((c) => c.status === 200), JSON.stringify(calls.map((c) => [c.path, c.status]))).toBe(true);
    // Claude Code's own system prompt became the chat system message; tool results came back as tool messages.
    expect(upstream.at(-1)!.body).toMatchObject({ model: 'sonnet-on-chat' });
    expect((upstream.at(-1)!.body as any).messages.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
  }, 120_000);
});
