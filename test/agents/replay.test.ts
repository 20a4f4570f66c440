/**
 * The agents' own request bodies (captured from the real CLIs, secrets removed: test/agents/fixtures/README.md),
 * replayed through every upstream protocol: each is answered (200), reaches the upstream in its protocol's terms
 * (system turns native or converted, Anthropic betas forwarded, fields the upstream cannot take listed in
 * X-Gateway-Dropped-Fields), and nothing the agent sent is refused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

const fixture = (name: string): { path: string; headers: Record<string, string>; body: any } => JSON.parse(readFileSync(join(__dirname, 'fixtures', name), 'utf8'));

/** Gateway model and simulated provider per upstream protocol (test/chat-helpers.ts). */
const UPSTREAMS = [
  { protocol: 'anthropic', model: 'test/claude', sim: 'sim-anthropic' },
  { protocol: 'openai', model: 'agents/chat', sim: 'sim-c' },
  { protocol: 'google', model: 'test/gemini', sim: 'sim-google' },
  { protocol: 'openai-responses', model: 'test/responses', sim: 'sim-responses' },
] as const;

async function post(env: ChatEnv, path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`${env.t.url}${path}`, { method: 'POST', headers: { ...headers, 'x-api-key': env.key, authorization: `Bearer ${env.key}`, 'accept-encoding': 'identity' }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const lastUpstream = (env: ChatEnv, sim: string): any => env.sim.requests.filter((r) => r.provider === sim).at(-1);

describe('Claude Code request bodies through every upstream protocol', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    // An OpenAI-protocol model with room for Claude Code's max_tokens (128000).
    env = await startChatEnv('sqlite', {
      catalog: { models: [{ id: 'agents/chat', name: 'Agents chat', context_length: 1000000 }], endpoints: [{ model: 'agents/chat', provider: 'sim-c', upstream_model: 'chat-sim', pricing: { prompt: '0.000001', completion: '0.000002' } }] },
    });
  });
  afterAll(async () => env?.close());

  for (const name of ['claude-code-first.json', 'claude-code-tool-result.json']) {
    describe(name, () => {
      const f = fixture(name);
      const headers: Record<string, string> = {};
      for (const k of ['content-type', 'anthropic-beta', 'anthropic-version', 'user-agent']) headers[k] = f.headers[k];

      it.each(UPSTREAMS)('$protocol', async ({ protocol, model, sim }) => {
        const res = await post(env, f.path, headers, { ...f.body, model });
        expect(res.status, res.text.slice(0, 500)).toBe(200);
        expect(res.text).toContain('event: message_stop');
        const up = lastUpstream(env, sim);
        const dropped = res.headers.get('x-gateway-dropped-fields');
        // The fixture's mid-conversation system turn, as each protocol carries it.
        const turn = f.body.messages.find((m: any) => m.role === 'system').content;
        const systemText: string = typeof turn === 'string' ? turn : turn[0].text;
        const body = up.body;
        switch (protocol) {
          case 'anthropic':
            // Same protocol: the body passes through (system turn in place, context_management, thinking display),
            // with the client's betas forwarded.
            expect(up.headers['anthropic-beta']).toBe(f.headers['anthropic-beta']);
            expect(body.messages.map((m: any) => m.role)).toEqual(f.body.messages.map((m: any) => m.role));
            expect(body.context_management).toEqual(f.body.context_management);
            expect(body.model).toBe('claude-sim');
            expect(dropped).toBeNull();
            break;
          case 'openai': {
            const sys = body.messages.filter((m: any) => m.role === 'system');
            expect(sys.length).toBe(2); // Claude Code's system prompt, then its mid-conversation turn in place
            expect(JSON.stringify(sys[1].content)).toContain(systemText.slice(0, 40).replace(/\n/g, '\\n'));
            expect(body.messages[0].role).toBe('system');
            expect(dropped).toContain('context_management');
            expect(dropped).toContain('thinking.display');
            break;
          }
          case 'google': {
            // No system turn in Gemini: the mid-conversation one is user text, wrapped in <system>.
            const texts = body.contents.flatMap((c: any) => c.parts.filter((p: any) => typeof p.text === 'string').map((p: any) => [c.role, p.text]));
            expect(texts.some(([role, t]: [string, string]) => role === 'user' && t.startsWith('<system>\n# Environment'))).toBe(true);
            expect(dropped).toContain('context_management');
            break;
          }
          case 'openai-responses':
            expect(body.input.some((it: any) => it.type === 'message' && it.role === 'system' && it.content[0].text === systemText)).toBe(true);
            expect(dropped).toContain('context_management');
            break;
        }
      });
    });
  }
});

describe('Codex request bodies through every upstream protocol', () => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startChatEnv('sqlite', {
      catalog: { models: [{ id: 'agents/chat', name: 'Agents chat', context_length: 1000000 }], endpoints: [{ model: 'agents/chat', provider: 'sim-c', upstream_model: 'chat-sim', pricing: { prompt: '0.000001', completion: '0.000002' } }] },
    });
  });
  afterAll(async () => env?.close());

  /** The upstream function names of a request body, per protocol. */
  const toolNames = (protocol: string, body: any): string[] => {
    switch (protocol) {
      case 'anthropic':
        return (body.tools ?? []).map((t: any) => t.name);
      case 'openai':
        return (body.tools ?? []).map((t: any) => t.function.name);
      case 'google':
        return (body.tools ?? []).flatMap((t: any) => (t.functionDeclarations ?? []).map((d: any) => d.name));
      default:
        return [];
    }
  };

  for (const name of ['codex-first.json', 'codex-tool-output.json']) {
    describe(name, () => {
      const f = fixture(name);
      const headers = { 'content-type': 'application/json', accept: 'text/event-stream' };

      it.each(UPSTREAMS)('$protocol', async ({ protocol, model, sim }) => {
        const res = await post(env, f.path, headers, { ...f.body, model });
        expect(res.status, res.text.slice(0, 500)).toBe(200);
        expect(res.text).toContain('event: response.completed');
        const body = lastUpstream(env, sim).body;
        const dropped = res.headers.get('x-gateway-dropped-fields');
        if (protocol === 'openai-responses') {
          // Same protocol: namespace, custom tools and additional_tools pass through as sent.
          expect(body.input.filter((it: any) => it.type === 'additional_tools')).toEqual(f.body.input.filter((it: any) => it.type === 'additional_tools'));
          expect(body.model).toBe('resp-sim');
          expect(dropped).toBeNull();
          return;
        }
        // Other protocols: Codex's namespaced custom tool `exec` is the function `functions__exec` with one string.
        expect(toolNames(protocol, body)).toContain('functions__exec');
        const history = JSON.stringify(body);
        if (name === 'codex-tool-output.json') {
          // The custom call and its output, translated into the protocol's own call/result pair.
          expect(history).toContain('functions__exec');
          expect(history).toContain('ReferenceError');
        }
      });
    });
  }
});

