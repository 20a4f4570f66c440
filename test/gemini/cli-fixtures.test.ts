/**
 * Gemini CLI's own request bodies (recorded from the real CLI by gemini-cli.test.ts with RECORD_GEMINI_CLI=1: its
 * system instruction, `list_directory` declaration with `parametersJsonSchema`, generationConfig with thinkingConfig;
 * the second turn with the model's `functionCall` — id and thoughtSignature — and the CLI's `functionResponse`;
 * temporary paths replaced, no key), replayed through every upstream protocol: the first turn must come back as a
 * well-formed function call, the second as text built on the tool result, each upstream getting the conversation in its
 * own format.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

type Json = Record<string, any>;
const fixture = (n: number): Json => JSON.parse(readFileSync(new URL(`./fixtures/gemini-cli-turn${n}.json`, import.meta.url), 'utf8')) as Json;
const TURN1 = fixture(1);
const TURN2 = fixture(2);

let env: ChatEnv;
beforeAll(async () => {
  env = await startChatEnv('sqlite');
});
afterAll(async () => env?.close());

async function stream(model: string, body: Json): Promise<{ parts: Json[]; finish: string | undefined; usage: Json | undefined }> {
  const res = await fetch(`${env.t.url}/api/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': env.key },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const chunks = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => JSON.parse(e.slice(6)) as Json);
  const parts = chunks.flatMap((c) => (c.candidates?.[0]?.content?.parts ?? []) as Json[]);
  return { parts, finish: chunks[chunks.length - 1]?.candidates?.[0]?.finishReason, usage: chunks[chunks.length - 1]?.usageMetadata };
}

/** The system text and the tool result as each protocol carries them. */
function upstreamSaw(sim: string): { system: string; toolResult: string } {
  const b = env.sim.stats(sim).lastBody as Json;
  const s = JSON.stringify;
  switch (sim) {
    case 'sim-google':
      return { system: s(b.systemInstruction), toolResult: s(b.contents[b.contents.length - 1]) };
    case 'sim-anthropic':
      return { system: s(b.system), toolResult: s(b.messages[b.messages.length - 1]) };
    case 'sim-responses':
      return { system: s(b.instructions ?? b.input[0]), toolResult: s(b.input[b.input.length - 1]) };
    default:
      return { system: s(b.messages[0]), toolResult: s(b.messages[b.messages.length - 1]) };
  }
}

describe('Gemini CLI request bodies through every upstream protocol', () => {
  it('the fixtures are what the CLI sends (a sanity check of the recording)', () => {
    expect(Object.keys(TURN1).sort()).toEqual(['contents', 'generationConfig', 'systemInstruction', 'tools']);
    expect(TURN1.tools[0].functionDeclarations[0]).toMatchObject({ name: 'list_directory', parametersJsonSchema: expect.any(Object) });
    expect(TURN2.contents.map((c: Json) => c.role)).toEqual(['user', 'model', 'user']);
    expect(TURN2.contents[2].parts[0].functionResponse.id).toBe(TURN2.contents[1].parts[0].functionCall.id);
    expect(JSON.stringify([TURN1, TURN2])).not.toMatch(/sk-gw|\/tmp\/gw-/);
  });

  for (const [model, sim] of [
    ['test/gemini', 'sim-google'],
    ['test/claude', 'sim-anthropic'],
    ['test/alpha', 'sim-a'],
    ['test/responses', 'sim-responses'],
  ] as const) {
    it(`${model} (${sim})`, async () => {
      const t1 = await stream(model, TURN1);
      const call = t1.parts.find((p) => p.functionCall)?.functionCall;
      expect(call).toMatchObject({ id: expect.any(String), name: 'list_directory', args: { dir_path: expect.any(String) } });
      expect(t1.finish).toBe('STOP');
      expect(t1.usage?.promptTokenCount).toBeGreaterThan(1000); // the CLI's long system instruction reached the upstream
      expect(upstreamSaw(sim).system).toContain('Gemini CLI');

      const t2 = await stream(model, TURN2);
      const text = t2.parts.filter((p) => typeof p.text === 'string' && !p.thought).map((p) => p.text as string).join('');
      expect(text).toMatch(/^Simulated reply using tool result/);
      expect(text).toContain('notes.txt');
      expect(t2.finish).toBe('STOP');
      expect(upstreamSaw(sim).toolResult).toContain('Directory listing for /work/project/example');
    });
  }
});
