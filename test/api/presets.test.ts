import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { BACKENDS, createInferenceKey, startGateway, type TestGateway } from '../helpers.js';
import { expectError, expectStatus, sleep, UUID } from './util.js';

const PRESET_FIELDS = [
  'id',
  'name',
  'slug',
  'description',
  'status',
  'status_updated_at',
  'designated_version_id',
  'designated_version',
  'creator_user_id',
  'workspace_id',
  'created_at',
  'updated_at',
].sort();
const VERSION_FIELDS = ['id', 'preset_id', 'version', 'config', 'system_prompt', 'creator_id', 'created_at', 'updated_at'].sort();

describe.each(BACKENDS)('Presets (%s)', (backend) => {
  let t: TestGateway;
  let defaultWs: string;
  let n = 0;
  const slug = (p = 'preset') => `${p}-${++n}`;
  const save = (s: string, body: unknown, kind: 'responses' | 'chat/completions' | 'messages' = 'responses', query = '') =>
    t.call('POST', `/presets/${s}/${kind}${query}`, { body });

  beforeAll(async () => {
    t = await startGateway(backend);
    defaultWs = (await t.call('GET', '/workspaces/default')).body.data.id;
  });
  afterAll(async () => t?.close());

  it('POST /presets/{slug}/responses creates version 1, status active; instructions → system_prompt, model and settings → config, input and stream dropped', async () => {
    const s = slug();
    const body = {
      model: 'openai/gpt-4o',
      instructions: 'Answer in one sentence.',
      input: [{ role: 'user', content: 'hello' }],
      stream: true,
      temperature: 0.3,
      max_output_tokens: 200,
      provider: { allow_fallbacks: false, sort: 'price' },
      reasoning: { effort: 'low' },
      metadata: { team: 'search' },
      tools: [{ type: 'function', name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: {} } }],
      trace: { trace_id: 't-1', custom_key: 'kept' },
    };
    const res = await save(s, body);
    expectStatus(res, 200);
    const p = res.body.data;
    expect(Object.keys(p).sort()).toEqual(PRESET_FIELDS);
    expect(p).toMatchObject({ name: s, slug: s, description: null, status: 'active', status_updated_at: null, workspace_id: defaultWs });
    expect(p.id).toMatch(UUID);
    expect(p.workspace_id).toMatch(UUID);
    expect(typeof p.creator_user_id).toBe('string');
    expect(new Date(p.created_at).toISOString()).toBe(p.created_at);
    expect(new Date(p.updated_at).toISOString()).toBe(p.updated_at);

    const v = p.designated_version;
    expect(Object.keys(v).sort()).toEqual(VERSION_FIELDS);
    expect(v.id).toMatch(UUID);
    expect(p.designated_version_id).toBe(v.id);
    expect(v.preset_id).toBe(p.id);
    expect(v.version).toBe(1);
    expect(v.system_prompt).toBe('Answer in one sentence.');
    expect(typeof v.creator_id).toBe('string');
    expect(v.config).toEqual({
      model: 'openai/gpt-4o',
      temperature: 0.3,
      max_output_tokens: 200,
      provider: { allow_fallbacks: false, sort: 'price' },
      reasoning: { effort: 'low' },
      metadata: { team: 'search' },
      tools: body.tools,
      trace: { trace_id: 't-1', custom_key: 'kept' },
    });

    const got = await t.call('GET', `/presets/${s}`);
    expectStatus(got, 200);
    expect(got.body.data).toEqual(p);
  });

  it('a second POST adds version 2 and designates it; versions list oldest first with total_count; /versions/{n}', async () => {
    const s = slug();
    const v1 = (await save(s, { model: 'a/one', instructions: 'first' })).body.data;
    await sleep(3);
    const second = await save(s, { model: 'a/two', instructions: null, top_p: 0.5 });
    expectStatus(second, 200);
    const v2 = second.body.data;
    expect(v2.id).toBe(v1.id);
    expect(v2.created_at).toBe(v1.created_at);
    expect(v2.designated_version.version).toBe(2);
    expect(v2.designated_version_id).toBe(v2.designated_version.id);
    expect(v2.designated_version_id).not.toBe(v1.designated_version_id);
    expect(v2.designated_version.system_prompt).toBeNull();
    expect(v2.designated_version.config).toEqual({ model: 'a/two', top_p: 0.5 });
    expect(Date.parse(v2.updated_at)).toBeGreaterThan(Date.parse(v1.updated_at));

    const current = await t.call('GET', `/presets/${s}`);
    expect(current.body.data.designated_version.version).toBe(2);
    expect(current.body.data.designated_version.config.model).toBe('a/two');

    const versions = await t.call('GET', `/presets/${s}/versions`);
    expectStatus(versions, 200);
    expect(versions.body.total_count).toBe(2);
    expect(versions.body.data.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    expect(versions.body.data[0]).toEqual(v1.designated_version);
    expect(versions.body.data[1]).toEqual(v2.designated_version);
    for (const v of versions.body.data) expect(Object.keys(v).sort()).toEqual(VERSION_FIELDS);

    const page = await t.call('GET', `/presets/${s}/versions?offset=1&limit=1`);
    expect(page.body.data.map((v: { version: number }) => v.version)).toEqual([2]);
    expect(page.body.total_count).toBe(2);

    const one = await t.call('GET', `/presets/${s}/versions/1`);
    expectStatus(one, 200);
    expect(one.body.data).toEqual(v1.designated_version);
    expect(one.body.data.system_prompt).toBe('first');
    expectError(await t.call('GET', `/presets/${s}/versions/3`), 404);
    expectError(await t.call('GET', `/presets/${s}/versions/0`), 400, { field: 'version', rule: 'minimum' });
    expectError(await t.call('GET', `/presets/${s}/versions/two`), 400, { field: 'version' });
  });

  it('unknown presets → 404 on every read', async () => {
    expectError(await t.call('GET', '/presets/no-such-preset'), 404);
    expectError(await t.call('GET', '/presets/no-such-preset/versions'), 404);
    expectError(await t.call('GET', '/presets/no-such-preset/versions/1'), 404);
  });

  it('chat/completions twin: system messages → system_prompt, messages and stream dropped, other fields → config', async () => {
    const s = slug('chat');
    const res = await save(
      s,
      {
        model: 'anthropic/claude',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'system', content: [{ type: 'text', text: 'Use metric units.' }] },
          { role: 'user', content: 'hi' },
        ],
        stream: true,
        stream_options: { include_usage: true },
        temperature: 1.2,
        stop: ['END'],
        max_completion_tokens: 64,
      },
      'chat/completions',
    );
    expectStatus(res, 200);
    const v = res.body.data.designated_version;
    expect(res.body.data.status).toBe('active');
    expect(v.version).toBe(1);
    expect(v.system_prompt).toBe('You are terse.\n\nUse metric units.');
    expect(v.config).toEqual({ model: 'anthropic/claude', temperature: 1.2, stop: ['END'], max_completion_tokens: 64 });

    const noSystem = await save(slug('chat'), { model: 'x/y', messages: [{ role: 'user', content: 'hi' }] }, 'chat/completions');
    expectStatus(noSystem, 200);
    expect(noSystem.body.data.designated_version.system_prompt).toBeNull();
    // messages is optional on the preset twin.
    expectStatus(await save(slug('chat'), { model: 'x/y' }, 'chat/completions'), 200);
  });

  it('messages twin: system (string or blocks) → system_prompt, messages dropped, other fields → config', async () => {
    const s = slug('msg');
    const res = await save(s, { model: 'anthropic/claude', system: 'Be kind.', messages: [{ role: 'user', content: 'hi' }], max_tokens: 512, stream: false }, 'messages');
    expectStatus(res, 200);
    expect(res.body.data.designated_version.system_prompt).toBe('Be kind.');
    expect(res.body.data.designated_version.config).toEqual({ model: 'anthropic/claude', max_tokens: 512 });

    const blocks = await save(
      s,
      { model: 'anthropic/claude', system: [{ type: 'text', text: 'Part one.' }, { type: 'text', text: 'Part two.' }], temperature: 0.2 },
      'messages',
    );
    expectStatus(blocks, 200);
    expect(blocks.body.data.designated_version.version).toBe(2);
    expect(blocks.body.data.designated_version.system_prompt).toBe('Part one.\nPart two.');
    expect(blocks.body.data.designated_version.config).toEqual({ model: 'anthropic/claude', temperature: 0.2 });
    // `system` is a valid role on /messages since issue 15 (mid-conversation system turns); other roles are not.
    expectError(await save(slug('msg'), { messages: [{ role: 'tool', content: 'x' }] }, 'messages'), 400, { field: 'messages[0].role', rule: 'enum' });
  });

  it('GET /presets lists the workspace presets, most recently updated first, with total_count and designated versions', async () => {
    const ws = (await t.call('POST', '/workspaces', { body: { name: 'Preset list', slug: 'preset-list' } })).body.data;
    const q = '?workspace_id=preset-list';
    expect((await t.call('GET', `/presets${q}`)).body).toEqual({ data: [], total_count: 0 });
    await save('alpha', { model: 'm/a' }, 'responses', q);
    await sleep(3);
    await save('beta', { model: 'm/b' }, 'responses', q);
    await sleep(3);
    await save('alpha', { model: 'm/a2' }, 'responses', q);

    const list = await t.call('GET', `/presets${q}`);
    expectStatus(list, 200);
    expect(list.body.total_count).toBe(2);
    expect(list.body.data.map((p: { slug: string }) => p.slug)).toEqual(['alpha', 'beta']);
    expect(list.body.data[0].workspace_id).toBe(ws.id);
    expect(list.body.data[0].designated_version).toMatchObject({ version: 2, config: { model: 'm/a2' } });
    for (const p of list.body.data) expect(Object.keys(p).sort()).toEqual(PRESET_FIELDS);
    const paged = await t.call('GET', `/presets${q}&offset=1&limit=1`);
    expect(paged.body.data.map((p: { slug: string }) => p.slug)).toEqual(['beta']);
    expect(paged.body.total_count).toBe(2);

    // Presets belong to their workspace.
    expectError(await t.call('GET', '/presets/beta'), 404);
    expectStatus(await t.call('GET', `/presets/beta${q}`), 200);
    expectStatus(await t.call('GET', `/presets/beta/versions/1?workspace_id=${ws.id}`), 200);
    const def = await t.call('GET', '/presets?limit=100');
    expect(def.body.data.every((p: { workspace_id: string }) => p.workspace_id === defaultWs)).toBe(true);
    expect(def.body.total_count).toBe(def.body.data.length);

    expectError(await t.call('GET', '/presets?limit=0'), 400, { field: 'limit', rule: 'minimum' });
    expectError(await t.call('GET', '/presets?limit=101'), 400, { field: 'limit', rule: 'maximum' });
    expectError(await t.call('GET', '/presets?offset=-1'), 400, { field: 'offset', rule: 'minimum' });
  });

  it('unknown workspace → 404; bad slug → 400', async () => {
    expectError(await save(slug(), { model: 'm/x' }, 'responses', '?workspace_id=no-such-ws'), 404);
    expectError(await t.call('GET', '/presets?workspace_id=no-such-ws'), 404);
    expectError(await save('-bad', { model: 'm/x' }), 400, { field: 'slug' });
    expectError(await save('x'.repeat(101), { model: 'm/x' }), 400, { field: 'slug', rule: 'maxLength' });
  });

  it('documented auth errors: 401 without a valid key, 403 for an inference key', async () => {
    expectError(await t.call('POST', `/presets/${slug()}/responses`, { key: null, body: { model: 'm/x' } }), 401);
    const k = await createInferenceKey(t, { name: 'preset inference' });
    expectError(await t.call('POST', `/presets/${slug()}/responses`, { key: k.key, body: { model: 'm/x' } }), 403, {
      message: 'Only management keys can perform this operation',
    });
  });

  it('malformed or non-object bodies → 400', async () => {
    expectError(await t.call('POST', `/presets/${slug()}/responses`, { raw: '{"model":' }), 400);
    expectError(await save(slug(), ['model']), 400, { rule: 'type' });
    expectError(await save(slug(), { store: true }), 400, { field: 'store' });
    expectStatus(await save(slug(), { store: false, model: 'm/x' }), 200);
  });

  describe('responses body: each field of the preset body table is validated', () => {
    const ok = async (body: Record<string, unknown>) => {
      const res = await save(slug('ok'), body);
      expectStatus(res, 200);
      return res.body.data.designated_version;
    };
    const bad = async (body: Record<string, unknown>, field: string, rule?: string) => expectError(await save(slug('bad'), body), 400, { field, rule });

    it('metadata: up to 16 pairs, keys up to 64 characters without brackets, values up to 512 characters', async () => {
      const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
      expect((await ok({ metadata: sixteen })).config.metadata).toEqual(sixteen);
      await bad({ metadata: { ...sixteen, k16: 'v' } }, 'metadata', 'maxProperties');
      await ok({ metadata: { ['k'.repeat(64)]: 'v' } });
      await bad({ metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata', 'maxLength');
      await bad({ metadata: { 'a[0]': 'v' } }, 'metadata', 'pattern');
      await bad({ metadata: { 'a]': 'v' } }, 'metadata', 'pattern');
      await ok({ metadata: { k: 'v'.repeat(512) } });
      await bad({ metadata: { k: 'v'.repeat(513) } }, 'metadata.k', 'maxLength');
      await bad({ metadata: { k: 5 } }, 'metadata.k', 'type');
      await ok({ metadata: null });
      await ok({ metadata: {} });
    });

    it('session_id and user: at most 256 characters', async () => {
      expect((await ok({ session_id: 's'.repeat(256) })).config.session_id).toHaveLength(256);
      await bad({ session_id: 's'.repeat(257) }, 'session_id', 'maxLength');
      expect((await ok({ user: 'u'.repeat(256) })).config.user).toHaveLength(256);
      await bad({ user: 'u'.repeat(257) }, 'user', 'maxLength');
      await bad({ user: 7 }, 'user', 'type');
    });

    it('stop_server_tools_when: at least one condition of a known shape', async () => {
      const conds = [{ type: 'step_count_is', step_count: 3 }];
      expect((await ok({ stop_server_tools_when: conds })).config.stop_server_tools_when).toEqual(conds);
      await ok({ stop_server_tools_when: [{ type: 'max_cost', max_cost_in_dollars: 0.5 }, { type: 'step_count_is', step_count: 1 }] });
      await bad({ stop_server_tools_when: [] }, 'stop_server_tools_when', 'minItems');
      await bad({ stop_server_tools_when: [{ type: 'never' }] }, 'stop_server_tools_when');
      await bad({ stop_server_tools_when: [{ type: 'step_count_is', step_count: 0 }] }, 'stop_server_tools_when[0].step_count', 'minimum');
      await bad({ stop_server_tools_when: [{ type: 'max_cost', max_cost_in_dollars: 0 }] }, 'stop_server_tools_when[0].max_cost_in_dollars');
      await bad({ stop_server_tools_when: 'soon' }, 'stop_server_tools_when', 'type');
    });

    it('enums: include, modalities, service_tier, truncation, route, tool_choice', async () => {
      await ok({ include: ['file_search_call.results', 'message.input_image.image_url', 'computer_call_output.output.image_url', 'reasoning.encrypted_content', 'code_interpreter_call.outputs'] });
      await ok({ include: null });
      await bad({ include: ['everything'] }, 'include[0]', 'enum');
      await ok({ modalities: ['text', 'image'] });
      await bad({ modalities: ['smell'] }, 'modalities[0]', 'enum');
      for (const tier of ['auto', 'default', 'flex', 'priority', 'scale', null]) await ok({ service_tier: tier });
      await bad({ service_tier: 'turbo' }, 'service_tier', 'enum');
      for (const tr of ['auto', 'disabled', null]) await ok({ truncation: tr });
      await bad({ truncation: 'middle' }, 'truncation', 'enum');
      for (const r of ['fallback', 'sort', null]) await ok({ route: r });
      await bad({ route: 'random' }, 'route', 'enum');
      await ok({ tool_choice: 'auto' });
      await bad({ tool_choice: 'sometimes' }, 'tool_choice');
    });

    it('numbers and integers: penalties, temperature, top_p, top_k, top_logprobs, max_output_tokens, max_tool_calls', async () => {
      const v = await ok({ frequency_penalty: 0.5, presence_penalty: null, temperature: 0.7, top_p: 0.9, top_k: 40, top_logprobs: 5, max_output_tokens: 100, max_tool_calls: 3 });
      expect(v.config).toEqual({ frequency_penalty: 0.5, presence_penalty: null, temperature: 0.7, top_p: 0.9, top_k: 40, top_logprobs: 5, max_output_tokens: 100, max_tool_calls: 3 });
      await bad({ frequency_penalty: 'high' }, 'frequency_penalty', 'type');
      await bad({ presence_penalty: 'low' }, 'presence_penalty', 'type');
      await bad({ temperature: 'hot' }, 'temperature', 'type');
      await bad({ top_p: 'x' }, 'top_p', 'type');
      await bad({ top_k: 1.5 }, 'top_k', 'type');
      await bad({ top_logprobs: 'all' }, 'top_logprobs', 'type');
      await bad({ max_output_tokens: 'ten' }, 'max_output_tokens', 'type');
      await bad({ max_tool_calls: 2.5 }, 'max_tool_calls', 'type');
    });

    it('objects, booleans and strings: provider, reasoning, prompt, text, plugins, tools, cache_control, debug, image_config, trace, and friends', async () => {
      const v = await ok({
        models: ['a/x', 'b/y'],
        background: false,
        parallel_tool_calls: true,
        previous_response_id: null,
        prompt_cache_key: 'k',
        prompt_cache_options: { mode: 'explicit', ttl: '5m' },
        safety_identifier: 'sid',
        text: { format: { type: 'json_object' }, verbosity: 'low' },
        plugins: [{ id: 'web', enabled: true, max_results: 3 }],
        cache_control: { type: 'ephemeral' },
        debug: { echo_upstream_body: true },
        image_config: { aspect_ratio: '16:9' },
        prompt: { id: 'pmpt_1', variables: { a: 1 } },
      });
      // `prompt` is per-call content: dropped like input.
      expect(v.config.prompt).toBeUndefined();
      expect(v.config).toMatchObject({ models: ['a/x', 'b/y'], background: false, plugins: [{ id: 'web', enabled: true, max_results: 3 }], cache_control: { type: 'ephemeral' } });
      await bad({ instructions: 5 }, 'instructions', 'type');
      await bad({ model: '' }, 'model', 'minLength');
      await bad({ models: 'a/x' }, 'models', 'type');
      await bad({ background: 'yes' }, 'background', 'type');
      await bad({ parallel_tool_calls: 'yes' }, 'parallel_tool_calls', 'type');
      await bad({ provider: { allow_fallbacks: 'no' } }, 'provider');
      await bad({ reasoning: { effort: 'extreme' } }, 'reasoning.effort', 'enum');
      await bad({ prompt: { variables: {} } }, 'prompt');
      await bad({ text: 'json' }, 'text', 'type');
      await bad({ plugins: [{ enabled: true }] }, 'plugins[0].id', 'required');
      await bad({ tools: [{ name: 'f' }] }, 'tools[0].type', 'required');
      await bad({ tools: 'all' }, 'tools', 'type');
      await bad({ cache_control: {} }, 'cache_control.type', 'required');
      await bad({ debug: { echo_upstream_body: 'yes' } }, 'debug.echo_upstream_body', 'type');
      await bad({ trace: 'x' }, 'trace', 'type');
      await bad({ session_id: 1 }, 'session_id', 'type');
      await bad({ stream: 'yes' }, 'stream', 'type');
      await bad({ input: 5 }, 'input');
    });
  });

  describe('chat/completions twin: the chat limits of the spec Limits table', () => {
    const chat = (body: Record<string, unknown>) => save(slug('lim'), { model: 'm/x', ...body }, 'chat/completions');
    const inside = async (body: Record<string, unknown>) => expectStatus(await chat(body), 200);
    const outside = async (body: Record<string, unknown>, field: string, rule: string) => expectError(await chat(body), 400, { field, rule });

    it('stop: up to 4 sequences', async () => {
      await inside({ stop: ['a', 'b', 'c', 'd'] });
      await inside({ stop: 'END' });
      await outside({ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', 'maxItems');
    });

    it('frequency_penalty and presence_penalty: -2.0 to 2.0', async () => {
      for (const f of ['frequency_penalty', 'presence_penalty']) {
        await inside({ [f]: -2 });
        await inside({ [f]: 2 });
        await outside({ [f]: -2.01 }, f, 'minimum');
        await outside({ [f]: 2.01 }, f, 'maximum');
      }
    });

    it('temperature: 0 to 2; top_p: 0 to 1; top_logprobs: 0 to 20', async () => {
      await inside({ temperature: 0 });
      await inside({ temperature: 2 });
      await outside({ temperature: -0.01 }, 'temperature', 'minimum');
      await outside({ temperature: 2.01 }, 'temperature', 'maximum');
      await inside({ top_p: 0 });
      await inside({ top_p: 1 });
      await outside({ top_p: -0.01 }, 'top_p', 'minimum');
      await outside({ top_p: 1.01 }, 'top_p', 'maximum');
      await inside({ top_logprobs: 0 });
      await inside({ top_logprobs: 20 });
      await outside({ top_logprobs: -1 }, 'top_logprobs', 'minimum');
      await outside({ top_logprobs: 21 }, 'top_logprobs', 'maximum');
    });

    it('messages: at least 1 message when given; metadata, session_id, user and stop_server_tools_when limits as in the presets body', async () => {
      await inside({ messages: [{ role: 'user', content: 'hi' }] });
      await outside({ messages: [] }, 'messages', 'minItems');
      await inside({ metadata: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v'])) });
      await outside({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata', 'maxProperties');
      await outside({ metadata: { k: 'v'.repeat(513) } }, 'metadata.k', 'maxLength');
      await inside({ session_id: 's'.repeat(256), user: 'u'.repeat(256) });
      await outside({ session_id: 's'.repeat(257) }, 'session_id', 'maxLength');
      await outside({ user: 'u'.repeat(257) }, 'user', 'maxLength');
      await outside({ stop_server_tools_when: [] }, 'stop_server_tools_when', 'minItems');
    });
  });

  describe('concurrent edits never produce two versions with the same number', () => {
    const fire = async (s: string, count: number) => {
      const results = await Promise.all(Array.from({ length: count }, (_, i) => save(s, { model: `m/concurrent-${i}`, instructions: `edit ${i}` })));
      for (const r of results) {
        expect([200, 409], JSON.stringify(r.body)).toContain(r.status);
        if (r.status === 409) expectError(r, 409);
      }
      return results.filter((r) => r.status === 200);
    };

    const check = async (s: string, expectedTotal: number, succeeded: Array<{ body: any }>) => {
      const numbers = succeeded.map((r) => r.body.data.designated_version.version);
      expect(new Set(numbers).size).toBe(numbers.length);
      const versions = await t.call('GET', `/presets/${s}/versions?limit=100`);
      expect(versions.body.total_count).toBe(expectedTotal);
      const listed = versions.body.data.map((v: { version: number }) => v.version);
      expect(listed).toEqual(Array.from({ length: expectedTotal }, (_, i) => i + 1));
      // Every successful reply describes a stored version, and the designated one is the newest.
      const byNumber = new Map(versions.body.data.map((v: { version: number }) => [v.version, v]));
      for (const r of succeeded) expect(byNumber.get(r.body.data.designated_version.version)).toEqual(r.body.data.designated_version);
      const current = await t.call('GET', `/presets/${s}`);
      expect(current.body.data.designated_version.version).toBe(expectedTotal);
    };

    it('10 parallel POSTs on a new slug', async () => {
      const s = slug('race-new');
      const ok = await fire(s, 10);
      expect(ok.length).toBeGreaterThanOrEqual(1);
      await check(s, ok.length, ok);
      expect(new Set(ok.map((r) => r.body.data.id)).size).toBe(1);
    });

    it.runIf(backend === 'postgres')('an edit that collides with another transaction gets 409 and leaves no trace', async () => {
      const s = slug('collide');
      const created = await save(s, { model: 'm/base' });
      expectStatus(created, 200);
      // Another writer holds version 2 of this preset in an open transaction.
      const other = new pg.Client({ connectionString: t.databaseUrl });
      await other.connect();
      try {
        await other.query('begin');
        const now = new Date().toISOString();
        await other.query(
          `insert into preset_versions (id, preset_id, version, config, system_prompt, creator_id, created_at, updated_at) values ($1, $2, 2, '{}'::jsonb, null, 'other', $3, $3)`,
          [randomUUID(), created.body.data.id, now],
        );
        const pending = save(s, { model: 'm/loser' });
        await sleep(150);
        await other.query('commit');
        const res = await pending;
        expectError(res, 409);
      } finally {
        await other.end();
      }
      const versions = await t.call('GET', `/presets/${s}/versions`);
      expect(versions.body.data.map((v: { version: number; creator_id: string }) => [v.version, v.creator_id === 'other'])).toEqual([
        [1, false],
        [2, true],
      ]);
      // A retry succeeds with the next number.
      const retry = await save(s, { model: 'm/retry' });
      expectStatus(retry, 200);
      expect(retry.body.data.designated_version.version).toBe(3);
    });

    it('10 parallel POSTs on an existing slug, three rounds', async () => {
      const s = slug('race-old');
      expectStatus(await save(s, { model: 'm/base' }), 200);
      let total = 1;
      const all: Array<{ body: any }> = [];
      for (let round = 0; round < 3; round++) {
        const ok = await fire(s, 10);
        expect(ok.length).toBeGreaterThanOrEqual(1);
        total += ok.length;
        all.push(...ok);
      }
      await check(s, total, all);
    });
  });
});
