/**
 * `local_shell` and `apply_patch` (Responses hosted tools the client runs) through an upstream that has only function
 * tools (the OpenAI chat simulator): the call streams back as a `local_shell_call` / `apply_patch_call` item, and
 * sending it back with its output reaches the upstream as the function call and its tool result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatEnv, type ChatEnv } from '../chat-helpers.js';

let env: ChatEnv;
beforeAll(async () => {
  env = await startChatEnv('sqlite');
});
afterAll(async () => {
  await env?.close();
});

async function responses(body: object, tool: string): Promise<any[]> {
  const res = await fetch(`${env.t.api}/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json', 'x-sim-tool-call': 'true', 'x-sim-tool-name': tool },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  return text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
}

describe.each([
  ['local_shell', 'local_shell_call', 'action'],
  ['apply_patch', 'apply_patch_call', 'operation'],
] as const)('%s through a chat upstream, streamed', (tool, itemType, field) => {
  it('the call streams back as its own item, and goes back upstream as the function call with its result', async () => {
    const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'do it' }] }];
    const tools = [{ type: tool }];
    const data = await responses({ model: 'test/alpha', tools, input }, tool);
    const sent = env.sim.stats('sim-a').lastBody as any;
    expect(sent.tools.map((t: any) => t.function.name)).toEqual([tool]);
    const item = data.find((d) => d.type === 'response.output_item.done')?.item;
    expect(item).toMatchObject({ type: itemType, status: 'completed' });
    expect(typeof item.call_id).toBe('string');
    expect(typeof item[field]).toBe('object');
    if (tool === 'local_shell') expect(item.action).toMatchObject({ type: 'exec', command: expect.any(Array) });
    else expect(item.operation).toMatchObject({ type: 'create_file', path: expect.any(String) });
    expect(data.find((d) => d.type === 'response.completed').response.output[0].type).toBe(itemType);

    // The client runs it and sends the call and its output back.
    await responses({ model: 'test/alpha', tools, input: [...input, item, { type: `${itemType}_output`, call_id: item.call_id, output: 'done: ok' }] }, tool);
    const again = env.sim.stats('sim-a').lastBody as any;
    const assistant = again.messages.find((m: any) => m.role === 'assistant');
    expect(assistant.tool_calls[0]).toMatchObject({ id: item.call_id, function: { name: tool } });
    expect(again.messages.find((m: any) => m.role === 'tool')).toMatchObject({ tool_call_id: item.call_id, content: 'done: ok' });
  });
});
