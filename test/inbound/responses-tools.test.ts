/**
 * Codex's tool kinds on the Responses API (inbound/responses-tools.ts): namespace tools flattened to uniquely named
 * function tools, custom (free-form) tools as a function with one string argument, additional_tools input items,
 * and the names mapped back on the way out, in JSON answers and in streams, and again when the calls come back as
 * input.
 */
import { describe, expect, it } from 'vitest';
import { responsesInbound } from '../../src/inbound/responses.js';
import type { AnswerMeta } from '../../src/core/adapters.js';
import type { IrStreamEvent } from '../../src/core/ir.js';

const META: AnswerMeta = { id: 'gen-1-x', model: 'm/x', provider: 'P', created: 1, cost: 0, cost_details: { upstream_inference_prompt_cost: 0, upstream_inference_completions_cost: 0, upstream_inference_cost: 0 } };

/** Codex 0.169.0's shape: no tools, one additional_tools item holding a namespace of custom and function tools. */
const REQUEST = {
  model: 'gpt-6.1-sol',
  tools: [{ type: 'function', name: 'exec', description: 'top-level exec', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } }],
  input: [
    {
      type: 'additional_tools',
      role: 'developer',
      tools: [
        {
          type: 'namespace',
          name: 'functions',
          description: '',
          tools: [
            { type: 'custom', name: 'exec', description: 'Run JavaScript', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } },
            { type: 'function', name: 'wait', description: 'Wait', parameters: { type: 'object', properties: { ms: { type: 'integer' } } } },
          ],
        },
        { type: 'custom', name: 'apply_patch', description: 'Edit files' },
      ],
    },
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex.' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'say hi' }] },
  ],
};

describe('Responses tool kinds through the IR', () => {
  it('flattens namespaces, turns custom tools into one-string-argument functions, reads additional_tools', () => {
    const ir = responsesInbound.toIr(REQUEST);
    expect(ir.tools!.map((t) => t.name)).toEqual(['exec', 'functions__exec', 'functions__wait', 'apply_patch']);
    const custom = ir.tools![1];
    expect(custom.parameters).toEqual({ type: 'object', properties: { input: { type: 'string', description: 'Free-form input (lark):\nstart: /.+/' } }, required: ['input'], additionalProperties: false });
    expect(custom.description).toBe('Run JavaScript');
    expect(ir.tools![2].parameters).toEqual({ type: 'object', properties: { ms: { type: 'integer' } } });
    expect(ir.dropped_fields).toBeUndefined();
  });

  it('keeps flattened names unique and valid', () => {
    const ir = responsesInbound.toIr({
      input: 'x',
      tools: [
        { type: 'function', name: 'a__b' },
        { type: 'namespace', name: 'a', tools: [{ type: 'function', name: 'b' }, { type: 'function', name: 'c.d' }] },
      ],
    });
    expect(ir.tools!.map((t) => t.name)).toEqual(['a__b', 'a__b_2', 'a__c_d']);
  });

  it('maps calls back in the JSON answer: custom_tool_call with its input, namespaced function_call', () => {
    const res = {
      id: 'u1',
      model: 'x',
      finish_reason: 'tool_calls' as const,
      native_finish_reason: 'tool_calls',
      usage: null,
      content: [
        { type: 'tool_call' as const, id: 'call_1', name: 'functions__exec', arguments: '{"input":"text(\\"hi\\")"}' },
        { type: 'tool_call' as const, id: 'call_2', name: 'functions__wait', arguments: '{"ms":5}' },
        { type: 'tool_call' as const, id: 'call_3', name: 'exec', arguments: '{"cmd":"ls"}' },
      ],
    };
    const out = responsesInbound.fromIr(res, META, REQUEST).output as any[];
    expect(out[0]).toMatchObject({ type: 'custom_tool_call', call_id: 'call_1', name: 'exec', namespace: 'functions', input: 'text("hi")', status: 'completed' });
    expect(out[1]).toMatchObject({ type: 'function_call', call_id: 'call_2', name: 'wait', namespace: 'functions', arguments: '{"ms":5}' });
    expect(out[2]).toMatchObject({ type: 'function_call', call_id: 'call_3', name: 'exec', arguments: '{"cmd":"ls"}' });
    expect(out[2].namespace).toBeUndefined();
  });

  it('maps calls back in the stream: the custom input arrives whole', () => {
    const enc = responsesInbound.createStreamEncoder(META, REQUEST);
    const events: IrStreamEvent[] = [
      { type: 'start', id: 'u', model: 'x' },
      { type: 'tool_call_start', index: 0, id: 'call_1', name: 'functions__exec' },
      { type: 'tool_call_delta', index: 0, arguments: '{"input":"tex' },
      { type: 'tool_call_delta', index: 0, arguments: 't(1)"}' },
      { type: 'part_end', index: 0 },
      { type: 'tool_call_start', index: 1, id: 'call_2', name: 'functions__wait' },
      { type: 'tool_call_delta', index: 1, arguments: '{"ms":5}' },
      { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: null },
    ];
    let text = enc.start();
    for (const e of events) text += enc.event(e);
    text += enc.finish(null, META);
    const data = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
    const added = data.filter((d) => d.type === 'response.output_item.added').map((d) => d.item);
    expect(added[0]).toMatchObject({ type: 'custom_tool_call', call_id: 'call_1', name: 'exec', namespace: 'functions', input: '', status: 'in_progress' });
    expect(data.find((d) => d.type === 'response.custom_tool_call_input.done')).toMatchObject({ output_index: 0, input: 'text(1)' });
    expect(data.some((d) => d.type === 'response.function_call_arguments.delta' && d.output_index === 0)).toBe(false);
    const done = data.find((d) => d.type === 'response.completed').response.output;
    expect(done[0]).toMatchObject({ type: 'custom_tool_call', name: 'exec', namespace: 'functions', input: 'text(1)', status: 'completed' });
    expect(done[1]).toMatchObject({ type: 'function_call', name: 'wait', namespace: 'functions', arguments: '{"ms":5}' });
  });

  it('reads the calls back as input under their upstream names', () => {
    const ir = responsesInbound.toIr({
      ...REQUEST,
      input: [
        ...REQUEST.input,
        { type: 'custom_tool_call', call_id: 'call_1', name: 'exec', namespace: 'functions', input: 'text(1)' },
        { type: 'custom_tool_call_output', call_id: 'call_1', output: 'ok' },
        { type: 'function_call', call_id: 'call_2', name: 'wait', namespace: 'functions', arguments: '{"ms":5}' },
        { type: 'function_call_output', call_id: 'call_2', output: 'waited' },
      ],
    });
    const calls = ir.messages.flatMap((m) => m.content).filter((p) => p.type === 'tool_call' || p.type === 'tool_result');
    expect(calls).toEqual([
      { type: 'tool_call', id: 'call_1', name: 'functions__exec', arguments: '{"input":"text(1)"}' },
      { type: 'tool_result', tool_call_id: 'call_1', content: 'ok' },
      { type: 'tool_call', id: 'call_2', name: 'functions__wait', arguments: '{"ms":5}' },
      { type: 'tool_result', tool_call_id: 'call_2', content: 'waited' },
    ]);
    // The developer message stayed an instruction.
    expect(ir.system).toEqual([{ type: 'text', text: 'You are Codex.' }]);
  });
});

/** The client-run hosted tools: `local_shell` and `apply_patch`, as a Responses client declares them. */
const HOSTED = {
  model: 'test/alpha',
  tools: [{ type: 'local_shell' }, { type: 'apply_patch' }, { type: 'function', name: 'wait', parameters: { type: 'object', properties: {} } }],
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files, then fix README.md' }] }],
};

describe('local_shell and apply_patch for upstreams without them', () => {
  it('become function tools of the same name (nothing dropped)', () => {
    const ir = responsesInbound.toIr(HOSTED);
    expect(ir.tools!.map((t) => t.name)).toEqual(['local_shell', 'apply_patch', 'wait']);
    expect((ir.tools![0].parameters as any).required).toEqual(['command']);
    expect((ir.tools![1].parameters as any).properties.type.enum).toEqual(['create_file', 'update_file', 'delete_file']);
    expect(ir.dropped_fields).toBeUndefined();
  });

  it('calls come back as local_shell_call / apply_patch_call items in the JSON answer', () => {
    const res = {
      id: 'u1',
      model: 'x',
      finish_reason: 'tool_calls' as const,
      native_finish_reason: 'tool_calls',
      usage: null,
      content: [
        { type: 'tool_call' as const, id: 'call_1', name: 'local_shell', arguments: '{"command":["ls","-la"],"working_directory":"/repo"}' },
        { type: 'tool_call' as const, id: 'call_2', name: 'apply_patch', arguments: '{"type":"update_file","path":"README.md","diff":"@@\\n-a\\n+b"}' },
      ],
    };
    const out = responsesInbound.fromIr(res, META, HOSTED).output as any[];
    expect(out[0]).toMatchObject({ type: 'local_shell_call', call_id: 'call_1', action: { type: 'exec', command: ['ls', '-la'], working_directory: '/repo' }, status: 'completed' });
    expect(out[1]).toMatchObject({ type: 'apply_patch_call', call_id: 'call_2', operation: { type: 'update_file', path: 'README.md', diff: '@@\n-a\n+b' }, status: 'completed' });
  });

  it('in a stream, each call is one item, whole at output_item.done (no argument deltas)', () => {
    const enc = responsesInbound.createStreamEncoder(META, HOSTED);
    const events: IrStreamEvent[] = [
      { type: 'start', id: 'u', model: 'x' },
      { type: 'tool_call_start', index: 0, id: 'call_1', name: 'local_shell' },
      { type: 'tool_call_delta', index: 0, arguments: '{"command":["l' },
      { type: 'tool_call_delta', index: 0, arguments: 's"]}' },
      { type: 'part_end', index: 0 },
      { type: 'tool_call_start', index: 1, id: 'call_2', name: 'apply_patch' },
      { type: 'tool_call_delta', index: 1, arguments: '{"type":"delete_file","path":"old.txt"}' },
      { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: null },
    ];
    let text = enc.start();
    for (const e of events) text += enc.event(e);
    text += enc.finish(null, META);
    const data = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
    expect(data.filter((d) => d.type === 'response.output_item.added').map((d) => d.item.type)).toEqual(['local_shell_call', 'apply_patch_call']);
    expect(data.some((d) => d.type === 'response.function_call_arguments.delta')).toBe(false);
    const done = data.filter((d) => d.type === 'response.output_item.done').map((d) => d.item);
    expect(done[0]).toMatchObject({ type: 'local_shell_call', call_id: 'call_1', action: { type: 'exec', command: ['ls'] }, status: 'completed' });
    expect(done[1]).toMatchObject({ type: 'apply_patch_call', call_id: 'call_2', operation: { type: 'delete_file', path: 'old.txt' }, status: 'completed' });
    const final = data.find((d) => d.type === 'response.completed').response;
    expect(final.output.map((o: any) => o.type)).toEqual(['local_shell_call', 'apply_patch_call']);
  });

  it('the calls and their outputs sent back become the IR call and result', () => {
    const ir = responsesInbound.toIr({
      ...HOSTED,
      input: [
        ...HOSTED.input,
        { type: 'local_shell_call', id: 'lsh_1', call_id: 'call_1', status: 'completed', action: { type: 'exec', command: ['ls'], env: {} } },
        { type: 'local_shell_call_output', call_id: 'call_1', output: 'README.md\n' },
        { type: 'apply_patch_call', id: 'apc_1', call_id: 'call_2', status: 'completed', operation: { type: 'delete_file', path: 'old.txt' } },
        { type: 'apply_patch_call_output', call_id: 'call_2', status: 'failed', output: 'no such file' },
      ],
    });
    const calls = ir.messages.flatMap((m) => m.content).filter((p) => p.type === 'tool_call' || p.type === 'tool_result');
    expect(calls).toEqual([
      { type: 'tool_call', id: 'call_1', name: 'local_shell', arguments: '{"command":["ls"],"env":{}}' },
      { type: 'tool_result', tool_call_id: 'call_1', content: 'README.md\n' },
      { type: 'tool_call', id: 'call_2', name: 'apply_patch', arguments: '{"type":"delete_file","path":"old.txt"}' },
      { type: 'tool_result', tool_call_id: 'call_2', content: 'no such file', is_error: true },
    ]);
    expect(ir.dropped_fields).toBeUndefined();
  });
});
